// `kern compose up|down|ps|logs|start|stop|restart|pull|exec` (kern-compose(1)), carried out by
// compose_stack.h; `config` is compose_config_command.cc.
#include "cli/compose_box_args.h"
#include "cli/compose_command.h"
#include "cli/compose_stack.h"
#include "cli/pod_verbs.h"

namespace kern::cli {
namespace {
namespace compose_stack_verbs {

std::vector<std::string> g_services;
UpOptions g_up;
bool g_volumes = false, g_follow = false, g_all = false, g_quiet = false, g_no_tty = false, g_no_cache = false;
unsigned g_timeout = 10;
std::vector<std::string> g_exec;  // SERVICE COMMAND...

using Run = Result<int> (*)(const compose::Project&);

void add(CLI::App& compose, VerbContext& ctx, ComposeGlobals& g, const char* name, const char* help,
         void (*flags)(CLI::App*), Run run) {
  CLI::App* c = compose.add_subcommand(name, help);
  if (flags) flags(c);
  c->callback([&ctx, &g, run] {
    ctx.table = ExitTable::box;
    ctx.action = [&g, run]() -> Result<int> {
      KERN_TRY_ASSIGN(compose::Project p, load(g));
      return run(p);
    };
  });
}

void services_option(CLI::App* c) { c->add_option("services", g_services, "services (default: all)"); }
void timeout_option(CLI::App* c) { c->add_option("-t,--timeout", g_timeout, "seconds before SIGKILL (default 10)"); }

void register_stack(CLI::App& compose, VerbContext& ctx, ComposeGlobals& g) {
  add(compose, ctx, g, "up", "make the pod and start every service in depends_on order; unchanged ones stay",
      [](CLI::App* c) {
        services_option(c);
        c->add_flag("-d,--detach", g_up.detach, "return once they run");
        c->add_flag("--force-recreate", g_up.force_recreate, "recreate unchanged services too");
        c->add_flag("--remove-orphans", g_up.remove_orphans, "remove boxes of services the files no longer have");
        c->add_option("--wait-timeout", g_up.wait_s, "seconds a depends_on condition is waited for (default 120)");
        c->add_flag("--build", g_up.build, "build the images of services with build: first (else only missing ones)");
      },
      [](const compose::Project& p) { return compose_up(p, g_services, g_up); });
  add(compose, ctx, g, "build", "build the images of the services that have build: (kern build)",
      [](CLI::App* c) {
        services_option(c);
        c->add_flag("--no-cache", g_no_cache, "take nothing from the build cache");
      },
      [](const compose::Project& p) { return compose_build(p, g_services, false, g_no_cache); });
  add(compose, ctx, g, "down", "stop and remove the services' boxes and the pod; -v the named volumes too",
      [](CLI::App* c) {
        c->add_flag("-v,--volumes", g_volumes, "remove the project's named volumes");
        timeout_option(c);
      },
      [](const compose::Project& p) { return compose_down(p, g_volumes, g_timeout); });
  add(compose, ctx, g, "ps", "the project's boxes",
      [](CLI::App* c) {
        c->add_flag("-a,--all", g_all, "exited ones too (always shown)");
        c->add_flag("-q,--quiet", g_quiet, "names only");
      },
      [](const compose::Project& p) {
        std::vector<std::string> a = {"ps", "-a", "--filter", "label=com.docker.compose.project=" + p.name};
        if (g_quiet) a.push_back("-q");
        return run_self(a);
      });
  add(compose, ctx, g, "logs", "the services' output, each line after its service's name",
      [](CLI::App* c) {
        services_option(c);
        c->add_flag("-f,--follow", g_follow, "follow");
      },
      [](const compose::Project& p) { return compose_logs(p, g_services, g_follow); });
  add(compose, ctx, g, "stop", "stop the services' boxes (the pod and the boxes stay)",
      [](CLI::App* c) {
        services_option(c);
        timeout_option(c);
      },
      [](const compose::Project& p) { return compose_stop(p, g_services, g_timeout); });
  // A stopped box is not started again in place: start and restart make the services' boxes
  // again from the files (their named volumes and the pod stay).
  add(compose, ctx, g, "start", "start stopped services again (their boxes are made again)", services_option,
      [](const compose::Project& p) {
        UpOptions o;
        o.detach = true;
        return compose_up(p, g_services, o);
      });
  add(compose, ctx, g, "restart", "stop the services, then start them again",
      [](CLI::App* c) {
        services_option(c);
        timeout_option(c);
      },
      [](const compose::Project& p) -> Result<int> {
        {
    KERN_TRY_ASSIGN(int done1, compose_stop(p, g_services, g_timeout));
    (void)done1;
  }
        UpOptions o;
        o.detach = true;
        o.force_recreate = true;
        return compose_up(p, g_services, o);
      });
  add(compose, ctx, g, "pull", "pull the services' images", services_option, [](const compose::Project& p) -> Result<int> {
    for (const auto& s : p.services) {
      if (!g_services.empty() && std::find(g_services.begin(), g_services.end(), s.name) == g_services.end()) continue;
      if (s.image.empty()) continue;
      KERN_TRY_ASSIGN(int rc, run_self({"pull", s.image}));
      if (rc != 0) return rc;
    }
    return 0;
  });
  add(compose, ctx, g, "exec", "run a command in a service's running box",
      [](CLI::App* c) {
        c->add_flag("-T,--no-TTY", g_no_tty, "no terminal (kern exec makes none unless asked)");
        c->add_option("service", g_exec, "SERVICE COMMAND...")->required()->expected(-1);
        c->allow_extras();
        c->prefix_command();
      },
      [](const compose::Project& p) -> Result<int> {
        const compose::Service* s = p.find(g_exec.front());
        if (s == nullptr)
          return fail(Error(ErrorKind::usage, 0, "no service named \"" + g_exec.front() + "\"")
                          .with_hint("kern compose config --services lists them"));
        std::vector<std::string> a = {"exec", box_name(p, *s)};
        a.insert(a.end(), g_exec.begin() + 1, g_exec.end());
        return run_self(a);
      });
}

const ComposeSubcommand reg{20, "up", &register_stack};

}  // namespace compose_stack_verbs
}  // namespace
}  // namespace kern::cli
