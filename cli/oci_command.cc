// `kern oci VERB` and `kern-oci VERB` (app.cc maps the second to the first): runc's command
// line over OCI bundles, so container engines can drive kern. The verbs' work lives in
// runtime/bundle/; this file defines the flags and reports errors also on --log, in runc's
// format (engines' shims read the last error from there).
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <cstdio>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "cli/oci_update_flags.h"
#include "cli/oci_verb_word.h"
#include "cli/text_columns.h"
#include "profiles/units.h"
#include "cli/version_info.h"
#include "runtime/blocked_signals.h"
#include "runtime/bundle/bundle_load.h"
#include "runtime/cgroup/container_verbs.h"
#include "runtime/bundle/container_create.h"
#include "runtime/bundle/container_exec.h"
#include "runtime/bundle/container_plan.h"
#include "runtime/bundle/container_ops.h"
#include "runtime/bundle/container_procs.h"
#include "runtime/bundle/documents.h"
#include "runtime/bundle/signal_name.h"
#include "runtime/bundle/state.h"
#include "runtime/bundle/state_dir.h"
#include "runtime/launcher_loop.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace oci_verb {

struct Globals {
  std::string root;
  std::string log_file;
  std::string log_format = "text";
  bool systemd_cgroup = false;
  bool debug = false;
  std::string rootless = "auto";
} g;

struct VerbArgs {
  std::string id;
  std::string signal = "SIGTERM";
  bool all = false, force = false, rootless_spec = false;
  std::string bundle = ".";
  std::string pid_file, console_socket;
  unsigned preserve_fds = 0;
  bool no_pivot = false, no_new_keyring = false, detach = false, keep = false;
  std::string format = "table";
  bool quiet = false;
  std::vector<std::string> ps_options;
  std::pair<CLI::App*, CLI::App*> ps_apps;  // ps and its parent, for ps(1)'s options
  bool stats = false, json = false;
  std::string interval = "5s";
  OciUpdateFlags update;
} a;

bundle::ExecRequest ex;  // kern oci exec
CLI::App* exec_app = nullptr;

// One line on --log: {"level":"error","msg":...,"time":...} with --log-format json, else
// logrus's text shape, as runc writes them.
void log_line(const std::string& level, const std::string& msg) {
  if (g.log_file.empty()) return;
  std::ofstream f(g.log_file, std::ios::app);
  if (!f) return;
  if (g.log_format == "json") {
    // A message quotes paths and ids as given: bytes that are not UTF-8 are replaced, never thrown on.
    f << nlohmann::json{{"level", level}, {"msg", msg}, {"time", bundle::rfc3339_now()}}.dump(
             -1, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
  } else {
    f << "time=\"" << bundle::rfc3339_now() << "\" level=" << level
      << " msg=" << nlohmann::json(msg).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

using Action = Result<int> (*)();

// Runs a verb; an error also goes to --log before app.cc prints it on stderr.
std::function<Result<int>()> logged(Action act) {
  return [act]() -> Result<int> {
    Result<int> r = act();
    if (!r) log_line("error", r.error().what());
    return r;
  };
}

Result<bundle::StateDir> state_dir() {
  std::string root = g.root.empty() ? bundle::default_state_root(::geteuid(), ::getenv("XDG_RUNTIME_DIR"),
                                                                           bundle::in_initial_user_namespace()) : g.root;
  return bundle::StateDir::open(root);
}

Status write_out(const std::string& text) { return sys::write_all(STDOUT_FILENO, text, "stdout"); }

Result<int> run_spec() {
  std::string path = a.bundle + "/config.json";
  if (::access(path.c_str(), F_OK) == 0)
    return fail(ErrorKind::usage, EEXIST, "kern oci spec: \"" + path + "\" exists already");
  // A cgroup namespace where /sys/fs/cgroup is cgroup v2 alone, as runc's and crun's spec.
  struct statfs fs {};
  bool v2_only = ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
  KERN_TRY(sys::write_file(AT_FDCWD, path, bundle::default_spec(a.rootless_spec, ::getuid(), ::getgid(), v2_only), 0644));
  return 0;
}

// What `kern-oci --version` prints, in runc's shape: engines read the first line (podman shows
// it as ociRuntime's version; Docker splits "NAME version X" and reads "commit:").
std::string oci_version_text() {
  return std::string("kern-oci version ") + KERN_VERSION + "\ncommit: " + kGitCommit + "\nspec: " +
         bundle::kOciVersion + "\n";
}

Result<int> run_oci_version() {
  KERN_TRY(write_out(oci_version_text()));
  return 0;
}

Result<int> run_features() {
  KERN_TRY(write_out(bundle::features_json()));
  return 0;
}

// What create would do with the bundle, from the plan create makes; nothing is created.
Result<int> run_plan() {
  bundle::CreateOptions o;
  o.no_pivot = a.no_pivot;
  o.preserve_fds = a.preserve_fds;
  KERN_TRY_ASSIGN(std::string text, bundle::container_plan(a.bundle, a.id.empty() ? "plan" : a.id, o, a.json));
  KERN_TRY(write_out(text));
  return 0;
}

Result<int> run_state() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY_ASSIGN(bundle::ContainerRecord r, dir.read(a.id));
  auto doc = nlohmann::json::parse(bundle::state_json(r, bundle::current_status(r)));
  KERN_TRY(write_out(doc.dump(2) + "\n"));
  return 0;
}

// The user who owns a container's state directory (runc's OWNER), by name where one is known.
std::string state_owner(const bundle::StateDir& dir, const std::string& id) {
  struct stat st;
  if (::stat(dir.container_dir(id).c_str(), &st) != 0) return "";
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (::getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found) return found->pw_name;
  return "#" + std::to_string(st.st_uid);
}

Result<int> run_list() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY_ASSIGN(std::vector<std::string> ids, dir.list());
  std::string out;
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  // runc's columns, laid out as its tabwriter does (columns at least 12 wide, 3 spaces apart).
  std::vector<std::vector<std::string>> rows;
  if (a.format == "table" && !a.quiet) rows.push_back({"ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"});
  for (const auto& id : ids) {
    auto r = dir.read(id);
    if (!r) {
      // Named, never skipped in silence (a container being created right now says so too).
      if (r.error().sys_errno() != ENOENT) {
        log::warning(std::string(r.error().what()));
        if (!r.error().explicit_hint().empty()) log::hint(r.error().explicit_hint());
      }
      continue;
    }
    bundle::ContainerStatus s = bundle::current_status(*r);
    // As runc: a paused container still has its process; a stopped one shows 0.
    bool has_pid = s != bundle::ContainerStatus::stopped && s != bundle::ContainerStatus::creating;
    if (a.quiet) {
      out += id + "\n";
    } else if (a.format == "json") {
      // runc's fields in runc's order (its tests read the line as text).
      std::string rootfs;
      if (auto cfg = bundle::saved_config(dir, id); cfg && !cfg->root_path.empty())
        rootfs = cfg->root_path[0] == '/' ? cfg->root_path : r->bundle + "/" + cfg->root_path;
      nlohmann::ordered_json e;
      e["ociVersion"] = bundle::kOciVersion;
      e["id"] = id;
      e["pid"] = has_pid ? r->pid : 0;
      e["status"] = bundle::status_name(s);
      e["bundle"] = r->bundle;
      e["rootfs"] = rootfs;
      e["created"] = r->created;
      e["annotations"] = r->annotations;
      e["owner"] = state_owner(dir, id);
      arr.push_back(std::move(e));
    } else {
      rows.push_back({log::sanitize(id), std::to_string(has_pid ? r->pid : 0), bundle::status_name(s),
                      log::sanitize(r->bundle), r->created, log::sanitize(state_owner(dir, id))});
    }
  }
  if (a.format == "json" && !a.quiet) out = arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  else if (!a.quiet) out = align_columns(rows, 12);
  KERN_TRY(write_out(out));
  return 0;
}

Result<int> run_kill() {
  KERN_TRY_ASSIGN(int sig, bundle::parse_signal(a.signal));
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY(bundle::kill_container(dir, a.id, sig, a.all));
  return 0;
}

// delete, then the poststop hooks of the config kept at create (`created`: that config, when
// the caller made the container itself).
Status delete_with_hooks(const bundle::StateDir& dir, const std::string& id, bool force,
                         const bundle::Config* created = nullptr) {
  auto rec = dir.read(id);
  std::optional<bundle::Config> kept;
  if (rec && !created && rec->delete_needs_config) {  // poststop hooks: its record says whether
    if (auto c = bundle::saved_config(dir, id)) kept = std::move(*c);
    else log::warning("the poststop hooks of \"" + id + "\" do not run: " + c.error().what());
  }
  const bundle::Config* cfg = created ? created : kept ? &*kept : nullptr;
  KERN_TRY(bundle::delete_container(dir, id, force, rec ? &*rec : nullptr));
  if (rec && cfg) bundle::run_poststop(*cfg, *rec);
  return {};
}

Result<int> run_delete() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY(delete_with_hooks(dir, a.id, a.force));
  return 0;
}

bundle::CreateRequest create_request() {
  bundle::CreateRequest r;
  r.id = a.id;
  r.bundle = a.bundle;
  r.pid_file = a.pid_file;
  r.console_socket = a.console_socket;
  r.options.no_pivot = a.no_pivot;
  r.options.preserve_fds = a.preserve_fds;
  r.systemd_cgroup = g.systemd_cgroup;
  return r;
}

Result<int> run_create() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY(bundle::create_container(dir, create_request()));
  return 0;
}

Result<int> run_start() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY(bundle::start_container(dir, a.id));
  return 0;
}

// create + start; without --detach it waits for the container's process (this verb's child),
// forwarding the signals it gets to it and relaying its terminal when process.terminal is true
// and no --console-socket was given (as runc run does), and exits with its code, then deletes
// the container unless --keep.
Result<int> run_run() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  bundle::CreateRequest req = create_request();
  req.foreground = !a.detach;
  // Blocked from before the clone so that none sent while the container starts is lost.
  std::optional<BlockedSignals> sigs;
  if (!a.detach) sigs.emplace();
  UniqueFd console;
  bundle::Config cfg;
  KERN_TRY(bundle::create_container(dir, req, &console, &cfg));
  bundle::ContainerRecord r;
  if (auto s = bundle::start_container(dir, a.id, &cfg, &r); !s) {
    (void)bundle::delete_container(dir, a.id, true);
    return fail(std::move(s).error());
  }
  if (a.detach) return 0;
  int pfd = static_cast<int>(::syscall(SYS_pidfd_open, r.pid, 0));
  if (pfd < 0) return fail_errno("pidfd_open " + std::to_string(r.pid), ErrorKind::internal);
  UniqueFd pidfd(pfd);
  {
    RawCallerTerminal raw(static_cast<bool>(console));
    SuperviseInput in{pidfd.get(), 0, sigs->fd(), console ? console.get() : -1, static_cast<bool>(console)};
    KERN_TRY(supervise(in));
  }
  int status = 0;
  while (::waitpid(r.pid, &status, 0) < 0) {
    if (errno != EINTR) return fail_errno("waitpid " + std::to_string(r.pid), ErrorKind::internal);
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!a.keep) KERN_TRY(delete_with_hooks(dir, a.id, false, &cfg));
  return code;
}

Result<int> exec_verb() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  ex.id = a.id;
  ex.args = exec_app->remaining();
  if (!ex.args.empty() && ex.args.front() == "--") ex.args.erase(ex.args.begin());
  return bundle::exec_container(dir, ex);
}

// exec's own failures (no such container, a stopped one, a process that could not be started)
// exit 255, as runc's: the exit codes below are the process's own.
constexpr int kExecFailed = 255;

Result<int> run_exec() {
  Result<int> r = exec_verb();
  if (r) return r;
  Error err = r.error();
  log_line("error", "exec failed: " + std::string(err.what()));
  log::error(err);
  return kExecFailed;
}

CLI::App* verb(CLI::App* oci, VerbContext& ctx, const char* name, const char* help, Action act) {
  CLI::App* c = oci->add_subcommand(name, help);
  c->callback([&ctx, act] {
    ctx.action = logged(act);
    ctx.table = ExitTable::verb;
  });
  return c;
}

void add_create_flags(CLI::App* c) {
  c->add_option("-b,--bundle", a.bundle, "the bundle directory (default: the current one)");
  c->add_option("--pid-file", a.pid_file, "write the container's pid there");
  c->add_option("--console-socket", a.console_socket, "unix socket to send the pty master to");
  c->add_option("--preserve-fds", a.preserve_fds, "pass this many fds beyond 0-2 to the container");
  c->add_flag("--no-pivot", a.no_pivot, "chroot instead of pivot_root");
  c->add_flag("--no-new-keyring", a.no_new_keyring, "keep the session keyring");
  c->add_option("id", a.id, "container id")->required();
}

Result<int> run_ps() {
  a.ps_options = a.ps_apps.first->remaining();
  for (auto& w : a.ps_apps.second->remaining()) a.ps_options.push_back(w);
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY_ASSIGN(std::vector<pid_t> pids, bundle::container_pids(dir, a.id));
  if (a.format == "json") {
    KERN_TRY(write_out(nlohmann::json(pids).dump() + "\n"));
    return 0;
  }
  KERN_TRY_ASSIGN(std::string table, bundle::ps_table(pids, a.ps_options));
  KERN_TRY(write_out(table));
  return 0;
}

Result<int> run_freeze(bool freeze) {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY(bundle::set_frozen(dir, a.id, freeze));
  return 0;
}
Result<int> run_pause() { return run_freeze(true); }
Result<int> run_resume() { return run_freeze(false); }

Result<int> run_update() {
  KERN_TRY_ASSIGN(bundle::Resources r, oci_update_resources(a.update));
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  std::vector<std::string> ignored;
  KERN_TRY(bundle::update_container(dir, a.id, r, &ignored));
  for (const auto& f : ignored)
    log::warning("kern oci update: resources." + f + " has no cgroup v2 file; it was not changed");
  return 0;
}

// --stats: one stats document. Without it, one every --interval (default 5s) as runc does, and
// an oom line for each kill of the OOM killer, until the container is stopped or gone (exit 0).
Result<int> run_events() {
  KERN_TRY_ASSIGN(bundle::StateDir dir, state_dir());
  KERN_TRY_ASSIGN(std::string doc, bundle::container_stats(dir, a.id));
  KERN_TRY(write_out(doc + "\n"));
  if (a.stats) return 0;
  auto ms = profiles::parse_duration_ms(a.interval);
  if (!ms || *ms == 0)
    return fail(Error(ErrorKind::usage, 0, "kern oci events --interval \"" + a.interval + "\": not a duration")
                    .with_hint("a duration such as 5s, 1s or 100ms"));
  // Between the documents, the OOM killer's count is looked at every 100 ms: each kill it adds
  // is an {"type":"oom","id":ID} line at once, as runc writes them.
  const uint64_t tick = std::min<uint64_t>(*ms, 100);
  uint64_t since_stats = 0;
  uint64_t ooms = 0;
  if (auto rec = dir.read(a.id)) ooms = bundle::container_oom_kills(*rec);
  for (;;) {
    struct timespec ts = {static_cast<time_t>(tick / 1000), static_cast<long>(tick % 1000) * 1000000L};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    auto rec = dir.read(a.id);
    if (!rec) return 0;  // deleted
    bundle::ContainerStatus s = bundle::current_status(*rec);
    if (s != bundle::ContainerStatus::running && s != bundle::ContainerStatus::created &&
        s != bundle::ContainerStatus::paused)
      return 0;
    for (uint64_t now = bundle::container_oom_kills(*rec); ooms < now; ++ooms)
      KERN_TRY(write_out("{\"type\":\"oom\",\"id\":" + nlohmann::json(a.id).dump() + "}\n"));
    if ((since_stats += tick) < *ms) continue;
    since_stats = 0;
    auto next = bundle::container_stats(dir, a.id);
    if (!next) return 0;  // gone meanwhile
    KERN_TRY(write_out(*next + "\n"));
  }
}

void add_exec_flags(CLI::App* c) {
  exec_app = c;
  exec_app->add_option("-p,--process", ex.process_file, "a runtime-spec Process document");
  exec_app->add_flag("-t,--tty", ex.tty, "a terminal (its master goes to --console-socket)");
  exec_app->add_flag("-d,--detach", ex.detach, "return once the process runs");
  exec_app->add_option("--pid-file", ex.pid_file, "write the process's pid there");
  exec_app->add_option("--console-socket", ex.console_socket, "unix socket to send the pty master to");
  exec_app->add_option("--cwd", ex.cwd, "working directory");
  // One value per occurrence, as runc's: "-c CAP ID CMD" must leave ID and CMD alone.
  exec_app->add_option("-e,--env", ex.env, "KEY=VALUE, repeatable")->allow_extra_args(false);
  exec_app->add_option("-u,--user", ex.user, "UID[:GID]");
  exec_app->add_option("-g,--additional-gids", ex.additional_gids, "a supplementary group id, repeatable")
      ->allow_extra_args(false);
  exec_app->add_option("-c,--cap", ex.caps, "add a capability, repeatable")->allow_extra_args(false);
  exec_app->add_flag("--no-new-privs", ex.no_new_privs, "set no_new_privs");
  exec_app->add_option("--preserve-fds", ex.preserve_fds, "pass this many fds beyond 0-2");
  exec_app->add_option("--cgroup", ex.cgroups,
                       "a sub cgroup of the container's to run in: PATH, or CONTROLLER[,...]:PATH on cgroup v1; "
                       "repeatable")
      ->allow_extra_args(false);
  exec_app->add_flag("--ignore-paused", ex.ignore_paused,
                     "exec into a paused container too (the process waits until it is resumed)");
  exec_app->add_option("id", a.id, "container id")->required();
  exec_app->prefix_command();
}

// Each verb with its flags, built on its own: a command line that names one builds only that one
// (CLI11's options are most of the start-up of a short verb: the whole table costs about 0.2 ms,
// a run's create and start about 5). Help and anything unexpected build them all.
using AddFlags = void (*)(CLI::App* verb);
struct OciVerb {
  const char* name;
  const char* help;
  Action run;
  AddFlags flags;  // the verb's flags and words
};

// A verb whose only word is the container id.
void id_only(CLI::App* c) { c->add_option("id", a.id, "container id")->required(); }

const OciVerb kOciVerbs[] = {
    {"version", "print the version (as --version)", run_oci_version, [](CLI::App*) {}},
    {"spec", "write a starting config.json into the bundle", run_spec,
     [](CLI::App* spec) {
       spec->add_flag("--rootless", a.rootless_spec, "for a user without privileges");
       spec->add_option("-b,--bundle", a.bundle, "the bundle directory (default: the current one)");
     }},
    {"features", "print the features document", run_features, [](CLI::App*) {}},
    {"plan", "print what create would do with a bundle, run nothing", run_plan,
     [](CLI::App* plan) {
       plan->add_option("-b,--bundle", a.bundle, "the bundle directory (default: the current one)");
       plan->add_flag("--no-pivot", a.no_pivot, "as create --no-pivot");
       plan->add_option("--preserve-fds", a.preserve_fds, "as create --preserve-fds");
       plan->add_flag("--json", a.json, "one JSON object");
       plan->add_option("id", a.id, "the container id it would have (default: plan)");
     }},
    {"state", "print a container's state document", run_state, id_only},
    {"list", "list containers", run_list,
     [](CLI::App* list) {
       list->add_option("-f,--format", a.format, "table or json")->check(CLI::IsMember({"table", "json"}));
       list->add_flag("-q,--quiet", a.quiet, "ids only");
     }},
    {"kill", "send a signal to a container", run_kill,
     [](CLI::App* kill) {
       kill->add_flag("-a,--all", a.all, "to every process of the container");
       kill->add_option("id", a.id, "container id")->required();
       kill->add_option("signal", a.signal, "signal name or number (default SIGTERM)");
     }},
    {"delete", "remove a stopped container", run_delete,
     [](CLI::App* del) {
       del->add_flag("-f,--force", a.force, "kill it first when it still runs");
       id_only(del);
     }},
    {"create", "create a container from a bundle", run_create, add_create_flags},
    {"run", "create and start a container", run_run,
     [](CLI::App* run) {
       add_create_flags(run);
       run->add_flag("-d,--detach", a.detach, "do not wait for it");
       run->add_flag("--keep", a.keep, "keep its state after it exits");
     }},
    {"start", "run a created container's process", run_start, id_only},
    {"exec", "run a new process in a running container", run_exec, add_exec_flags},
    {"ps", "list a container's processes (ps options may follow the id)", run_ps,
     [](CLI::App* ps) {
       ps->add_option("-f,--format", a.format, "table or json")->check(CLI::IsMember({"table", "json"}));
       ps->add_option("id", a.id, "container id")->required();
       ps->prefix_command();  // the words after the id are ps(1)'s options, after "--" or not
       // CLI11 hands the words after a "--" that follows the id to the parent: read once all is parsed.
       a.ps_apps = {ps, ps->get_parent()};
     }},
    {"pause", "freeze a container's processes", run_pause, id_only},
    {"resume", "thaw a paused container", run_resume, id_only},
    {"update", "change a container's resources", run_update,
     [](CLI::App* update) {
       add_oci_update_flags(update, a.update);
       id_only(update);
     }},
    {"events", "a container's statistics, once (--stats) or every --interval", run_events,
     [](CLI::App* events) {
       events->add_flag("--stats", a.stats, "print one stats document and exit");
       events->add_option("--interval", a.interval, "between stats documents (default 5s); --stats prints once");
       id_only(events);
     }},
};

void register_oci(CLI::App& app, VerbContext& ctx) {
  CLI::App* oci = app.add_subcommand("oci", "an OCI runtime with runc's command line (also as kern-oci)");
  oci->require_subcommand(1);
  oci->add_option("--root", g.root, "where container state is kept");
  oci->add_option("--log", g.log_file, "append errors to this file");
  oci->add_option("--log-format", g.log_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  oci->add_flag("--systemd-cgroup", g.systemd_cgroup, "place containers' cgroups through systemd");
  oci->add_flag("--debug", g.debug, "more output on the log");
  oci->add_option("--rootless", g.rootless, "auto, true or false")->check(CLI::IsMember({"auto", "true", "false"}));
  oci->set_version_flag("-v,--version", [] {
    std::string text = oci_version_text();
    return text.substr(0, text.size() - 1);  // CLI11 adds the newline
  });
  const OciVerb* only = nullptr;
  if (!ctx.all_flags) {
    constexpr int n = sizeof kOciVerbs / sizeof kOciVerbs[0];
    const char* names[n];
    for (int i = 0; i < n; ++i) names[i] = kOciVerbs[i].name;
    const RawArgs& r = raw_args();
    int v = oci_verb_named(r.argc, r.argv, names, n);
    if (v >= 0) only = &kOciVerbs[v];
  }
  // A command line that fails to parse with one verb is parsed again with all (app.cc), so its
  // error is the full table's.
  if (only) ctx.flags_filtered = true;
  for (const OciVerb& v : kOciVerbs)
    if (!only || only == &v) v.flags(verb(oci, ctx, v.name, v.help, v.run));
}

const VerbRegistration reg{60, "oci", &register_oci};

}  // namespace oci_verb
}  // namespace
}  // namespace kern::cli
