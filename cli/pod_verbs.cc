// kern pod / kern network verbs; see pod_verbs.h.
#include "cli/pod_verbs.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/images_format.h"
#include "cli/pod_join.h"
#include "cli/text_columns.h"
#include "runtime/pod/pod_holder.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

extern char** environ;

namespace kern::cli {
namespace pod_verbs_detail {

std::string random_id() {
  unsigned char b[6] = {};
  if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    auto t = static_cast<unsigned long long>(::time(nullptr)) ^ static_cast<unsigned long long>(::getpid());
    std::memcpy(b, &t, sizeof b);
  }
  char out[13];
  for (int i = 0; i < 6; ++i) std::snprintf(out + 2 * i, 3, "%02x", b[i]);
  return out;
}

// Every file a pod's directory holds, then the directory.
void remove_pod_dir(const std::string& dir) {
  for (const char* f : {"record.json", "record.json.tmp", "hosts", "hostname", "resolv.conf", "lock"})
    ::unlink((dir + "/" + f).c_str());
  ::rmdir(dir.c_str());
}

std::string label_key(pod::Kind k) { return std::string("io.kern.") + pod::kind_word(k); }

// The network settings a pod's supervisor hands pasta, from the record's create flags.
Result<BoxSpec> net_spec(const pod::PodRecord& rec) {
  BoxSpec spec;
  spec.name = rec.name;
  spec.hostname = rec.name;
  KERN_TRY_ASSIGN(spec.net, parse_net_mode(rec.net));
  NetOptions netx;
  netx.publish = rec.publish;
  netx.dns = rec.dns;
  netx.add_host = rec.add_host;
  KERN_TRY(build_net(netx, spec, kBoxClient));
  return spec;
}

Result<std::string> runtime() { return paths::runtime_dir(); }

}  // namespace pod_verbs_detail
using namespace pod_verbs_detail;

Result<int> run_self(const std::vector<std::string>& args, bool quiet_stdout) {
  std::vector<std::string> all = {"kern"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet_stdout) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  int rc = ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return fail(ErrorKind::setup, rc, "posix_spawn kern " + args.front());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return fail_errno("waitpid kern " + args.front());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<BoxRecord> pod_members(const std::string& runtime_dir, pod::Kind k, const std::string& name) {
  std::vector<BoxRecord> out;
  for (auto& r : list_boxes_all(runtime_dir, true))
    for (const auto& [key, value] : r.labels)
      if (key == label_key(k) && value == name) {
        out.push_back(r);
        break;
      }
  return out;
}

Result<int> pod_create(pod::Kind k, const PodCreateOptions& o) {
  const char* word = pod::kind_word(k);
  if (!valid_box_name(o.name))
    return fail(Error(ErrorKind::usage, 0, std::string("invalid ") + word + " name \"" + log::sanitize(o.name) + "\"")
                    .with_hint("letters, digits, '.', '_' and '-', at most 64, not starting with '.' or '-'"));
  if (k == pod::Kind::network && !names_network(o.name))
    return fail(Error(ErrorKind::usage, 0, "\"" + o.name + "\" is one of kern box --net's own words")
                    .with_hint("name the network otherwise"));
  KERN_TRY_ASSIGN(std::string rt, runtime());
  pod::PodRecord rec;
  rec.name = o.name;
  rec.kind = k;
  rec.id = random_id();
  rec.created_unix = ::time(nullptr);
  rec.net = !o.net.empty() ? o.net : o.netx.publish.empty() ? "none" : "private";
  if (rec.net != "none" && rec.net != "private")
    return fail(Error(ErrorKind::usage, 0, std::string("--net ") + log::sanitize(rec.net) + ": a " + word +
                                               "'s network is none or private")
                    .with_hint("--net private: outbound access and published ports through pasta"));
  rec.publish = o.netx.publish;
  rec.dns = o.netx.dns;
  rec.add_host = o.netx.add_host;
  rec.uid_range = o.uid_range;
  rec.ns_flags = k == pod::Kind::pod ? CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS : CLONE_NEWNET;
  for (const auto& l : o.labels) {
    size_t eq = l.find('=');
    rec.labels.emplace_back(l.substr(0, eq), eq == std::string::npos ? "" : l.substr(eq + 1));
  }
  if (rec.net == "none" && (!rec.publish.empty() || !rec.dns.empty() || !rec.add_host.empty()))
    return fail(Error(ErrorKind::usage, 0, std::string("-p, --dns and --add-host need a ") + word + " with --net private")
                    .with_hint("add --net private"));
  KERN_TRY_ASSIGN(BoxSpec net, net_spec(rec));
  std::string top = pod::kind_dir(rt, k);
  if (::mkdir(top.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + top + "\"");
  std::string dir = pod::pod_dir(rt, k, o.name);
  if (::mkdir(dir.c_str(), 0700) != 0) {
    if (errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
    if (o.quiet_if_running && pod::pod_running(dir)) return 0;
    return fail(Error(ErrorKind::usage, EEXIST, std::string("a ") + word + " named \"" + o.name + "\" exists")
                    .with_hint(std::string("kern ") + word + " rm " + o.name + ", or choose another name"));
  }
  if (auto st = pod::write_pod(dir, rec); !st) {
    remove_pod_dir(dir);
    return fail(std::move(st).error());
  }
  if (auto st = pod::start_pod(dir, rec, net); !st) {
    remove_pod_dir(dir);
    return fail(std::move(st).error());
  }
  if (!o.quiet_if_running) std::printf("%s\n", o.name.c_str());
  return 0;
}

Result<int> pod_start(pod::Kind k, const std::vector<std::string>& names) {
  KERN_TRY_ASSIGN(std::string rt, runtime());
  for (const auto& n : names) {
    KERN_TRY_ASSIGN(pod::PodRecord rec, pod::read_pod(rt, k, n));
    std::string dir = pod::pod_dir(rt, k, n);
    if (pod::pod_running(dir)) continue;
    KERN_TRY_ASSIGN(BoxSpec net, net_spec(rec));
    KERN_TRY(pod::start_pod(dir, rec, net));
    std::printf("%s\n", n.c_str());
  }
  return 0;
}

Result<int> pod_stop(pod::Kind k, const std::vector<std::string>& names, unsigned timeout_s) {
  KERN_TRY_ASSIGN(std::string rt, runtime());
  for (const auto& n : names) {
    KERN_TRY_ASSIGN(pod::PodRecord rec, pod::read_pod(rt, k, n));
    std::vector<std::string> args = {"stop", "-t", std::to_string(timeout_s)};
    for (const auto& m : pod_members(rt, k, n))
      if (!record_exited(m)) args.push_back(m.name);
    if (args.size() > 3) {
      KERN_TRY_ASSIGN(int rc, run_self(args));
      if (rc != 0) return fail(ErrorKind::setup, 0, std::string("kern stop of the boxes of ") + pod::kind_word(k) + " \"" + n + "\" failed");
    }
    KERN_TRY(pod::stop_pod(pod::pod_dir(rt, k, n), rec, timeout_s));
    std::printf("%s\n", n.c_str());
  }
  return 0;
}

Result<int> pod_rm(pod::Kind k, const std::vector<std::string>& names, bool force, bool ignore_missing) {
  KERN_TRY_ASSIGN(std::string rt, runtime());
  for (const auto& n : names) {
    auto rec = pod::read_pod(rt, k, n);
    if (!rec) {
      if (ignore_missing && rec.error().kind() == ErrorKind::usage) continue;
      return fail(std::move(rec).error());
    }
    std::vector<std::string> running, all;
    for (const auto& m : pod_members(rt, k, n)) {
      all.push_back(m.name);
      if (!record_exited(m)) running.push_back(m.name);
    }
    if (!running.empty() && !force) {
      std::string list;
      for (const auto& r : running) list += (list.empty() ? "" : ", ") + r;
      return fail(Error(ErrorKind::usage, 0, std::string("the ") + pod::kind_word(k) + " \"" + n + "\" has running boxes: " + list)
                      .with_hint(std::string("kern ") + pod::kind_word(k) + " stop " + n + " first, or kern " +
                                 pod::kind_word(k) + " rm -f " + n));
    }
    if (!all.empty()) {
      std::vector<std::string> args = {"rm", "-f"};
      args.insert(args.end(), all.begin(), all.end());
      KERN_TRY_ASSIGN(int rc, run_self(args));
      if (rc != 0) return fail(ErrorKind::setup, 0, std::string("kern rm of the boxes of ") + pod::kind_word(k) + " \"" + n + "\" failed");
    }
    std::string dir = pod::pod_dir(rt, k, n);
    KERN_TRY(pod::stop_pod(dir, *rec, 10));
    remove_pod_dir(dir);
    std::printf("%s\n", n.c_str());
  }
  return 0;
}

Result<int> pod_ls(pod::Kind k, bool quiet) {
  KERN_TRY_ASSIGN(std::string rt, runtime());
  auto pods = pod::list_pods(rt, k);
  if (quiet) {
    for (const auto& p : pods) std::printf("%s\n", p.name.c_str());
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({k == pod::Kind::pod ? "POD ID" : "NETWORK ID", "NAME", "STATUS", "CREATED", "NET", "BOXES", "PORTS"});
  std::time_t now = ::time(nullptr);
  for (const auto& p : pods) {
    std::string ports;
    for (const auto& x : p.ports) ports += (ports.empty() ? "" : ", ") + x;
    rows.push_back({p.id, p.name, p.state, human_duration(now - p.created_unix) + " ago", p.net,
                    std::to_string(pod_members(rt, k, p.name).size()), ports});
  }
  std::printf("%s", align_columns(rows).c_str());
  return 0;
}

Result<int> pod_inspect(pod::Kind k, const std::vector<std::string>& names) {
  KERN_TRY_ASSIGN(std::string rt, runtime());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : names) {
    KERN_TRY_ASSIGN(pod::PodRecord rec, pod::read_pod(rt, k, n));
    auto j = nlohmann::json::parse(pod::record_json(rec));
    nlohmann::json boxes = nlohmann::json::array();
    for (const auto& m : pod_members(rt, k, n)) boxes.push_back({{"name", m.name}, {"state", m.state}});
    j["boxes"] = boxes;
    j["shares"] = k == pod::Kind::pod ? nlohmann::json{"user", "net", "ipc", "uts"} : nlohmann::json{"user", "net"};
    j["dir"] = pod::pod_dir(rt, k, n);
    out.push_back(j);
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace kern::cli
