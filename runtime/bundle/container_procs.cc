// container_pids, ps_table and their pure parts (see container_procs.h).
#include "runtime/bundle/container_procs.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>
#include <sstream>

#include "runtime/box_join.h"
#include "runtime/bundle/live_container.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

extern char** environ;

namespace kern::bundle {

namespace {

std::optional<pid_t> to_pid(std::string_view s) {
  pid_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

uint64_t pid_ns_of(pid_t pid) {
  struct stat st;
  if (::stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &st) != 0) return 0;
  return st.st_ino;
}

// Every process under /proc whose pid namespace this user may see.
std::vector<ProcNs> scan_proc() {
  std::vector<ProcNs> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    auto pid = to_pid(e->d_name);
    if (!pid) continue;
    if (uint64_t ns = pid_ns_of(*pid)) out.push_back({*pid, ns});
  }
  ::closedir(d);
  return out;
}

}  // namespace

std::vector<pid_t> pids_in_namespace(const std::vector<ProcNs>& procs, uint64_t ns) {
  std::vector<pid_t> out;
  for (const auto& p : procs)
    if (ns != 0 && p.pid_ns == ns) out.push_back(p.pid);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<pid_t>> parse_cgroup_procs(const std::string& text) {
  std::vector<pid_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto pid = to_pid(line);
    if (!pid) return fail(ErrorKind::internal, EPROTO, "cgroup.procs: \"" + line + "\" is not a pid");
    out.push_back(*pid);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::string> filter_ps_output(const std::string& text, const std::set<pid_t>& pids) {
  std::istringstream in(text);
  std::string header;
  std::getline(in, header);
  size_t column = 0;
  bool found = false;
  {
    std::istringstream h(header);
    std::string word;
    for (size_t i = 0; h >> word; ++i)
      if (word == "PID") {
        column = i;
        found = true;
        break;
      }
  }
  if (!found) return fail(ErrorKind::usage, 0, "kern oci ps: the ps output has no PID column");
  std::string out = header + "\n";
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string word;
    for (size_t i = 0; i <= column && l >> word; ++i) {
    }
    auto pid = to_pid(word);
    if (pid && pids.count(*pid)) out += line + "\n";
  }
  return out;
}

Result<std::vector<pid_t>> container_pids(const StateDir& dir, const std::string& id) {
  KERN_TRY_ASSIGN(LiveContainer c, open_container(dir, id));
  if (!c.pidfd) return std::vector<pid_t>();
  if (!c.record.cgroup.empty()) {
    KERN_TRY_ASSIGN(std::string text, sys::read_file(AT_FDCWD, c.record.cgroup + "/cgroup.procs"));
    return parse_cgroup_procs(text);
  }
  // The container's process is PID 1 of its pid namespace (or a member of the one it joined):
  // its namespace is the container's. It is the workload itself, never one of its children,
  // whose namespaces the workload may have chosen.
  uint64_t ns = pid_ns_of(c.record.pid);
  if (ns == 0) return fail_errno("stat /proc/" + std::to_string(c.record.pid) + "/ns/pid");
  std::vector<pid_t> pids = pids_in_namespace(scan_proc(), ns);
  if (std::find(pids.begin(), pids.end(), c.record.pid) == pids.end()) pids.insert(pids.begin(), c.record.pid);
  return pids;
}

Result<std::string> ps_table(const std::vector<pid_t>& pids, const std::vector<std::string>& options) {
  std::vector<std::string> args = {"ps"};
  if (options.empty()) args.push_back("-ef");
  args.insert(args.end(), options.begin(), options.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  UniqueFd write_end;
  KERN_TRY_ASSIGN(UniqueFd read_end, sys::make_pipe(O_CLOEXEC, &write_end));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), STDOUT_FILENO);
  pid_t child = 0;
  int rc = ::posix_spawnp(&child, "ps", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return fail(ErrorKind::host_unsupported, rc, "kern oci ps: running ps(1)");
  write_end.reset();
  auto out = sys::read_all(read_end.get(), 16 << 20, "the output of ps");
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!out) return fail(std::move(out).error());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(ErrorKind::usage, 0, "kern oci ps: ps(1) refused the options given (exit " +
                                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128) + ")");
  return filter_ps_output(*out, std::set<pid_t>(pids.begin(), pids.end()));
}

}  // namespace kern::bundle
