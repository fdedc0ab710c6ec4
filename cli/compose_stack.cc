// kern compose's verbs on a stack; see compose_stack.h.
#include "cli/compose_stack.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/compose_box_args.h"
#include "cli/pod_verbs.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/pod/pod_store.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

extern char** environ;

namespace kern::cli {
namespace compose_stack_detail {

std::string label(const BoxRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.labels)
    if (k == key) return v;
  return "";
}

bool wanted(const std::vector<std::string>& only, const std::string& name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

Status check_only(const compose::Project& p, const std::vector<std::string>& only) {
  for (const auto& n : only)
    if (p.find(n) == nullptr)
      return fail(Error(ErrorKind::usage, 0, "no service named \"" + log::sanitize(n) + "\" in project \"" + p.name + "\"")
                      .with_hint("kern compose config --services lists them"));
  return {};
}

Status run_ok(const std::vector<std::string>& args, const std::string& what) {
  KERN_TRY_ASSIGN(int rc, run_self(args));
  if (rc != 0) return fail(ErrorKind::setup, 0, what + " failed (kern " + args.front() + " exited " + std::to_string(rc) + ")");
  return {};
}

double now_s() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Waits until the box of `dep` meets `condition` (service_started, service_healthy,
// service_completed_successfully).
Status wait_condition(const std::string& rt, const compose::Project& p, const compose::DependsOn& d, const std::string& who,
                      unsigned wait_s) {
  const compose::Service* s = p.find(d.service);
  std::string box = box_name(p, *s);
  double end = now_s() + wait_s;
  for (;;) {
    auto r = find_box_record(rt, box, false);
    if (!r) return fail(ErrorKind::setup, 0, "service \"" + who + "\" depends on \"" + d.service + "\", whose box is gone");
    bool exited = record_exited(*r);
    if (d.condition == "service_started") {
      return {};
    } else if (d.condition == "service_healthy") {
      std::string status;
      auto j = nlohmann::json::parse(r->health.empty() ? "{}" : r->health, nullptr, false);
      if (j.is_object()) status = j.value("status", "");
      if (!s->healthcheck || s->healthcheck->disable)
        return fail(Error(ErrorKind::config, 0, "service \"" + who + "\" waits for \"" + d.service +
                                                    "\" to be healthy, and it has no healthcheck")
                        .with_hint("give services." + d.service + " a healthcheck, or depend on service_started"));
      if (status == "healthy") return {};
      if (status == "unhealthy" || exited)
        return fail(ErrorKind::setup, 0, "dependency \"" + d.service + "\" of \"" + who + "\" is " +
                                             (exited ? "exited" : "unhealthy"));
    } else if (d.condition == "service_completed_successfully") {
      if (exited && r->exit_code == 0) return {};
      if (exited)
        return fail(ErrorKind::setup, 0, "dependency \"" + d.service + "\" of \"" + who + "\" exited " +
                                             std::to_string(r->exit_code));
    }
    if (now_s() > end)
      return fail(ErrorKind::setup, ETIMEDOUT, "service \"" + who + "\": \"" + d.service + "\" did not reach " +
                                                   d.condition + " within " + std::to_string(wait_s) + " s");
    ::usleep(100000);
  }
}

}  // namespace compose_stack_detail
using namespace compose_stack_detail;

Result<std::vector<const compose::Service*>> start_order(const compose::Project& p) {
  std::vector<const compose::Service*> out;
  std::map<std::string, int> state;  // 1 visiting, 2 done
  std::function<Status(const compose::Service&, const std::string&)> visit = [&](const compose::Service& s,
                                                                                const std::string& path) -> Status {
    int& st = state[s.name];
    if (st == 2) return {};
    if (st == 1) return fail(ErrorKind::config, 0, "depends_on makes a cycle: " + path + " -> " + s.name);
    st = 1;
    for (const auto& d : s.depends_on) {
      const compose::Service* dep = p.find(d.service);
      if (dep == nullptr) {
        if (!d.required) continue;
        return fail(ErrorKind::config, 0, "services." + s.name + ".depends_on: no service \"" + d.service +
                                              "\" (or it is left out by its profiles)");
      }
      KERN_TRY(visit(*dep, path.empty() ? s.name : path + " -> " + s.name));
    }
    state[s.name] = 2;
    out.push_back(&s);
    return {};
  };
  for (const auto& s : p.services) KERN_TRY(visit(s, ""));
  return out;
}

std::vector<BoxRecord> project_boxes(const std::string& runtime_dir, const std::string& project) {
  std::vector<BoxRecord> out;
  for (auto& r : list_boxes_all(runtime_dir, true))
    if (label(r, "com.docker.compose.project") == project) out.push_back(std::move(r));
  return out;
}

Result<int> compose_build(const compose::Project& p, const std::vector<std::string>& only, bool missing_only,
                          bool no_cache) {
  KERN_TRY(check_only(p, only));
  std::optional<oci::Store> store;
  for (const auto& s : p.services) {
    if (!s.build || (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end())) continue;
    if (missing_only) {
      if (!store) {
        KERN_TRY_ASSIGN(oci::Store st, oci::Store::open(false));
        store.emplace(std::move(st));
      }
      if (oci::lookup_image(*store, s.image)) continue;
    }
    const compose::BuildSpec& b = *s.build;
    std::vector<std::string> a = {"build", "-t", s.image};
    for (const auto& t : b.tags) a.insert(a.end(), {"-t", t});
    if (!b.dockerfile.empty())
      a.insert(a.end(), {"-f", b.dockerfile[0] == '/' ? b.dockerfile : b.context + "/" + b.dockerfile});
    for (const auto& [k, v] : b.args) a.insert(a.end(), {"--build-arg", k + "=" + v});
    if (!b.target.empty()) a.insert(a.end(), {"--target", b.target});
    if (!b.network.empty() && b.network != "default") a.insert(a.end(), {"--network", b.network});
    if (no_cache) a.push_back("--no-cache");
    a.push_back(b.context);
    log::note("Service " + s.name + "  Building");
    KERN_TRY_ASSIGN(int rc, run_self(a));
    if (rc != 0) return rc;
  }
  return 0;
}

Result<int> compose_up(const compose::Project& p, const std::vector<std::string>& only, const UpOptions& o) {
  KERN_TRY(check_only(p, only));
  KERN_TRY(compose::check_one_pod(p));
  {
    KERN_TRY_ASSIGN(int built, compose_build(p, only, !o.build, false));
    if (built != 0) return built;
  }
  KERN_TRY_ASSIGN(auto order, start_order(p));
  std::vector<std::vector<std::string>> args;
  bool uid_range = false;
  for (const auto* s : order) {
    std::vector<std::string> warnings;
    args.push_back(box_args(p, *s, &warnings));
    for (const auto& w : warnings) log::warning(w);
    uid_range |= std::find(args.back().begin(), args.back().end(), "--uid-range") != args.back().end();
  }
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());

  // The pod: made once, kept while it runs (a running one is used as it is).
  PodCreateOptions pc;
  pc.name = p.name;
  for (const auto& a : pod_publish_args(p)) pc.netx.publish.push_back(a);
  pc.netx.add_host = pod_add_host_args(p);
  pc.net = pc.netx.publish.empty() && pc.netx.add_host.empty() ? "none" : "private";
  pc.uid_range = uid_range;
  pc.labels = {"com.docker.compose.project=" + p.name};
  pc.quiet_if_running = true;
  std::string pdir = pod::pod_dir(rt, pod::Kind::pod, p.name);
  auto existing = pod::read_pod(rt, pod::Kind::pod, p.name);
  if (existing && existing->state != "running") {
    KERN_TRY_ASSIGN(int done1, pod_start(pod::Kind::pod, {p.name}));
    (void)done1;
  }
  if (!existing) {
    KERN_TRY_ASSIGN(int done2, pod_create(pod::Kind::pod, pc));
    (void)done2;
  }
  if (existing && (existing->publish != pc.netx.publish || existing->uid_range != pc.uid_range))
    log::warning("the pod \"" + p.name + "\" was made with other ports or id maps than the files now ask for: "
                 "kern compose down, then up, makes it again");

  // Orphans: boxes of the project whose service the files no longer have.
  std::set<std::string> names;
  for (const auto& s : p.services) names.insert(box_name(p, s));
  for (const auto& r : project_boxes(rt, p.name))
    if (!names.count(r.name)) {
      if (o.remove_orphans)
        KERN_TRY(run_ok({"rm", "-f", r.name}, "removing the orphan box " + r.name));
      else
        log::warning("the box \"" + r.name + "\" of project \"" + p.name +
                     "\" has no service in the files now (kern compose up --remove-orphans removes it)");
    }

  std::vector<std::string> started;
  for (size_t i = 0; i < order.size(); ++i) {
    const compose::Service& s = *order[i];
    if (!wanted(only, s.name)) {
      // A service named on the command line brings its dependencies up; the rest wait.
      bool needed = false;
      for (const auto& n : only)
        if (const auto* w = p.find(n))
          for (const auto& d : w->depends_on) needed |= d.service == s.name;
      if (!needed) continue;
    }
    std::string box = box_name(p, s);
    std::string hash = config_hash(s);
    if (auto r = find_box_record(rt, box, true)) {
      if (!o.force_recreate && !record_exited(*r) && label(*r, "com.docker.compose.config-hash") == hash) {
        std::fprintf(stderr, " Box %s  Running\n", box.c_str());
        continue;
      }
      KERN_TRY(run_ok({"rm", "-f", box}, "removing the old box of service " + s.name));
      std::fprintf(stderr, " Box %s  Recreate\n", box.c_str());
    }
    for (const auto& d : s.depends_on)
      if (p.find(d.service) != nullptr) KERN_TRY(wait_condition(rt, p, d, s.name, o.wait_s));
    std::vector<std::string> a = {"box", "-q"};
    a.insert(a.end(), args[i].begin(), args[i].end());
    KERN_TRY_ASSIGN(int rc, run_self(a, true));
    if (rc != 0) return fail(ErrorKind::setup, 0, "service \"" + s.name + "\" did not start (kern box exited " + std::to_string(rc) + ")");
    std::fprintf(stderr, " Box %s  Started\n", box.c_str());
    started.push_back(s.name);
  }
  if (o.detach) return 0;
  // In the foreground: every service's log until they all end, or until SIGINT/SIGTERM, which
  // stops the stack (as docker compose up does).
  return compose_logs(p, only, true);
}

Result<int> compose_stop(const compose::Project& p, const std::vector<std::string>& only, unsigned timeout_s) {
  KERN_TRY(check_only(p, only));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(auto order, start_order(p));
  // The reverse of the start order: what depends on a service stops before it.
  std::vector<std::string> args = {"stop", "-t", std::to_string(timeout_s)};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!wanted(only, (*it)->name)) continue;
    auto r = find_box_record(rt, box_name(p, **it), true);
    if (r && !record_exited(*r)) args.push_back(r->name);
  }
  // One kern stop per box, in order: a box that ends by itself meanwhile (a one-shot job) is
  // stopped, not an error, and does not keep the others from stopping.
  for (size_t i = 3; i < args.size(); ++i) {
    KERN_TRY_ASSIGN(int rc, run_self({"stop", "-t", args[2], args[i]}));
    if (rc == 0) continue;
    if (auto r = find_box_record(rt, args[i], true); r && !record_exited(*r))
      return fail(ErrorKind::setup, 0, "kern stop of the stack's box " + args[i] + " failed");
  }
  return 0;
}

Result<int> compose_down(const compose::Project& p, bool volumes, unsigned timeout_s) {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  {
    KERN_TRY_ASSIGN(int done3, compose_stop(p, {}, timeout_s));
    (void)done3;
  }
  std::vector<std::string> rm = {"rm", "-f"};
  for (const auto& r : project_boxes(rt, p.name)) rm.push_back(r.name);
  if (rm.size() > 2) KERN_TRY(run_ok(rm, "kern rm of the stack's boxes"));
  {
    KERN_TRY_ASSIGN(int done4, pod_rm(pod::Kind::pod, {p.name}, true, true));
    (void)done4;
  }
  if (volumes) {
    std::vector<std::string> vrm = {"volume", "rm", "-f"};
    for (const auto& v : p.volumes)
      if (!v.external) vrm.push_back(v.name);
    if (vrm.size() > 3) KERN_TRY(run_ok(vrm, "kern volume rm of the stack's volumes"));
  }
  return 0;
}

Result<int> compose_logs(const compose::Project& p, const std::vector<std::string>& only, bool follow) {
  KERN_TRY(check_only(p, only));
  struct Source {
    std::string prefix;
    pid_t pid = -1;
    int fd = -1;
    std::string partial;
  };
  std::vector<Source> src;
  size_t width = 0;
  for (const auto& s : p.services)
    if (wanted(only, s.name)) width = std::max(width, s.name.size());
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &set, &old);
  int sfd = ::signalfd(-1, &set, SFD_CLOEXEC);
  for (const auto& s : p.services) {
    if (!wanted(only, s.name)) continue;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return fail_errno("pipe2");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigmask(&at, &old);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    std::vector<std::string> words = {"kern", "logs"};
    if (follow) words.push_back("-f");
    words.push_back(box_name(p, s));
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, "/proc/self/exe", &fa, &at, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      return fail(ErrorKind::setup, rc, "posix_spawn kern logs");
    }
    std::string prefix = s.name + std::string(width - s.name.size(), ' ') + "  | ";
    src.push_back({prefix, pid, fds[0], ""});
  }
  bool interrupted = false;
  size_t open = src.size();
  while (open > 0) {
    std::vector<pollfd> pf;
    for (const auto& s : src) pf.push_back({s.fd, POLLIN, 0});
    pf.push_back({sfd, POLLIN, 0});
    if (::poll(pf.data(), pf.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf.back().revents) {
      interrupted = true;
      break;
    }
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i].fd < 0 || pf[i].revents == 0) continue;
      char buf[8192];
      ssize_t n = ::read(src[i].fd, buf, sizeof buf);
      if (n <= 0) {
        if (!src[i].partial.empty()) std::printf("%s%s\n", src[i].prefix.c_str(), src[i].partial.c_str());
        ::close(src[i].fd);
        src[i].fd = -1;
        --open;
        continue;
      }
      src[i].partial.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = src[i].partial.find('\n')) != std::string::npos) {
        std::printf("%s%s\n", src[i].prefix.c_str(), src[i].partial.substr(0, nl).c_str());
        src[i].partial.erase(0, nl + 1);
      }
      std::fflush(stdout);
    }
  }
  for (auto& s : src) {
    if (s.fd >= 0) {
      ::kill(s.pid, SIGTERM);
      ::close(s.fd);
    }
    while (::waitpid(s.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (sfd >= 0) ::close(sfd);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  if (interrupted && follow) {
    std::fprintf(stderr, "Stopping %s\n", p.name.c_str());
    {
    KERN_TRY_ASSIGN(int done5, compose_stop(p, only, 10));
    (void)done5;
  }
    return 130;
  }
  return 0;
}

}  // namespace kern::cli
