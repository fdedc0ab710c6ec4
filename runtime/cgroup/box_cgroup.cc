// The per-box cgroup: create, write the limits, read them back, events, remove. Parent
// (launcher) side only; see box_cgroup.h. Finding the subtree is subtree.cc's job, asking
// systemd for one is systemd_scope.cc's.
#include "runtime/cgroup/box_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "runtime/cgroup/systemd_scope.h"
#include "runtime/sys/human_size.h"
#include "runtime/cgroup/io_throttle.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern {
namespace {

bool has(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A knob of the box's own cgroup: the text, or nullopt with `absent` telling ENOENT apart.
std::optional<std::string> read_knob(int dirfd, const char* name, bool* absent = nullptr) {
  std::string text;
  int e = read_knob_file(dirfd, name, &text);
  if (absent) *absent = e == ENOENT;
  if (e != 0) return std::nullopt;
  return text;
}

KnobReading reading_of(int dirfd, const std::string& name) {
  std::string text;
  int e = read_knob_file(dirfd, name, &text);
  if (e != 0) {
    KnobReading k;
    k.state = e == ENOENT ? KnobReading::absent : KnobReading::unreadable;
    return k;
  }
  return parse_limit_knob(text);
}

// The knob on the box's cgroup and every ancestor below the mount's root.
std::vector<KnobReading> path_readings(int box_fd, const std::string& mount, const std::string& rel,
                                       const char* knob) {
  std::vector<KnobReading> out{reading_of(box_fd, knob)};
  std::string r = rel;
  while (true) {
    size_t p = r.rfind('/');
    if (p == 0 || p == std::string::npos) break;
    r.resize(p);
    out.push_back(reading_of(AT_FDCWD, mount + r + "/" + knob));
  }
  return out;
}

uint64_t field(const std::string& text, std::string_view key) {
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string::npos) e = text.size();
    std::string_view line(text.data() + i, e - i);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ')
      return std::strtoull(std::string(line.substr(key.size() + 1)).c_str(), nullptr, 10);
    i = e + 1;
  }
  return 0;
}

void sleep_us(long us) {
  struct timespec ts{0, us * 1000L};
  ::nanosleep(&ts, nullptr);
}

bool populated(int dirfd) {
  auto ev = read_knob(dirfd, "cgroup.events");
  return !ev || field(*ev, "populated") != 0;
}

// No cgroup for this box: what the policy says to do about it.
Result<std::optional<BoxCgroup>> no_cgroup(CgroupPolicy policy, const std::string& why, const std::string& kind,
                                           const Limits& limits, const DefaultCapsWarning& default_caps_warning) {
  if (policy == CgroupPolicy::best_effort && default_caps_warning && requested_caps(limits).empty() &&
      !default_caps_warning())
    policy = CgroupPolicy::allow_uncapped;  // the same silence as --allow-uncapped
  if (policy == CgroupPolicy::require)
    return fail(Error(ErrorKind::host_unsupported, 0,
                      "--require-limits: no per-box cgroup can be created: " + why)
                    .with_hint("run kern in a delegated cgroup v2 subtree (systemd: "
                               "systemd-run --user --scope -p Delegate=yes kern ...), or drop --require-limits"));
  std::string line = uncapped_warning(policy, limits, kind);
  if (!line.empty()) log::warning(line);
  return std::optional<BoxCgroup>();
}

}  // namespace

std::string requested_caps(const Limits& l) {
  std::vector<std::string> caps;
  if (l.memory_max) caps.push_back("memory.max " + sys::human_size(*l.memory_max));
  if (l.memory_swap_max) caps.push_back("memory.swap.max " + sys::human_size(*l.memory_swap_max));
  if (l.pids_max) caps.push_back("pids.max " + std::to_string(*l.pids_max));
  if (l.cpus) caps.push_back("cpu.max");
  if (!l.cpuset_cpus.empty()) caps.push_back("cpuset.cpus " + l.cpuset_cpus);
  if (!l.cpuset_mems.empty()) caps.push_back("cpuset.mems " + l.cpuset_mems);
  if (!l.io_max.empty()) caps.push_back("io.max");
  std::string out;
  for (const auto& c : caps) out += (out.empty() ? "" : ", ") + c;
  return out;
}

std::string uncapped_warning(CgroupPolicy policy, const Limits& limits, const std::string& kind) {
  std::string what = kind == "run" ? "command" : "box";
  std::string asked = requested_caps(limits);
  // --allow-uncapped and warn_uncapped = false waive the default caps only: a cap that was asked
  // for and cannot be had is always named.
  if (!asked.empty() && policy != CgroupPolicy::require && policy != CgroupPolicy::none)
    return "no cgroup here: " + asked + " not in force, this " + what + " runs uncapped (kern doctor says why)";
  if (policy == CgroupPolicy::best_effort)
    return "no cgroup here: this " + what + " runs without memory, pids or cpu caps (kern doctor says why); "
           "to silence: warn_uncapped = false in kern.toml, or --allow-uncapped";
  return {};
}

Result<std::optional<BoxCgroup>> BoxCgroup::create(const std::string& box_name, const Limits& limits,
                                                   CgroupPolicy policy, const std::string& runtime_dir,
                                                   const DefaultCapsWarning& default_caps_warning) {
  if (policy == CgroupPolicy::none) return std::optional<BoxCgroup>();
  // Where cgroup v2 is mounted is looked up only when no remembered subtree says it.
  auto host = probe_cgroup_self();
  if (!host) return no_cgroup(policy, host.error().what(), "box", limits, default_caps_warning);
  host->runtime_dir = runtime_dir;
  if (host->runtime_dir.empty())
    if (auto dir = paths::runtime_dir()) host->runtime_dir = *dir;
  return create_in(std::move(*host), "box", box_name, limits, policy, default_caps_warning);
}

Result<std::optional<BoxCgroup>> BoxCgroup::create_in(CgroupHost host, const std::string& kind,
                                                      const std::string& name, const Limits& limits,
                                                      CgroupPolicy policy,
                                                      const DefaultCapsWarning& default_caps_warning) {
  if (policy == CgroupPolicy::none) return std::optional<BoxCgroup>();
  std::vector<std::string> extra;
  if (limits.cpus || limits.nice) extra.push_back("cpu");
  if (!limits.cpuset_cpus.empty() || !limits.cpuset_mems.empty()) extra.push_back("cpuset");
  if (!limits.io_max.empty()) extra.push_back("io");

  std::string box_dir = box_cgroup_name(kind, name, host.pid, host.start_time);
  std::string rel, path;
  const bool mount_known = !host.mount.empty();
  std::optional<Subtree> tree = cached_subtree(host, extra);
  if (tree) {
    rel = tree->base + "/" + box_dir;
    path = host.mount + rel;
    if (::mkdir(path.c_str(), 0755) != 0) {
      // The remembered subtree is gone or no longer ours: search again.
      forget_subtree(host);
      tree.reset();
      if (!mount_known) {  // the mount came from the remembered entry too
        host.mount.clear();
        host.self.clear();
      }
    }
  }
  if (!tree) {
    if (host.mount.empty() && !remembered_mount(host)) {
      if (auto located = locate_cgroup_mount(host); !located)
        return no_cgroup(policy, located.error().what(), kind, limits, default_caps_warning);
      remember_mount(host);
    }
    SubtreeResult found = prepare_subtree(host, extra);
    if (!found.subtree) {
      // 3. The systemd user manager, when this process is not in a delegated subtree.
      auto scoped = systemd_subtree(host, extra);
      if (scoped) found.subtree = std::move(*scoped);
      else if (!scoped.error().message().empty()) found.why_not += "; " + scoped.error().what();
    }
    if (!found.subtree) return no_cgroup(policy, found.why_not, kind, limits, default_caps_warning);
    tree = std::move(found.subtree);
    rel = tree->base + "/" + box_dir;
    path = host.mount + rel;
    if (::mkdir(path.c_str(), 0755) != 0) return no_cgroup(policy, "mkdir \"" + path + "\": " + errno_name(errno), kind, limits, default_caps_warning);
    // The own cgroup's leaf move is per process: only a delegated ancestor is worth keeping.
    if (tree->how.rfind("delegated ancestor", 0) == 0) remember_subtree(host, *tree);
  }

  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = "open \"" + path + "\": " + errno_name(errno);
    ::rmdir(path.c_str());
    return no_cgroup(policy, why, kind, limits, default_caps_warning);
  }
  BoxCgroup cg{UniqueFd(fd), path};
  cg.rel_ = rel;
  cg.controllers_ = tree->controllers;
  cg.host_ = std::move(host);

  // Write every limit; a failure is remembered and shows in the read-back, never assumed away.
  std::vector<std::string> failed;
  auto knob = [&](const char* file, const std::string& value, bool optional_file) {
    Status s = sys::write_knob(cg.dir_fd(), file, value);
    if (!s && !(optional_file && s.error().sys_errno() == ENOENT))
      failed.push_back(std::string(file) + " (" + errno_name(s.error().sys_errno()) + ")");
  };
  auto needs = [&](const char* controller, const char* file) {
    if (has(cg.controllers_, controller)) return true;
    failed.push_back(std::string(file) + " (no " + controller + " controller in the subtree)");
    return false;
  };
  knob("memory.max", std::to_string(effective_memory_max(limits)), false);
  // memory.swap.max exists only with swap accounting; without it there is no swap to cap.
  knob("memory.swap.max", std::to_string(effective_swap_max(limits)), !limits.memory_swap_max);
  knob("memory.oom.group", "1", false);
  knob("pids.max", std::to_string(effective_pids_max(limits)), false);
  if (limits.cpus && needs("cpu", "cpu.max"))
    knob("cpu.max", std::to_string(cpu_quota_us(*limits.cpus, cg.host_.cpus)) + " " + std::to_string(kCpuPeriodUs), false);
  if (limits.nice && has(cg.controllers_, "cpu")) knob("cpu.weight.nice", std::to_string(*limits.nice), true);
  if (!limits.cpuset_cpus.empty() && needs("cpuset", "cpuset.cpus")) knob("cpuset.cpus", limits.cpuset_cpus, false);
  if (!limits.cpuset_mems.empty() && needs("cpuset", "cpuset.mems")) knob("cpuset.mems", limits.cpuset_mems, false);
  // io.max takes one device per write.
  if (!limits.io_max.empty() && needs("io", "io.max"))
    for (const IoThrottle& t : limits.io_max) knob("io.max", io_max_line(t), false);

  if (policy == CgroupPolicy::require) {
    Enforcement e = cg.read_back(limits);
    if (!limits_in_force(e)) {
      (void)cg.remove();
      return fail(Error(ErrorKind::host_unsupported, 0,
                        "--require-limits: the caps are not in force in \"" + path + "\" (memory " +
                            verdict_name(e.memory) + ", pids " + verdict_name(e.pids) + ")"));
    }
  }
  if (!failed.empty()) {
    std::string list;
    for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
    log::warning("the box's cgroup " + path + " did not take " + list + ": those caps are not in force");
  }
  return std::optional<BoxCgroup>(std::move(cg));
}

Result<BoxCgroup> BoxCgroup::adopt(const CgroupHost& host, const std::string& rel,
                                   std::vector<std::string> controllers) {
  std::string path = host.mount + rel;
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  BoxCgroup cg{UniqueFd(fd), path};
  cg.rel_ = rel;
  cg.controllers_ = std::move(controllers);
  cg.host_ = host;
  return cg;
}

BoxCgroup::~BoxCgroup() {
  if (dir_.valid() && !removed_) (void)remove();
}

Enforcement BoxCgroup::read_back(const Limits& requested) const {
  Enforcement e;
  e.cgroup_path = path_;
  // The box's own knob decides in the common case; the ancestors are read only when it does not
  // hold the cap (one of them may).
  auto cap = [&](const char* knob, uint64_t want, std::optional<uint64_t>* tightest) {
    KnobReading own = reading_of(dir_.get(), knob);
    if (own.state == KnobReading::value && own.number <= want) {
      *tightest = own.number;
      return Verdict::enforced;
    }
    return cap_verdict(want, path_readings(dir_.get(), host_.mount, rel_, knob), tightest);
  };
  e.memory = cap("memory.max", effective_memory_max(requested), &e.memory_max);
  e.pids = cap("pids.max", effective_pids_max(requested), &e.pids_max);
  if (requested.cpus) {
    bool absent = false;
    auto text = read_knob(dir_.get(), "cpu.max", &absent);
    if (absent) e.cpu = Verdict::not_enforced;
    else if (text) e.cpu = cpu_verdict(requested.cpus, std::string_view(*text), host_.cpus, &e.cpus);
    else e.cpu = Verdict::undetermined;
  }
  if (!requested.cpuset_cpus.empty()) {
    bool absent = false;
    auto text = read_knob(dir_.get(), "cpuset.cpus.effective", &absent);
    if (absent) e.cpuset = Verdict::not_enforced;
    else e.cpuset = cpuset_verdict(requested.cpuset_cpus, text ? std::optional<std::string_view>(*text) : std::nullopt);
  }
  if (!requested.io_max.empty()) {
    bool absent = false;
    auto text = read_knob(dir_.get(), "io.max", &absent);
    e.io = absent ? Verdict::not_enforced
                  : io_max_verdict(requested.io_max, text ? std::optional<std::string_view>(*text) : std::nullopt);
  }
  return e;
}

MemoryEvents BoxCgroup::events() const {
  MemoryEvents ev;
  if (auto t = read_knob(dir_.get(), "memory.events")) {
    ev.valid = true;
    ev.oom = field(*t, "oom");
    ev.oom_kill = field(*t, "oom_kill");
    ev.oom_group_kill = field(*t, "oom_group_kill");
    ev.max = field(*t, "max");
  }
  if (auto t = read_knob(dir_.get(), "pids.events")) {
    ev.valid = true;
    ev.pids_max_hits = field(*t, "max");
  }
  if (auto t = read_knob(dir_.get(), "memory.peak")) {
    KnobReading k = parse_limit_knob(*t);
    if (k.state == KnobReading::value) ev.memory_peak = k.number;
  }
  if (auto t = read_knob(dir_.get(), "cpu.stat")) {
    ev.valid = true;
    ev.cpu_usage_usec = field(*t, "usage_usec");
  }
  return ev;
}

void BoxCgroup::reap_others() const {
  size_t slash = rel_.rfind('/');
  reap_leftovers(host_, rel_.substr(0, slash), rel_.substr(slash + 1));
}

Status BoxCgroup::attach(pid_t pid) const {
  return sys::write_knob(dir_.get(), "cgroup.procs", std::to_string(pid));
}

Status BoxCgroup::remove() {
  if (removed_ || !dir_.valid()) return {};
  removed_ = true;
  // Usually the box is gone by now and the directory goes at once.
  if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
    dir_.reset();
    return {};
  }
  if (populated(dir_.get())) {
    // cgroup.kill (Linux 5.14) kills every process at once, forks in flight included; the
    // fallback signals the listed ones until none is left.
    if (!sys::write_knob(dir_.get(), "cgroup.kill", "1")) {
      for (int round = 0; round < 50; ++round) {
        auto procs = read_knob(dir_.get(), "cgroup.procs");
        if (!procs || procs->empty()) break;
        size_t i = 0;
        while (i < procs->size()) {
          size_t e = procs->find('\n', i);
          if (e == std::string::npos) e = procs->size();
          pid_t p = static_cast<pid_t>(std::strtol(procs->substr(i, e - i).c_str(), nullptr, 10));
          if (p > 0) ::kill(p, SIGKILL);
          i = e + 1;
        }
        sleep_us(1000);
      }
    }
  }
  // Killed processes leave the cgroup as they exit; rmdir says EBUSY until the last one has.
  long waited_us = 0, step = 100;
  while (::rmdir(path_.c_str()) != 0) {
    int err = errno;
    if (err == ENOENT) break;
    if (err != EBUSY || waited_us > 2000000) {
      dir_.reset();
      return fail(Error(ErrorKind::setup, err, "rmdir \"" + path_ + "\""));
    }
    sleep_us(step);
    waited_us += step;
    step = std::min(step * 2, 50000L);
  }
  dir_.reset();
  return {};
}

}  // namespace kern
