// Pods and named networks on the host; see pod_store.h.
#include "runtime/pod/pod_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/unique_fd.h"

namespace kern::pod {

const char* kind_word(Kind k) { return k == Kind::pod ? "pod" : "network"; }

std::string kind_dir(const std::string& runtime_dir, Kind k) {
  return runtime_dir + (k == Kind::pod ? "/pods" : "/networks");
}

std::string pod_dir(const std::string& runtime_dir, Kind k, const std::string& name) {
  return kind_dir(runtime_dir, k) + "/" + name;
}

std::string record_json(const PodRecord& r) {
  nlohmann::json labels = nlohmann::json::array();
  for (const auto& [k, v] : r.labels) labels.push_back({k, v});
  nlohmann::json j = {{"name", r.name},
                      {"kind", kind_word(r.kind)},
                      {"id", r.id},
                      {"created_unix", r.created_unix},
                      {"net", r.net},
                      {"publish", r.publish},
                      {"dns", r.dns},
                      {"add_host", r.add_host},
                      {"ports", r.ports},
                      {"labels", labels},
                      {"ns_flags", r.ns_flags},
                      {"uid_range", r.uid_range},
                      {"supervisor_pid", r.supervisor_pid},
                      {"holder_pid", r.holder_pid},
                      {"holder_start", r.holder_start},
                      {"state", r.state}};
  return j.dump() + "\n";
}

Result<PodRecord> parse_record(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return fail(ErrorKind::internal, 0, "a pod record is not a JSON object");
  try {
    PodRecord r;
    r.name = j.at("name").get<std::string>();
    r.kind = j.at("kind").get<std::string>() == "network" ? Kind::network : Kind::pod;
    r.id = j.at("id").get<std::string>();
    r.created_unix = j.at("created_unix").get<int64_t>();
    r.net = j.at("net").get<std::string>();
    r.publish = j.at("publish").get<std::vector<std::string>>();
    r.dns = j.at("dns").get<std::vector<std::string>>();
    r.add_host = j.at("add_host").get<std::vector<std::string>>();
    r.ports = j.at("ports").get<std::vector<std::string>>();
    for (const auto& l : j.at("labels")) r.labels.emplace_back(l.at(0).get<std::string>(), l.at(1).get<std::string>());
    r.ns_flags = j.at("ns_flags").get<int>();
    r.uid_range = j.value("uid_range", false);
    r.supervisor_pid = j.at("supervisor_pid").get<pid_t>();
    r.holder_pid = j.at("holder_pid").get<pid_t>();
    r.holder_start = j.at("holder_start").get<uint64_t>();
    r.state = j.at("state").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorKind::internal, 0, std::string("a pod record is malformed: ") + e.what());
  }
}

Result<PodRecord> read_pod(const std::string& runtime_dir, Kind k, const std::string& name) {
  std::string dir = pod_dir(runtime_dir, k, name);
  auto text = sys::read_file(AT_FDCWD, dir + "/record.json", 1 << 20);
  if (!text) {
    if (text.error().sys_errno() == ENOENT)
      return fail(Error(ErrorKind::usage, 0, std::string("no ") + kind_word(k) + " named \"" + log::sanitize(name) + "\"")
                      .with_hint(std::string("kern ") + kind_word(k) + " ls lists them; kern " + kind_word(k) +
                                 " create NAME makes one"));
    return fail(std::move(text).error());
  }
  KERN_TRY_ASSIGN(PodRecord r, parse_record(*text));
  if (r.state == "running" && !pod_running(dir)) r.state = "stopped";
  return r;
}

Status write_pod(const std::string& dir, const PodRecord& r) {
  // Written beside and renamed over: a reader never sees half a record.
  std::string tmp = dir + "/record.json.tmp";
  KERN_TRY(sys::write_file(AT_FDCWD, tmp, record_json(r), 0600));
  if (::rename(tmp.c_str(), (dir + "/record.json").c_str()) != 0) return fail_errno("rename \"" + tmp + "\"");
  return {};
}

bool pod_running(const std::string& dir) {
  int fd = ::open((dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  UniqueFd owned(fd);
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) return false;  // nobody holds it exclusively
  return errno == EWOULDBLOCK;
}

std::vector<PodRecord> list_pods(const std::string& runtime_dir, Kind k) {
  std::vector<PodRecord> out;
  DIR* d = ::opendir(kind_dir(runtime_dir, k).c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    auto r = read_pod(runtime_dir, k, n);
    if (r) out.push_back(std::move(*r));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const PodRecord& a, const PodRecord& b) { return a.name < b.name; });
  return out;
}

namespace {

// The hosts file opened and locked for a change (the lock goes with the descriptor).
Result<UniqueFd> lock_hosts(const std::string& dir) {
  std::string path = dir + "/hosts";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  UniqueFd owned(fd);
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) return fail_errno("flock \"" + path + "\"");
  return owned;
}

// Rewrites the whole file in place: the boxes' binds name this inode.
Status rewrite(int fd, const std::string& path, const std::string& text) {
  if (::ftruncate(fd, 0) != 0) return fail_errno("ftruncate \"" + path + "\"");
  if (::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return fail_errno("write \"" + path + "\"");
  return {};
}

}  // namespace

Status write_hosts_base(const std::string& dir, const std::string& base) {
  KERN_TRY_ASSIGN(UniqueFd fd, lock_hosts(dir));
  return rewrite(fd.get(), dir + "/hosts", base);
}

Status add_host_name(const std::string& dir, const std::string& name) {
  KERN_TRY_ASSIGN(UniqueFd fd, lock_hosts(dir));
  std::string path = dir + "/hosts";
  if (::lseek(fd.get(), 0, SEEK_SET) < 0) return fail_errno("lseek \"" + path + "\"");
  KERN_TRY_ASSIGN(std::string text, sys::read_all(fd.get(), 1 << 20, path));
  std::string line = "127.0.0.1\t" + name + "\n";
  if (text.find(line) != std::string::npos) return {};
  if (!text.empty() && text.back() != '\n') text += "\n";
  return rewrite(fd.get(), path, text + line);
}

}  // namespace kern::pod
