// The box registry; see registry.h.
#include "runtime/registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string_view>
#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

constexpr int kFreshClaimSeconds = 10;  // an empty claim (no record yet) is someone's start

// A record (or, from an older kern, a directory holding state.json) whose launcher is gone, or an
// empty claim older than a start takes.
bool stale_entry(const std::string& path) {
  auto rec = read_box_record(path);
  if (rec) return !launcher_alive(*rec);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return true;
  return ::time(nullptr) - st.st_mtime > kFreshClaimSeconds;
}

void reap_entry(const std::string& path) { (void)sys::remove_tree(AT_FDCWD, path); }

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
  for (const auto& d : {boxes, scratch})
    if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + d + "\"");
  std::string path = boxes + "/" + name;
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return BoxRegistration(path, scratch, UniqueFd(fd));
    if (errno != EEXIST) return fail_errno("open \"" + path + "\"");
    if (!stale_entry(path))
      return fail(Error(ErrorKind::usage, 0, "a box named \"" + name + "\" is already running")
                      .with_hint("choose another name, or stop it with: kern stop " + name));
    reap_entry(path);
  }
  return fail(ErrorKind::setup, EEXIST, "claim box name \"" + name + "\"");
}

BoxRegistration::BoxRegistration(BoxRegistration&& o) noexcept
    : path_(std::move(o.path_)), scratch_(std::move(o.scratch_)), fd_(std::move(o.fd_)) {
  o.path_.clear();
}

BoxRegistration::~BoxRegistration() { release(); }

void BoxRegistration::release() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  path_.clear();
  fd_.reset();
}

std::string record_to_json(const BoxRecord& r) {
  nlohmann::json j = {{"name", r.name},       {"launcher_pid", r.launcher_pid},
                      {"launcher_start", r.launcher_start}, {"init_pid", r.init_pid},
                      {"cgroup", r.cgroup},   {"image", r.image},
                      {"command", r.command}, {"started_unix", r.started_unix},
                      {"kind", r.kind}};
  return j.dump();
}

Status BoxRegistration::write(const BoxRecord& record) {
  // Written in place into the claimed file, never renamed over it: on ext4 a rename over a file
  // forces the new data's blocks to be allocated at once (and freeing them later costs a discard
  // on disks mounted so), while a short-lived record written in place is gone before delayed
  // allocation ever gives it a block. A reader racing the write sees a record it cannot parse
  // yet, which counts as a box still starting.
  std::string text = record_to_json(record) + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd_.get(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail_errno("write \"" + path_ + "\"");
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(fd_.get(), static_cast<off_t>(text.size())) != 0) return fail_errno("ftruncate \"" + path_ + "\"");
  return {};
}

Result<BoxRecord> read_box_record(const std::string& path) {
  std::string file = path;
  auto read = sys::read_file(AT_FDCWD, file, 1 << 16);
  if (!read && read.error().sys_errno() == EISDIR) {  // an older kern's entry: a directory
    file = path + "/state.json";
    read = sys::read_file(AT_FDCWD, file, 1 << 16);
  }
  KERN_TRY_ASSIGN(std::string text, std::move(read));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail(ErrorKind::internal, 0, "malformed \"" + file + "\"");
  BoxRecord r;
  r.name = j.value("name", "");
  r.launcher_pid = j.value("launcher_pid", 0);
  r.launcher_start = j.value("launcher_start", uint64_t{0});
  r.init_pid = j.value("init_pid", 0);
  r.cgroup = j.value("cgroup", "");
  r.image = j.value("image", "");
  r.command = j.value("command", "");
  r.started_unix = j.value("started_unix", int64_t{0});
  r.kind = j.value("kind", "box");
  return r;
}

std::vector<BoxRecord> list_boxes(const std::string& runtime_dir, bool reap) {
  std::vector<BoxRecord> out;
  std::string boxes = runtime_dir + "/boxes";
  DIR* d = ::opendir(boxes.c_str());
  if (!d) return out;
  std::vector<std::string> stale;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    std::string path = boxes + "/" + e->d_name;
    auto rec = read_box_record(path);
    if (rec && launcher_alive(*rec)) {
      out.push_back(*rec);
    } else if (reap && stale_entry(path)) {
      stale.push_back(path);
    }
  }
  ::closedir(d);
  for (const auto& p : stale) reap_entry(p);
  return out;
}

}  // namespace kern
