// `kern pod` and `kern network`: the verbs of pods (boxes sharing one network, ipc and uts
// namespace, as podman's pods) and of named networks (boxes sharing one network namespace),
// both carried out by cli/pod_verbs.h.
#include <memory>

#include "cli/pod_verbs.h"
#include "cli/verb.h"

namespace kern::cli {
namespace {

struct PodArgs {
  PodCreateOptions create;
  std::vector<std::string> names;
  bool force = false, quiet = false, ignore = false;
  unsigned timeout = 10;
};

void add_verbs(CLI::App* c, VerbContext& ctx, pod::Kind k) {
  static PodArgs a[2];
  PodArgs& p = a[k == pod::Kind::pod ? 0 : 1];
  const std::string w = pod::kind_word(k);
  c->require_subcommand(1);
  CLI::App* create = c->add_subcommand("create", "make a " + w + " and start its holder");
  create->add_option("name", p.create.name, "its name")->required();
  create->add_option("--net", p.create.net, "none, or private (outbound access and -p through pasta); "
                                            "default private with -p, else none");
  add_net_flags(create, p.create.netx);
  create->add_option("-l,--label", p.create.labels, "K=V")->allow_extra_args(false);
  create->add_flag("--uid-range", p.create.uid_range, "map a subordinate id range (newuidmap), for boxes with --uid-range");
  create->callback([&ctx, &p, k] { ctx.action = [&p, k] { return pod_create(k, p.create); }; });

  CLI::App* start = c->add_subcommand("start", "start the holder of a stopped " + w + " again");
  start->add_option("names", p.names, "names")->required();
  start->callback([&ctx, &p, k] { ctx.action = [&p, k] { return pod_start(k, p.names); }; });

  CLI::App* stop = c->add_subcommand("stop", "stop its boxes, then its holder");
  stop->add_option("names", p.names, "names")->required();
  stop->add_option("-t,--time", p.timeout, "seconds the boxes get before SIGKILL (default 10)");
  stop->callback([&ctx, &p, k] { ctx.action = [&p, k] { return pod_stop(k, p.names, p.timeout); }; });

  CLI::App* rm = c->add_subcommand("rm", "remove it, its stopped boxes and its files");
  rm->alias("remove");
  rm->add_option("names", p.names, "names")->required();
  rm->add_flag("-f,--force", p.force, "remove its running boxes too");
  rm->add_flag("-i,--ignore", p.ignore, "no error for a name that does not exist");
  rm->callback([&ctx, &p, k] { ctx.action = [&p, k] { return pod_rm(k, p.names, p.force, p.ignore); }; });

  CLI::App* ls = c->add_subcommand("ls", "list them");
  ls->alias("list");
  ls->add_flag("-q,--quiet", p.quiet, "names only");
  ls->callback([&ctx, &p, k] { ctx.action = [&p, k] { return pod_ls(k, p.quiet); }; });

  CLI::App* inspect = c->add_subcommand("inspect", "their records as a JSON array");
  inspect->add_option("names", p.names, "names")->required();
  inspect->callback([&ctx, &p, k] { ctx.action = [&p, k] { return pod_inspect(k, p.names); }; });
}

void register_pod(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("pod", "boxes that share one network, ipc and uts namespace (create, ps, ls, stop, rm)");
  add_verbs(c, ctx, pod::Kind::pod);
  static std::string ps_name;
  CLI::App* ps = c->add_subcommand("ps", "the boxes of a pod");
  ps->add_option("name", ps_name, "the pod")->required();
  ps->callback([&ctx] {
    ctx.action = [] { return run_self({"ps", "-a", "--filter", "label=io.kern.pod=" + ps_name}); };
  });
}

void register_network(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("network", "named networks: boxes on one reach each other by name (create, ls, rm)");
  add_verbs(c, ctx, pod::Kind::network);
}

const VerbRegistration pod_reg{51, "pod", &register_pod};
const VerbRegistration network_reg{52, "network", &register_network};

}  // namespace
}  // namespace kern::cli
