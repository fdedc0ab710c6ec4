// The box registry; see registry.h.
#include "runtime/registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

constexpr int kFreshClaimSeconds = 10;  // a claim without state.json yet is someone's start

bool stale_dir(const std::string& dir) {
  auto rec = read_box_record(dir);
  if (rec) return !launcher_alive(*rec);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return true;
  return ::time(nullptr) - st.st_mtime > kFreshClaimSeconds;
}

void reap_dir(const std::string& dir) {
  // The box's tmpfs was mounted over this directory only inside its own mount namespace: on the
  // host it holds nothing but state.json.
  (void)sys::remove_tree(AT_FDCWD, dir);
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
  if (::mkdir(boxes.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + boxes + "\"");
  std::string dir = boxes + "/" + name;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::mkdir(dir.c_str(), 0700) == 0) return BoxRegistration(dir);
    if (errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
    if (!stale_dir(dir))
      return fail(Error(ErrorKind::usage, 0, "a box named \"" + name + "\" is already running")
                      .with_hint("choose another name, or stop it with: kern stop " + name));
    reap_dir(dir);
  }
  return fail(ErrorKind::setup, EEXIST, "claim box name \"" + name + "\"");
}

BoxRegistration::BoxRegistration(BoxRegistration&& o) noexcept : dir_(std::move(o.dir_)) { o.dir_.clear(); }

BoxRegistration::~BoxRegistration() { release(); }

void BoxRegistration::release() {
  if (dir_.empty()) return;
  ::unlink((dir_ + "/state.json").c_str());
  if (::rmdir(dir_.c_str()) != 0) (void)sys::remove_tree(AT_FDCWD, dir_);
  dir_.clear();
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
  std::string tmp = dir_ + "/state.json.tmp";
  KERN_TRY(sys::write_file(AT_FDCWD, tmp, record_to_json(record) + "\n", 0600));
  if (::rename(tmp.c_str(), (dir_ + "/state.json").c_str()) != 0)
    return fail_errno("rename \"" + tmp + "\"");
  return {};
}

Result<BoxRecord> read_box_record(const std::string& dir) {
  KERN_TRY_ASSIGN(std::string text, sys::read_file(AT_FDCWD, dir + "/state.json", 1 << 16));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail(ErrorKind::internal, 0, "malformed \"" + dir + "/state.json\"");
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
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string dir = boxes + "/" + e->d_name;
    auto rec = read_box_record(dir);
    if (rec && launcher_alive(*rec)) {
      out.push_back(*rec);
    } else if (reap && stale_dir(dir)) {
      reap_dir(dir);
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace kern
