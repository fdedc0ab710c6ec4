// `kern cp [-a] [-L] NAME:SRC DST|-` and `kern cp [-a] [-L] SRC|- NAME:DST`: docker cp for running
// boxes. The box's side runs in a joiner inside the box (runtime/box_copy.h), never through a
// host path of the box's; the tar stream between the two sides is oci/tar_copy.h's, and where a
// tree lands is docker cp's table (oci/copy_paths.h). Exit codes as the other verbs: 1 when the
// copy failed, 2 for a bad command line.
#include <unistd.h>

#include "cli/box_lookup.h"
#include "cli/cp_args.h"
#include "cli/verb.h"
#include "oci/copy_paths.h"
#include "oci/tar_copy.h"
#include "runtime/box_copy.h"
#include "runtime/box_exec.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace cp_verb {

struct CpOptions {
  bool archive = false, follow = false;
  std::string src, dst;
};
CpOptions g_cp;

// A running box's ExecTarget, or why there is none: no such box, or one that is not running
// (kern cp reaches a running box's file system only, through its namespaces).
Result<ExecTarget> running_box(const std::string& rt, const std::string& name) {
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, name));
  if (record_exited(rec))
    return fail(Error(ErrorKind::config, 0, "the box \"" + name + "\" is not running")
                    .with_hint("kern cp copies into and out of running boxes only (docker cp also reaches a "
                               "stopped container's files)"));
  return find_exec_target(rt, name);
}

// kern cp -a: an id through the box's map, read from the process the joiner goes in through.
oci::IdMap id_map(const ExecTarget& t, bool outward) {
  std::string proc = "/proc/" + std::to_string(t.join_pid) + "/";
  auto uids = sys::read_file(AT_FDCWD, proc + "uid_map", 65536);
  auto gids = sys::read_file(AT_FDCWD, proc + "gid_map", 65536);
  std::string u = uids ? *uids : "", g = gids ? *gids : "";
  return [u, g, outward](uint32_t id, bool is_gid) { return oci::map_id(is_gid ? g : u, id, outward); };
}

// Which side's failure is the copy's: the writer's, unless it only saw the reader go (EPIPE);
// then the reader's. Second: whether it is the writer's.
std::pair<Error, bool> pick_failure(std::optional<Error> writer, std::optional<Error> reader) {
  if (writer && writer->sys_errno() != EPIPE) return {std::move(*writer), true};
  if (reader) return {std::move(*reader), false};
  return {std::move(*writer), true};
}

// The hint for a failure of the box's side or the host's, of the side that writes to disk (the
// destination) or the one that reads from it.
std::string hint_for(const Error& e, bool from_box, bool destination, const std::string& name) {
  switch (e.sys_errno()) {
    case ENOENT:
      if (destination) return "the destination's parent directory must exist" + std::string(from_box ? " in the box" : "");
      return from_box ? "kern exec " + name + " ls -la DIR shows what the box has there" : "no such file on the host";
    case EROFS:
      return from_box ? "the box's file system is read-only there (kern box --read-only): copy into a writable "
                        "mount of the box, such as a --tmpfs"
                      : "the host's file system is read-only there";
    case EACCES:
    case EPERM:
      return from_box ? "inside the box, kern cp acts as the box's root; a file the box cannot write, it cannot either"
                      : "kern cp reads and writes on the host as you";
    case ENOTDIR:
    case EISDIR:
      return "as docker cp: a directory lands in an existing directory (SRC/. for its contents) or as a new one, a "
             "file over a file or into a directory; kern cp - NAME:DIR unpacks into an existing directory";
    case EOVERFLOW:
      return "-a keeps only ids the box's user namespace maps; without -a the files are the receiver's own";
    default:
      // libarchive's secure extraction: "Path contains '..'", "Path is absolute", "Cannot extract
      // through symlink".
      if (destination && (e.message().find(": Path ") != std::string::npos ||
                          e.message().find("through symlink") != std::string::npos))
        return "every entry is written below DST only: a relative name, without \"..\", through no symlink";
      return from_box ? "kern exec " + name + " sh shows the box as kern cp sees it" : "";
  }
}

Result<int> run_cp() {
  using K = CopyEnd::Kind;
  KERN_TRY_ASSIGN(CopyArgs args, copy_args(g_cp.src, g_cp.dst));
  bool into = args.dst.kind == K::box;
  const CopyEnd& box = into ? args.dst : args.src;
  const CopyEnd& host = into ? args.src : args.dst;
  KERN_TRY_ASSIGN(oci::CopyPath box_path, oci::box_copy_path(box.path));
  oci::CopyPath host_path = oci::host_copy_path(host.path);
  bool stream = host.kind == K::stream;
  if (stream && into && ::isatty(STDIN_FILENO) == 1)
    return fail(Error(ErrorKind::usage, 0, "kern cp -: standard input is a terminal, not a tar stream")
                    .with_hint("kern cp - NAME:DIR < file.tar, or tar -c ... | kern cp - NAME:DIR"));
  if (stream && !into && ::isatty(STDOUT_FILENO) == 1)
    return fail(Error(ErrorKind::usage, 0, "kern cp NAME:SRC -: standard output is a terminal")
                    .with_hint("send the tar stream to a file or a pipe: kern cp NAME:SRC - | tar -t"));
  KERN_TRY(oci::tar_copy_ready());
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(ExecTarget target, running_box(rt, box.name));

  const std::string where = " in the box";
  CopySide in_box, on_host;
  if (into) {
    in_box = [&](int fd, const std::function<bool()>& peer_done) {
      oci::UnpackRequest u{box_path, stream, g_cp.archive, {}, peer_done, where};
      return oci::unpack_tree(fd, u);
    };
    on_host = [&](int fd, const std::function<bool()>&) -> Status {
      if (stream) return oci::retar_stream(STDIN_FILENO, fd);
      oci::PackRequest p{host_path, g_cp.follow, g_cp.archive ? id_map(target, false) : oci::IdMap{}, ""};
      return oci::pack_tree(fd, p);
    };
  } else {
    in_box = [&](int fd, const std::function<bool()>&) {
      oci::PackRequest p{box_path, g_cp.follow, {}, where};
      return oci::pack_tree(fd, p);
    };
    on_host = [&](int fd, const std::function<bool()>& peer_done) -> Status {
      if (stream) return oci::relay_stream(fd, STDOUT_FILENO);
      oci::UnpackRequest u{host_path, false, g_cp.archive, g_cp.archive ? id_map(target, true) : oci::IdMap{},
                           peer_done, ""};
      return oci::unpack_tree(fd, u);
    };
  }
  KERN_TRY_ASSIGN(BoxCopyOutcome out, run_box_copy(target, into ? CopyDirection::into_box : CopyDirection::out_of_box,
                                                   in_box, on_host));
  std::optional<Error> host_err, box_err = std::move(out.box);
  if (!out.host) host_err = std::move(out.host).error();
  if (!host_err && !box_err) return 0;
  bool writer_is_box = !into;
  auto [e, from_writer] = writer_is_box ? pick_failure(std::move(box_err), std::move(host_err))
                                        : pick_failure(std::move(host_err), std::move(box_err));
  bool from_box = from_writer == writer_is_box;
  if (e.explicit_hint().empty()) {
    std::string h = hint_for(e, from_box, !from_writer, box.name);
    if (!h.empty()) e.with_hint(h);
  }
  return fail(std::move(e).with_context(std::string(into ? "copying into" : "copying out of") + " box \"" +
                                        box.name + "\""));
}

void register_cp(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("cp", "copy files between a running box and the host (as docker cp)");
  c->add_flag("-a,--archive", g_cp.archive, "keep the source's uid and gid (through the box's id map)");
  c->add_flag("-L,--follow-link", g_cp.follow, "copy what a symlink SRC points to, not the link");
  c->add_option("src", g_cp.src, "NAME:PATH, a host path, or - (a tar on stdin)")->required();
  c->add_option("dst", g_cp.dst, "NAME:PATH, a host path, or - (a tar to stdout)")->required();
  c->callback([&ctx] { ctx.action = run_cp; });
}

const VerbRegistration reg{22, "cp", &register_cp};

}  // namespace cp_verb
}  // namespace
}  // namespace kern::cli
