// Anchors the kern_oci library so that it exists before its first real source file.
namespace kern::oci {
int module_anchor() { return 0; }
}  // namespace kern::oci
