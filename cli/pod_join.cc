// --pod and --network NAME; see pod_join.h.
#include "cli/pod_join.h"

#include <sched.h>
#include <unistd.h>

#include "runtime/registry.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {

bool names_network(const std::string& word) {
  return !word.empty() && word != "none" && word != "host" && word != "private";
}

Status join_pod(pod::Kind kind, const std::string& name, const NetOptions& netx, bool hostname_given,
                const std::vector<std::string>& aliases, BoxSpec& spec) {
  const std::string what = kind == pod::Kind::pod ? "--pod " + name : "--network " + name;
  const std::string made = std::string("kern ") + pod::kind_word(kind) + " create " + name;
  auto own = [&](const char* flag) {
    return fail(Error(ErrorKind::usage, 0,
                      std::string(flag) + " with " + what + ": the box uses the " + pod::kind_word(kind) +
                          "'s network, whose ports, resolvers and host lines are set when it is made")
                    .with_hint("give " + std::string(flag) + " to " + made + " instead"));
  };
  if (!netx.publish.empty()) return own("-p/--publish");
  if (!netx.dns.empty()) return own("--dns");
  if (!netx.add_host.empty()) return own("--add-host");
  if (!netx.egress_allow.empty()) return own("--egress-allow");
  if (hostname_given && kind == pod::Kind::pod)
    return fail(Error(ErrorKind::usage, 0, "--hostname with " + what + ": a pod's boxes share its uts namespace and its name")
                    .with_hint("drop --hostname; the box's name still resolves in the pod's /etc/hosts"));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  auto found = pod::read_pod(rt, kind, name);
  if (!found && kind == pod::Kind::network && found.error().kind() == ErrorKind::usage)
    return fail(Error(ErrorKind::usage, 0, "--net: \"" + log::sanitize(name) +
                                               "\" is not none, host or private, and no network of kern network create")
                    .with_hint("kern network ls lists the networks; kern network create NAME makes one"));
  KERN_TRY_ASSIGN(pod::PodRecord rec, std::move(found));
  std::string dir = pod::pod_dir(rt, kind, name);
  if (rec.state != "running")
    return fail(Error(ErrorKind::usage, 0, std::string("the ") + pod::kind_word(kind) + " \"" + name + "\" is stopped")
                    .with_hint(std::string("kern ") + pod::kind_word(kind) + " start " + name));
  if (spec.uid_range && !rec.uid_range)
    return fail(Error(ErrorKind::usage, 0, "--uid-range with " + what + ": its user namespace maps your uid alone")
                    .with_hint(made + " --uid-range (after kern " + pod::kind_word(kind) + " rm " + name + ")"));
  PodJoin j;
  j.name = name;
  j.kind = pod::kind_word(kind);
  j.holder_pid = rec.holder_pid;
  j.holder_start = rec.holder_start;
  j.ns_flags = rec.ns_flags;
  spec.pod = j;
  spec.net = NetMode::none;
  spec.labels.emplace_back(std::string("io.kern.") + pod::kind_word(kind), name);
  if (kind == pod::Kind::pod) spec.hostname = name;
  std::vector<BindMount> files;
  auto bind = [&](const char* file, const char* dest) {
    std::string src = dir + "/" + file;
    if (::access(src.c_str(), F_OK) != 0) return;
    BindMount b;
    b.source = src;
    b.dest = dest;
    b.read_only = true;
    b.origin = what;
    b.skip_unreachable = true;
    files.push_back(std::move(b));
  };
  bind("hosts", "/etc/hosts");
  bind("resolv.conf", "/etc/resolv.conf");
  if (kind == pod::Kind::pod) bind("hostname", "/etc/hostname");
  spec.binds.insert(spec.binds.begin(), files.begin(), files.end());
  KERN_TRY(pod::add_host_name(dir, spec.name));
  for (const auto& a : aliases) {
    if (!valid_box_name(a))
      return fail(Error(ErrorKind::usage, 0, "--network-alias \"" + log::sanitize(a) + "\" is not a host name kern writes")
                      .with_hint("letters, digits, '.', '_' and '-'"));
    KERN_TRY(pod::add_host_name(dir, a));
  }
  return {};
}

}  // namespace kern::cli
