// A detached box's upper and its image's tree; see box_upper.h.
#include "cli/box_upper.h"

#include <fcntl.h>
#include <unistd.h>

#include "cli/box_lookup.h"
#include "oci/store_ops.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {

oci::UpperSource BoxUpper::source() const {
  oci::UpperSource s;
  s.upper_fd = upper.get();
  s.lower_fd = lower.get();
  s.stubs = oci::box_mount_stubs();
  s.host_uid = ::getuid();
  s.host_gid = ::getgid();
  s.lower_owners = &owners;
  return s;
}

Result<BoxUpper> open_box_upper(const std::string& name, const std::string& verb) {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, name));
  std::string who = "\"" + rec.name + "\"";
  if (rec.kind == "kernel")
    return fail(Error(ErrorKind::config, 0, who + " is a warm kernel, not a box").with_hint("kern " + verb + " works on detached boxes"));
  if (!rec.detached)
    return fail(Error(ErrorKind::config, 0, "the box " + who + " runs in the foreground: its upper layer is a tmpfs of its own")
                    .with_hint("run it detached (kern box -d) to " + verb + " it"));
  if (rec.image_digest.empty())
    return fail(Error(ErrorKind::config, 0, "the box " + who + " has no image to compare with (a --rootfs box, or one started by an older kern)")
                    .with_hint("kern " + verb + " works on boxes started with --image"));
  if (rec.uid_range)
    return fail(Error(ErrorKind::config, 0, "the box " + who + " runs with --uid-range: its upper layer is a tmpfs of the box, never kept on the host")
                    .with_hint("start it without --uid-range to " + verb + " it"));
  BoxUpper b;
  b.record = rec;
  std::string upper = detached_kept_dir(rt, rec.name) + "/upper";
  auto up = sys::open_at(AT_FDCWD, upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (!up)
    return fail(Error(up.error()).with_hint("a box started by an older kern keeps no upper layer on the host"));
  b.upper = std::move(*up);
  KERN_TRY_ASSIGN(b.store, oci::Store::open(false));
  auto img = oci::lookup_image(b.store, rec.image_digest);
  if (!img)
    return fail(Error(ErrorKind::image, 0, "the image of the box " + who + " (" + rec.image_digest + ") is no longer in the store")
                    .with_hint("kern pull " + rec.image));
  b.image = std::move(*img);
  KERN_TRY_ASSIGN(b.tree_lock, b.store.lock_tree_shared(b.image.tree));
  KERN_TRY_ASSIGN(b.lower, sys::open_at(AT_FDCWD, b.store.tree_path(b.image.tree), O_RDONLY | O_DIRECTORY));
  if (b.image.has_owners) {
    KERN_TRY_ASSIGN(b.owners, oci::read_lower_owners(b.store.owners_path(b.image.tree)));
  }
  return b;
}

}  // namespace kern::cli
