// The box registry; see registry.h for the locking rules.
#include "runtime/registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

constexpr off_t kOwnerByte = 0;  // held by the launcher for the box's life
constexpr off_t kGateByte = 1;   // held for a moment around every take-over or reap attempt
constexpr size_t kMaxRecord = 1 << 16;

// An OFD lock on one byte: 0, or the errno (EAGAIN when another description holds it).
int lock_byte(int fd, short type, off_t byte, bool wait) {
  struct flock fl = {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = byte;
  fl.l_len = 1;
  while (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) != 0) {
    if (errno != EINTR) return errno == EACCES ? EAGAIN : errno;
  }
  return 0;
}

// Whether some other open file description holds the owner lock (nothing is taken).
bool owner_locked(int fd) {
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kOwnerByte;
  fl.l_len = 1;
  if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) return true;  // cannot tell: never treat as stale
  return fl.l_type != F_UNLCK;
}

// Whether `path` still names the file open on `fd` (a reaper or a releasing owner may have
// unlinked it, and someone else created a new one, between our open and our lock).
bool names_file(const std::string& path, int fd) {
  struct stat a, b;
  if (::fstat(fd, &a) != 0 || ::lstat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

Result<BoxRecord> parse_record(const std::string& text, const std::string& where) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail(ErrorKind::internal, 0, "malformed \"" + where + "\"");
  BoxRecord r;
  r.name = j.value("name", "");
  r.launcher_pid = j.value("launcher_pid", 0);
  r.launcher_start = j.value("launcher_start", uint64_t{0});
  r.init_pid = j.value("init_pid", 0);
  r.cgroup = j.value("cgroup", "");
  r.image = j.value("image", "");
  r.image_digest = j.value("image_digest", "");
  r.uid_range = j.value("uid_range", false);
  r.command = j.value("command", "");
  r.started_unix = j.value("started_unix", int64_t{0});
  r.kind = j.value("kind", "box");
  r.detached = j.value("detached", false);
  r.state = j.value("state", "running");
  r.exit_code = j.value("exit_code", 0);
  r.exited_unix = j.value("exited_unix", int64_t{0});
  r.auto_remove = j.value("auto_remove", false);
  r.restart_policy = j.value("restart_policy", "");
  r.restarts = j.value("restarts", 0u);
  if (auto h = j.find("health"); h != j.end() && h->is_object()) r.health = h->dump();
  if (auto l = j.find("labels"); l != j.end() && l->is_array())
    for (const auto& kv : *l)
      if (kv.is_array() && kv.size() == 2 && kv[0].is_string() && kv[1].is_string())
        r.labels.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
  r.stop_signal = j.value("stop_signal", 15);
  r.stop_timeout = j.value("stop_timeout", 10u);
  if (auto p = j.find("ports"); p != j.end() && p->is_array())
    for (const auto& x : *p)
      if (x.is_string()) r.ports.push_back(x.get<std::string>());
  if (auto v = j.find("volumes"); v != j.end() && v->is_array())
    for (const auto& x : *v)
      if (x.is_string()) r.volumes.push_back(x.get<std::string>());
  if (auto d = j.find("detail"); d != j.end() && d->is_object()) r.detail = d->dump();
  return r;
}

Result<BoxRecord> read_record_fd(int fd, const std::string& where) {
  // A record is a few hundred bytes: the buffer starts small and grows up to kMaxRecord, rather
  // than zeroing 64 KiB at each read (two reads of an empty file at every claim).
  std::string text(1024, '\0');
  size_t done = 0;
  while (done < kMaxRecord) {
    if (done == text.size()) text.resize(std::min(kMaxRecord, text.size() * 4));
    ssize_t n = ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read \"" + where + "\"");
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return parse_record(text, where);
}

Status write_record_fd(int fd, const BoxRecord& record, const std::string& where) {
  std::string text = record_to_json(record) + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail_errno("write \"" + where + "\"");
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0) return fail_errno("ftruncate \"" + where + "\"");
  return {};
}

// A record nobody holds the owner lock of, written by an older kern (which held no lock) whose
// launcher still runs, is that kern's live box: never taken over.
bool older_kern_live(int fd, const std::string& path) {
  auto rec = read_record_fd(fd, path);
  // An exited detached record is written by this kern, whose supervisor may still be finishing.
  return rec && !record_exited(*rec) && launcher_alive(*rec);
}

// An older kern's entry: a directory holding state.json. Stale when its launcher is gone.
bool older_dir_stale(const std::string& path) {
  auto rec = read_box_record(path);
  return !rec || !launcher_alive(*rec);
}

// What a detached box leaves beside its record: the log ring, the socket, and the cgroup of a
// box whose supervisor was SIGKILLed (empty by then: box init died with its parent; rmdir
// removes nothing else). Called with the record's owner lock held, so no new box of the name
// can be making these files meanwhile.
void remove_detached_leftovers(const std::string& runtime_dir, const BoxRecord& rec) {
  if (!rec.detached || !valid_box_name(rec.name)) return;
  ::unlink(detached_log_path(runtime_dir, rec.name).c_str());
  ::unlink(detached_socket_path(runtime_dir, rec.name).c_str());
  // --restart's kept upper, its files the user's own (not made with --uid-range).
  (void)sys::remove_tree(AT_FDCWD, detached_kept_dir(runtime_dir, rec.name));
  if (rec.cgroup.empty() || rec.cgroup.rfind("/sys/fs/cgroup/", 0) != 0) return;
  // Right after the supervisor's death the box's processes may still be on their way out
  // (SIGKILLed by PR_SET_PDEATHSIG): the directory empties within moments.
  for (int i = 0; i < 100 && ::rmdir(rec.cgroup.c_str()) != 0 && errno == EBUSY; ++i) ::usleep(2000);
}

// Unlinks the stale record at `path` (open on `fd`, read-write) if it is still stale once the
// owner lock is ours. Closing `fd` afterwards drops both locks.
void reap_record(const std::string& runtime_dir, const std::string& path, int fd) {
  if (lock_byte(fd, F_WRLCK, kGateByte, true) != 0) return;
  if (lock_byte(fd, F_WRLCK, kOwnerByte, false) != 0) return;
  if (!names_file(path, fd) || older_kern_live(fd, path)) return;
  auto rec = read_record_fd(fd, path);
  if (rec && record_exited(*rec)) return;  // kept until kern rm
  if (rec) remove_detached_leftovers(runtime_dir, *rec);
  ::unlink(path.c_str());
}

Error name_kept(const std::string& name) {
  return Error(ErrorKind::usage, 0, "a detached box named \"" + name + "\" has exited and keeps its name")
      .with_hint("remove it with: kern rm " + name);
}

Error name_taken(const std::string& name) {
  return Error(ErrorKind::usage, 0, "a box named \"" + name + "\" is already running")
      .with_hint("choose another name, or stop it with: kern stop " + name);
}

}  // namespace

bool launcher_alive(const BoxRecord& r) {
  if (r.launcher_pid <= 0) return false;
  uint64_t st = sys::process_start_time(r.launcher_pid);
  return st != 0 && st == r.launcher_start;
}

bool valid_box_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '-' || name[0] == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<BoxRegistration> BoxRegistration::claim(const std::string& runtime_dir, const std::string& name) {
  std::string boxes = runtime_dir + "/boxes";
  std::string scratch = runtime_dir + "/scratch";
  // An older kern's runtime dir may have boxes/ and not scratch/: that one is made every time.
  if (::mkdir(scratch.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + scratch + "\"");
  std::string path = boxes + "/" + name;
  bool made_boxes = false;  // boxes/ is made when the first open finds it missing
  // Each lost round means another process unlinked the file between our open and our lock
  // (a reap, or the previous owner's release): a handful of rounds is plenty.
  for (int attempt = 0; attempt < 16; ++attempt) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    if (!fd && errno == ENOENT && !made_boxes) {
      if (::mkdir(boxes.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + boxes + "\"");
      made_boxes = true;
      --attempt;
      continue;
    }
    if (!fd) {
      if (errno != EISDIR) return fail_errno("open \"" + path + "\"");
      if (!older_dir_stale(path)) return fail(name_taken(name));
      (void)sys::remove_tree(AT_FDCWD, path);
      continue;
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return fail_errno("fstat \"" + path + "\"");
    if (!S_ISREG(st.st_mode)) return fail(ErrorKind::setup, 0, "\"" + path + "\" is not a regular file");
    if (int e = lock_byte(fd.get(), F_WRLCK, kGateByte, true); e != 0)
      return fail(ErrorKind::setup, e, "lock \"" + path + "\"");
    int e = lock_byte(fd.get(), F_WRLCK, kOwnerByte, false);
    if (e == EAGAIN) return fail(name_taken(name));
    if (e != 0) return fail(ErrorKind::setup, e, "lock \"" + path + "\"");
    // `st` is the open file's (a descriptor never changes files): only the path is looked up again.
    struct stat named;
    if (::lstat(path.c_str(), &named) != 0 || named.st_dev != st.st_dev || named.st_ino != st.st_ino) continue;
    // Read once: an empty file (the claim of a new name) has no record to judge.
    if (named.st_size != 0) {
      auto old = read_record_fd(fd.get(), path);
      if (old && !record_exited(*old) && launcher_alive(*old)) return fail(name_taken(name));  // an older kern's
      if (old) {
        if (record_exited(*old)) return fail(name_kept(name));
        remove_detached_leftovers(runtime_dir, *old);
      }
      // Ours. A stale record taken over is emptied: until write() it reads as a box starting.
      // A new one is empty already, and is left untruncated: ext4 takes a truncation to zero
      // as a file being replaced and allocates its blocks at close, which with `discard`
      // costs milliseconds at the unlink of every box's record.
      if (::ftruncate(fd.get(), 0) != 0) return fail_errno("ftruncate \"" + path + "\"");
    }
    (void)lock_byte(fd.get(), F_UNLCK, kGateByte, false);
    return BoxRegistration(path, scratch, std::move(fd));
  }
  return fail(ErrorKind::setup, EAGAIN, "claim box name \"" + name + "\"");
}

BoxRegistration::BoxRegistration(BoxRegistration&& o) noexcept
    : path_(std::move(o.path_)), scratch_(std::move(o.scratch_)), fd_(std::move(o.fd_)) {
  o.path_.clear();
}

BoxRegistration::~BoxRegistration() { release(); }

void BoxRegistration::release() {
  if (path_.empty()) return;
  // The owner lock is still held here, so nobody else can have taken this file over; the path
  // may name another file only if ours was removed by hand, and that one is not ours to remove.
  if (fd_ && names_file(path_, fd_.get())) ::unlink(path_.c_str());
  path_.clear();
  fd_.reset();
}

void BoxRegistration::abandon() {
  path_.clear();
  fd_.reset();
}

Status BoxRegistration::keep_exited(const BoxRecord& record) {
  if (path_.empty()) return fail(ErrorKind::internal, 0, "keep_exited: the registration was released");
  BoxRecord r = record;
  r.state = "exited";
  KERN_TRY(write_record_fd(fd_.get(), r, path_));
  abandon();
  return {};
}

Status BoxRegistration::move_to(const std::string& runtime_dir, const std::string& new_name, const BoxRecord& record) {
  if (path_.empty()) return fail(ErrorKind::internal, 0, "move_to: the registration was released");
  KERN_TRY_ASSIGN(BoxRegistration next, claim(runtime_dir, new_name));
  KERN_TRY(next.write(record));
  release();
  path_ = std::move(next.path_);
  fd_ = std::move(next.fd_);
  next.path_.clear();
  return {};
}

std::string record_to_json(const BoxRecord& r) {
  nlohmann::json j = {{"name", r.name},       {"launcher_pid", r.launcher_pid},
                      {"launcher_start", r.launcher_start}, {"init_pid", r.init_pid},
                      {"cgroup", r.cgroup},   {"image", r.image},
                      {"command", r.command}, {"started_unix", r.started_unix},
                      {"kind", r.kind}};
  if (!r.image_digest.empty()) j["image_digest"] = r.image_digest;
  if (r.uid_range) j["uid_range"] = true;
  if (!r.labels.empty()) j["labels"] = r.labels;
  if (!r.ports.empty()) j["ports"] = r.ports;
  if (!r.volumes.empty()) j["volumes"] = r.volumes;
  if (r.stop_signal != 15) j["stop_signal"] = r.stop_signal;
  if (r.stop_timeout != 10) j["stop_timeout"] = r.stop_timeout;
  if (r.detached) {
    j["detached"] = true;
    j["state"] = r.state;
    j["auto_remove"] = r.auto_remove;
    if (r.state == "exited") {
      j["exit_code"] = r.exit_code;
      j["exited_unix"] = r.exited_unix;
    } else if (r.state == "restarting" || r.restarts > 0) {
      j["exit_code"] = r.exit_code;  // the last box's (--restart)
    }
    if (!r.health.empty()) {
      auto h = nlohmann::json::parse(r.health, nullptr, false);
      if (!h.is_discarded() && h.is_object()) j["health"] = h;
    }
    if (!r.restart_policy.empty()) j["restart_policy"] = r.restart_policy;
    if (r.restarts > 0) j["restarts"] = r.restarts;
    if (!r.detail.empty()) {
      auto d = nlohmann::json::parse(r.detail, nullptr, false);
      if (!d.is_discarded() && d.is_object()) j["detail"] = d;
    }
  }
  // A command's bytes need not be UTF-8: replaced, where the default would throw.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status BoxRegistration::write(const BoxRecord& record) {
  // Written in place into the claimed file, never renamed over it: the owner lock belongs to
  // this file, and on ext4 a rename over a file forces the new data's blocks to be allocated at
  // once (and freeing them later costs a discard on disks mounted so), while a short-lived
  // record written in place is gone before delayed allocation ever gives it a block. A reader
  // racing the write sees a record it cannot parse yet, which counts as a box still starting.
  return write_record_fd(fd_.get(), record, path_);
}

Result<BoxRecord> read_box_record(const std::string& path) {
  std::string file = path;
  auto read = sys::read_file(AT_FDCWD, file, kMaxRecord);
  if (!read && read.error().sys_errno() == EISDIR) {  // an older kern's entry: a directory
    file = path + "/state.json";
    read = sys::read_file(AT_FDCWD, file, kMaxRecord);
  }
  KERN_TRY_ASSIGN(std::string text, std::move(read));
  return parse_record(text, file);
}

namespace {

// The record at `path` as a listing shows it: a live box, or an exited detached one when
// `with_exited`; nothing for a box still starting or a stale record (reaped when `reap`).
std::optional<BoxRecord> listed_record(const std::string& runtime_dir, const std::string& path, bool reap,
                                       bool with_exited) {
  // Read-write: a write lock (for the reap) needs a descriptor open for writing.
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == EISDIR && reap && older_dir_stale(path)) (void)sys::remove_tree(AT_FDCWD, path);
    return std::nullopt;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  if (owner_locked(fd.get()) || older_kern_live(fd.get(), path)) {
    // An empty or half-written record is a box still starting: not listed yet.
    if (auto rec = read_record_fd(fd.get(), path); rec) return *rec;
  } else if (auto rec = read_record_fd(fd.get(), path); rec && record_exited(*rec)) {
    if (with_exited) return *rec;
  } else if (reap) {
    reap_record(runtime_dir, path, fd.get());
  }
  return std::nullopt;
}

std::vector<BoxRecord> list_records(const std::string& runtime_dir, bool reap, bool with_exited) {
  std::vector<BoxRecord> out;
  std::string boxes = runtime_dir + "/boxes";
  DIR* d = ::opendir(boxes.c_str());
  if (!d) return out;
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  for (const auto& n : names)
    if (auto rec = listed_record(runtime_dir, boxes + "/" + n, reap, with_exited)) out.push_back(std::move(*rec));
  return out;
}

}  // namespace

std::optional<BoxRecord> find_box_record(const std::string& runtime_dir, const std::string& name, bool reap) {
  if (!valid_box_name(name)) return std::nullopt;
  auto rec = listed_record(runtime_dir, runtime_dir + "/boxes/" + name, reap, true);
  if (rec && rec->name != name) return std::nullopt;
  return rec;
}

std::vector<BoxRecord> list_boxes(const std::string& runtime_dir, bool reap) {
  return list_records(runtime_dir, reap, false);
}

std::vector<BoxRecord> list_boxes_all(const std::string& runtime_dir, bool reap) {
  return list_records(runtime_dir, reap, true);
}

std::string detached_dir(const std::string& runtime_dir) { return runtime_dir + "/detached"; }
std::string detached_kept_dir(const std::string& runtime_dir, const std::string& name) {
  return runtime_dir + "/kept/" + name;
}

std::string detached_log_path(const std::string& runtime_dir, const std::string& name) {
  return detached_dir(runtime_dir) + "/" + name + ".log";
}
std::string detached_socket_path(const std::string& runtime_dir, const std::string& name) {
  return detached_dir(runtime_dir) + "/" + name + ".sock";
}

namespace {

// The record of box NAME that no process owns (an exited detached box's), open, with its gate and
// owner locks held: what kern rm and kern rename of such a box work on.
Result<UniqueFd> lock_unowned_record(const std::string& path, const std::string& name, const std::string& verb) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return fail(ErrorKind::config, 0, "no box named \"" + name + "\"");
    return fail_errno("open \"" + path + "\"");
  }
  if (int e = lock_byte(fd.get(), F_WRLCK, kGateByte, true); e != 0) return fail(ErrorKind::setup, e, "lock \"" + path + "\"");
  int e = lock_byte(fd.get(), F_WRLCK, kOwnerByte, false);
  if (e == EAGAIN || older_kern_live(fd.get(), path))
    return fail(Error(ErrorKind::usage, 0, "the box \"" + name + "\" is running")
                    .with_hint(verb == "rm" ? "stop it first (kern stop " + name + "), or force it: kern rm -f " + name
                                            : "stop it first (kern stop " + name + ")"));
  if (e != 0) return fail(ErrorKind::setup, e, "lock \"" + path + "\"");
  if (!names_file(path, fd.get())) return fail(ErrorKind::config, 0, "no box named \"" + name + "\"");
  return fd;
}

}  // namespace

Status remove_exited_box(const std::string& runtime_dir, const std::string& name) {
  if (!valid_box_name(name)) return fail(ErrorKind::usage, 0, "invalid box name \"" + log::sanitize(name) + "\"");
  std::string path = runtime_dir + "/boxes/" + name;
  KERN_TRY_ASSIGN(UniqueFd fd, lock_unowned_record(path, name, "rm"));
  if (auto rec = read_record_fd(fd.get(), path); rec) remove_detached_leftovers(runtime_dir, *rec);
  if (::unlink(path.c_str()) != 0) return fail_errno("unlink \"" + path + "\"");
  return {};
}

Status rename_detached_files(const std::string& runtime_dir, const std::string& from, const std::string& to,
                             bool socket) {
  std::vector<std::pair<std::string, std::string>> moves = {
      {detached_log_path(runtime_dir, from), detached_log_path(runtime_dir, to)},
      {detached_kept_dir(runtime_dir, from), detached_kept_dir(runtime_dir, to)}};
  if (socket) moves.emplace_back(detached_socket_path(runtime_dir, from), detached_socket_path(runtime_dir, to));
  for (const auto& [a, b] : moves)
    if (::rename(a.c_str(), b.c_str()) != 0 && errno != ENOENT)
      return fail_errno("rename \"" + a + "\" to \"" + b + "\"");
  return {};
}

Status rename_exited_box(const std::string& runtime_dir, const std::string& name, const std::string& new_name) {
  std::string path = runtime_dir + "/boxes/" + name;
  // The owner lock, as kern rm takes it: a box that starts running again meanwhile is not moved.
  KERN_TRY_ASSIGN(UniqueFd fd, lock_unowned_record(path, name, "rename"));
  KERN_TRY_ASSIGN(BoxRecord rec, read_record_fd(fd.get(), path));
  if (!record_exited(rec)) return fail(ErrorKind::config, 0, "the box \"" + name + "\" is not an exited detached box");
  KERN_TRY_ASSIGN(BoxRegistration next, BoxRegistration::claim(runtime_dir, new_name));
  KERN_TRY(rename_detached_files(runtime_dir, name, new_name, false));
  rec.name = new_name;
  KERN_TRY(next.keep_exited(rec));
  if (::unlink(path.c_str()) != 0) return fail_errno("unlink \"" + path + "\"");
  return {};
}

}  // namespace kern
