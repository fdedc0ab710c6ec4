// A RUN step as a box; see build_run.h.
#include "cli/build_run.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include "cli/box_client.h"
#include "cli/box_options.h"
#include "cli/spec_builder.h"
#include "cli/volume_use.h"
#include "oci/upper_layer.h"
#include "runtime/launcher.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"
#include "runtime/userns.h"

namespace kern::cli {
namespace {
namespace build_run_parts {

// Puts `fd` on `target` (0, 1, 2) for the step, and the original back afterwards.
class Redirect {
 public:
  Redirect(int target, int fd) : target_(target) {
    saved_ = ::fcntl(target, F_DUPFD_CLOEXEC, 3);
    if (saved_ >= 0 && fd >= 0) ::dup2(fd, target);
  }
  ~Redirect() {
    if (saved_ >= 0) {
      ::dup2(saved_, target_);
      ::close(saved_);
    }
  }
  Redirect(const Redirect&) = delete;
  Redirect& operator=(const Redirect&) = delete;

 private:
  int target_;
  int saved_ = -1;
};

Result<UniqueFd> memfd_with(const std::string& name, std::string_view data) {
  int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return fail_errno("memfd_create " + name);
  UniqueFd f(fd);
  KERN_TRY(sys::write_all(fd, data, name));
  if (::lseek(fd, 0, SEEK_SET) != 0) return fail_errno("lseek " + name);
  return f;
}

// Runs `fn` in a child in a new user namespace mapped as a --uid-range box is (0 -> the user,
// 1..N -> the user's subordinate ids), where the files such a box wrote are root's and its
// users' as the box saw them, all readable and removable. `fn`'s text (or its error's) comes
// back through a pipe.
Result<std::string> in_box_userns(const std::function<Result<std::string>()>& fn) {
  UniqueFd go_w, out_w;
  KERN_TRY_ASSIGN(UniqueFd go_r, sys::make_pipe(O_CLOEXEC, &go_w));
  KERN_TRY_ASSIGN(UniqueFd out_r, sys::make_pipe(O_CLOEXEC, &out_w));
  UniqueFd ready_w;
  KERN_TRY_ASSIGN(UniqueFd ready_r, sys::make_pipe(O_CLOEXEC, &ready_w));
  pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork");
  if (pid == 0) {
    go_w.reset();
    out_r.reset();
    ready_r.reset();
    char c = ::unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
    (void)sys::write_all_raw(ready_w.get(), &c, 1);
    if (c != 'u') ::_exit(2);
    if (::read(go_r.get(), &c, 1) != 1 || c != 'g') ::_exit(3);
    Result<std::string> r = fn();
    std::string msg = r ? "ok " + *r : "error " + r.error().what();
    (void)sys::write_all_raw(out_w.get(), msg.data(), msg.size());
    ::_exit(r ? 0 : 1);
  }
  go_r.reset();
  out_w.reset();
  ready_w.reset();
  auto reap = [pid] {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  };
  char c = 0;
  if (::read(ready_r.get(), &c, 1) != 1 || c != 'u') {
    reap();
    return fail(ErrorKind::setup, 0, "unshare(CLONE_NEWUSER) to read the step's files failed");
  }
  Status mapped = write_id_maps(pid, ::getuid(), ::getgid(), true);
  c = mapped ? 'g' : 'x';
  (void)sys::write_all_raw(go_w.get(), &c, 1);
  go_w.reset();
  auto text = sys::read_all(out_r.get(), size_t{1} << 20, "the reader's answer");
  reap();
  if (!mapped) return fail(std::move(mapped).error());
  if (!text) return fail(std::move(text).error());
  if (text->rfind("ok ", 0) == 0) return text->substr(3);
  return fail(ErrorKind::setup, 0, text->rfind("error ", 0) == 0 ? text->substr(6) : "the step's files could not be read");
}

// Whether overlayfs takes a directory of the file system at `path` as its upper layer: not one
// of FUSE (EACCES at the mount, with bindfs), a network file system or overlayfs itself (the
// kernel's "not supported as upperdir": a store inside a container's root). Unknown: yes, and
// the mount says.
bool holds_an_upper(const std::string& path) {
  struct statfs fs;
  if (::statfs(path.c_str(), &fs) != 0) return true;
  switch (static_cast<uint32_t>(fs.f_type)) {
    case FUSE_SUPER_MAGIC:
    case NFS_SUPER_MAGIC:
    case SMB_SUPER_MAGIC:
    case CIFS_SUPER_MAGIC:
    case SMB2_SUPER_MAGIC:
    case V9FS_MAGIC:
    case CEPH_SUPER_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
      return false;
    default:
      return true;
  }
}

// The store whose staging dir holds the step's upper directory: the image store, or, when its
// file system cannot hold an overlay upper, a store of scratch dirs in the runtime dir (a tmpfs
// in a login session), whose stale dirs a crashed build left are removed first.
Result<std::optional<oci::Store>> upper_store(const oci::Store& images) {
  if (holds_an_upper(images.root())) return std::optional<oci::Store>();
  KERN_TRY_ASSIGN(std::string runtime, paths::runtime_dir());
  if (!holds_an_upper(runtime)) return std::optional<oci::Store>();
  KERN_TRY_ASSIGN(oci::Store s, oci::Store::open(true, runtime + "/build-upper"));
  s.clean_stale_staging();
  return std::optional<oci::Store>(std::move(s));
}

}  // namespace build_run_parts
}  // namespace

Result<RunResult> run_step(const oci::Store& store, const RunStep& step, int layer_dirfd, const std::string& layer_name,
                           std::optional<int64_t> clamp_mtime) {
  using namespace build_run_parts;
  BoxOptions o;
  o.image = step.image;
  o.pull = "never";
  o.command = step.argv;
  o.env = step.env;
  o.workdir = step.workdir;
  o.user = step.user;
  o.net = step.network;
  o.volumes = step.volumes;
  o.docker.entrypoint = "";  // the image's ENTRYPOINT never wraps a RUN
  o.docker.secrets = step.secrets;
  o.quiet = true;
  // A step run as another user than root needs the ids of the subordinate range, as a box with
  // that -u does.
  o.uid_range = !(step.user == "0" || step.user == "root" || step.user == "0:0" || step.user == "root:root");
  KERN_TRY_ASSIGN(BuiltBox built, build_box_spec(o, kBoxClient));
  built.spec.upper_on_host = true;
  built.spec.image_tmp = true;

  KERN_TRY_ASSIGN(std::optional<oci::Store> elsewhere, upper_store(store));
  KERN_TRY_ASSIGN(oci::Staging scratch, (elsewhere ? *elsewhere : store).begin_staging());
  UniqueFd in, out;
  if (step.stdin_data) {
    KERN_TRY_ASSIGN(in, memfd_with("kern-build-stdin", *step.stdin_data));
  } else {
    KERN_TRY_ASSIGN(in, sys::open_at(AT_FDCWD, "/dev/null", O_RDONLY));
  }
  if (step.quiet) {
    int fd = ::memfd_create("kern-build-output", MFD_CLOEXEC);
    if (fd < 0) return fail_errno("memfd_create kern-build-output");
    out = UniqueFd(fd);
  }
  Result<int> code = 0;
  {
    Redirect r0(STDIN_FILENO, in.get());
    Redirect r1(STDOUT_FILENO, out.valid() ? out.get() : -1);
    Redirect r2(STDERR_FILENO, out.valid() ? out.get() : -1);
    code = with_box_volumes(built.spec, [&] { return run_box(built.spec, nullptr, scratch.path()); });
  }
  if (!code) return fail(std::move(code).error());
  RunResult res;
  res.exit_code = *code;
  if (*code != 0) {
    if (out.valid() && ::lseek(out.get(), 0, SEEK_SET) == 0) {
      auto text = sys::read_all(out.get(), size_t{1} << 20, "the step's output");
      if (text) (void)sys::write_all(STDERR_FILENO, *text, "stderr");
    }
    return res;
  }
  KERN_TRY_ASSIGN(UniqueFd upper, sys::open_at(scratch.fd(), "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  KERN_TRY_ASSIGN(UniqueFd layer, sys::open_at(layer_dirfd, layer_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  oci::UpperSource src;
  src.upper_fd = upper.get();
  src.lower_fd = step.lower_fd;
  src.stubs = oci::box_mount_stubs();
  // /tmp is the image's own in a RUN: what the step left there is kept, as Docker keeps it.
  std::erase(src.stubs, std::string("tmp"));
  src.host_uid = ::getuid();
  src.host_gid = ::getgid();
  oci::LowerOwners owners;
  if (!step.owners_path.empty()) {
    KERN_TRY_ASSIGN(owners, oci::read_lower_owners(step.owners_path));
  }
  src.lower_owners = &owners;
  auto write_layer = [&]() -> Result<std::string> {
    KERN_TRY_ASSIGN(oci::LayerTar tar, oci::LayerTar::create(layer.get(), clamp_mtime));
    KERN_TRY_ASSIGN(oci::UpperLayerStats stats, oci::write_upper_layer(src, tar));
    KERN_TRY_ASSIGN(oci::LayerDigest d, tar.finish());
    return d.digest + " " + std::to_string(d.size) + " " + std::to_string(stats.entries);
  };
  std::string answer;
  if (!built.spec.uid_range) {
    KERN_TRY_ASSIGN(answer, write_layer());
  } else {
    // A step run as another user wrote files of ids the user has only through the subordinate
    // range: read, and removed, where they are the box's own.
    src.host_uid = 0;
    src.host_gid = 0;
    KERN_TRY_ASSIGN(answer, in_box_userns([&]() -> Result<std::string> {
      auto r = write_layer();
      (void)sys::remove_tree(scratch.fd(), "upper");
      (void)sys::remove_tree(scratch.fd(), "work");
      return r;
    }));
  }
  size_t a = answer.find(' '), b = answer.find(' ', a + 1);
  res.layer.digest = answer.substr(0, a);
  res.layer.size = std::stoull(answer.substr(a + 1, b - a - 1));
  res.layer_written = std::stoull(answer.substr(b + 1)) > 0;
  return res;
}

}  // namespace kern::cli
