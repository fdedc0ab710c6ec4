// Anchors the kern_profiles library so that it exists before its first real source file.
namespace kern::profiles {
int module_anchor() { return 0; }
}  // namespace kern::profiles
