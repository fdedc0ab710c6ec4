// The network flags; see net_flags.h.
#include "cli/net_flags.h"

#include "cli/env_file.h"
#include "runtime/net/egress.h"
#include "runtime/net/egress_rules.h"

namespace kern::cli {

void add_net_flags(CLI::App* c, NetOptions& o) {
  c->add_option("--egress-allow", o.egress_allow,
                "D1[,D2...]: outbound HTTP(S) only to these domains and their subdomains, through kern's proxy")
      ->allow_extra_args(false);
  c->add_option("-p,--publish", o.publish, "[IP:]HOSTPORT:BOXPORT[/tcp|udp] (--net private)")->allow_extra_args(false);
  c->add_option("--dns", o.dns, "name server for the box (--net private)")->allow_extra_args(false);
  c->add_option("--add-host", o.add_host, "NAME:IP line for the box's /etc/hosts (--net private)")
      ->allow_extra_args(false);
}

Result<void> build_net(const NetOptions& o, BoxSpec& spec, const std::string& verb) {
  for (const auto& [flag, v] : {std::pair{"-p", &o.publish}, {"--dns", &o.dns}, {"--add-host", &o.add_host}})
    if (!v->empty())
      return fail(Error(ErrorKind::usage, 0, std::string(flag) + ": needs --net private, which is not implemented yet")
                      .with_hint("a box has --net none (loopback only, the default), --net host, or --egress-allow"));
  if (o.egress_allow.empty()) return {};
  if (verb != "kern box") return fail(ErrorKind::usage, 0, verb + " --egress-allow: not implemented yet");
  if (spec.net == NetMode::host)
    return fail(Error(ErrorKind::usage, 0, "--egress-allow: the box would have the host's network as well")
                    .with_hint("--egress-allow keeps the box loopback-only; drop --net host"));
  KERN_TRY_ASSIGN(spec.egress_allow, net::parse_egress_allow(o.egress_allow));
  return {};
}

void add_net_env(BoxSpec& spec) {
  if (!spec.egress_allow.empty()) merge_env(spec.env, net::egress_proxy_env());
}

}  // namespace kern::cli
