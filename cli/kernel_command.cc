// `kern kernel ...`: warm kernels (kern-kernel(1)). start and serve build a box like
// `kern box` and run a kernel supervisor (runtime/kernel/kernel.h); the other subcommands
// are clients of a started kernel's unix socket (runtime/kernel/client.h).
#include <unistd.h>

#include <cstdio>

#include "cli/box_options.h"
#include "cli/spec_builder.h"
#include "cli/volume_use.h"
#include "cli/verb.h"
#include "profiles/units.h"
#include "runtime/kernel/client.h"
#include "runtime/kernel/kernel.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace kernel_verb {

using json = nlohmann::json;

struct KernelFlags {
  BoxOptions box;
  std::string lang, prompt, output_limit;
  double grace_s = 2.0;
  double ready_timeout_s = 60.0;
  bool json_out = false;
};

KernelFlags g_start, g_serve;
std::string g_name, g_code, g_cell;
double g_timeout = 0;
bool g_json = false;

Error usage(const std::string& m) { return Error(ErrorKind::usage, 0, m); }

Result<kernel::KernelConfig> kernel_config(const KernelFlags& f, const std::string& verb) {
  kernel::KernelConfig cfg;
  const auto& cmd = trailing_command();
  if (!f.lang.empty()) {
    KERN_TRY_ASSIGN(cfg.lang, kernel::parse_lang(f.lang));
  } else {
    cfg.lang = cmd.empty() ? kernel::Lang::python : kernel::Lang::repl;
  }
  if (!f.prompt.empty() && cfg.lang != kernel::Lang::repl)
    return fail(usage(verb + ": --prompt is for a REPL given after \"--\", not --lang " + f.lang));
  cfg.prompt = f.prompt;
  if (!f.output_limit.empty()) {
    KERN_TRY_ASSIGN(cfg.output_limit, profiles::parse_size(f.output_limit));
    if (cfg.output_limit == 0) return fail(usage(verb + ": --output-limit must be above 0"));
  }
  if (f.grace_s < 0 || f.grace_s > 3600) return fail(usage(verb + ": --grace must be 0..3600 s"));
  if (f.ready_timeout_s <= 0 || f.ready_timeout_s > 3600)
    return fail(usage(verb + ": --ready-timeout must be above 0 and at most 3600 s"));
  cfg.grace_ms = static_cast<unsigned>(f.grace_s * 1000);
  cfg.ready_timeout_ms = static_cast<unsigned>(f.ready_timeout_s * 1000);
  if (f.box.tty || f.box.interactive) return fail(usage(verb + ": a kernel has no terminal (-i/-t)"));
  if (f.box.report_fd) return fail(usage(verb + ": --report-fd is not available for kernels"));
  return cfg;
}

// Box spec + kernel config from the flags; nullopt result when --plan/--show-config printed.
Result<bool> prepare(KernelFlags& f, const std::string& verb, BuiltBox& built, kernel::KernelConfig& cfg) {
  KERN_TRY_ASSIGN(cfg, kernel_config(f, verb));
  f.box.command.clear();
  KERN_TRY_ASSIGN(built, build_box_spec(f.box, BoxClient{verb, false}));  // a kernel's box: --net none
  KERN_TRY(refuse_seccomp_audit(built.spec, verb));
  KERN_TRY_ASSIGN(built.spec.argv, kernel::driver_argv(cfg.lang, trailing_command()));
  cfg.name = built.spec.name;
  if (f.box.show_config) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, f.json_out ? show_config_json(built) : show_config(built), "stdout"));
    return false;
  }
  if (f.box.plan) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, f.json_out ? show_plan_json(built) : show_plan(built), "stdout"));
    return false;
  }
  return true;
}

Result<int> start_verb() {
  if (g_start.box.positionals.empty())
    return fail(usage("kern kernel start: give the kernel's NAME"));
  BuiltBox built;
  kernel::KernelConfig cfg;
  KERN_TRY_ASSIGN(bool go, prepare(g_start, "kern kernel start", built, cfg));
  if (!go) return 0;
  std::string ready;
  KERN_TRY(with_box_volumes(built.spec, [&] { return kernel::start_kernel(built.spec, cfg, &ready); }));
  if (g_start.json_out) KERN_TRY(sys::write_all(STDOUT_FILENO, ready + "\n", "stdout"));
  return 0;
}

Result<int> serve_verb() {
  BuiltBox built;
  kernel::KernelConfig cfg;
  KERN_TRY_ASSIGN(bool go, prepare(g_serve, "kern kernel serve", built, cfg));
  if (!go) return 0;
  return kernel::serve_kernel(built.spec, cfg, STDIN_FILENO, STDOUT_FILENO);
}

Result<std::string> cell_code() {
  if (has_trailing_separator()) {
    if (!g_code.empty()) return fail(usage("give the code either before or after \"--\", not both"));
    std::string code;
    for (const auto& w : trailing_command()) code += (code.empty() ? "" : " ") + w;
    return code;
  }
  if (g_code == "-") return sys::read_all(STDIN_FILENO, kernel::kMaxRequestLine / 2, "stdin");
  return g_code;
}

Result<json> ask(const json& req) {
  KERN_TRY_ASSIGN(UniqueFd fd, kernel::connect_kernel(g_name));
  return kernel::kernel_request(fd.get(), req);
}

Status print_line(const json& j) {
  return sys::write_all(STDOUT_FILENO, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "stdout");
}

// The text a person wants from a result: its stdout, stderr and each result's text/plain.
Status print_human(const json& r) {
  if (r.contains("stdout") && r["stdout"].is_string()) KERN_TRY(sys::write_all(STDOUT_FILENO, r["stdout"].get<std::string>(), "stdout"));
  if (r.contains("stderr") && r["stderr"].is_string()) KERN_TRY(sys::write_all(STDERR_FILENO, r["stderr"].get<std::string>(), "stderr"));
  if (r.contains("results") && r["results"].is_array()) {
    for (const auto& item : r["results"]) {
      if (!item.is_object()) continue;
      std::string text;
      if (item.contains("text/plain") && item["text/plain"].is_string()) {
        text = item["text/plain"].get<std::string>();
      } else {
        for (auto it = item.begin(); it != item.end(); ++it) text += (text.empty() ? "<" : ", ") + it.key();
        text += " result>";
      }
      KERN_TRY(sys::write_all(STDOUT_FILENO, text + "\n", "stdout"));
    }
  }
  return {};
}

std::string answer_error(const json& r) {
  std::string s = r.value("status", "error");
  if (r.contains("error") && r["error"].is_string()) s += ": " + r["error"].get<std::string>();
  return s;
}

Result<int> run_verb() {
  KERN_TRY_ASSIGN(std::string code, cell_code());
  json req = {{"op", "run"}, {"code", code}};
  if (g_timeout > 0) req["timeout"] = g_timeout;
  KERN_TRY_ASSIGN(json r, ask(req));
  std::string status = r.value("status", "error");
  if (g_json) {
    KERN_TRY(print_line(r));
    return status == "done" ? 0 : kExitVerbFailed;
  }
  if (status == "done" || status == "timeout") KERN_TRY(print_human(r));
  if (status != "done") {
    log::error("kernel \"" + g_name + "\": " + answer_error(r));
    return kExitVerbFailed;
  }
  return r.contains("rc") && r["rc"].is_number_integer() ? (r["rc"].get<int>() & 0xff) : 0;
}

Result<int> fire_verb() {
  KERN_TRY_ASSIGN(std::string code, cell_code());
  KERN_TRY_ASSIGN(json r, ask({{"op", "fire"}, {"code", code}}));
  if (g_json) KERN_TRY(print_line(r));
  if (r.value("status", "") != "running") {
    if (!g_json) log::error("kernel \"" + g_name + "\": " + answer_error(r));
    return kExitVerbFailed;
  }
  if (!g_json) KERN_TRY(sys::write_all(STDOUT_FILENO, r.value("cell_id", "") + "\n", "stdout"));
  return 0;
}

Result<int> poll_verb() {
  json req = {{"op", "poll"}};
  if (!g_cell.empty()) req["cell_id"] = g_cell;
  KERN_TRY_ASSIGN(json r, ask(req));
  KERN_TRY(print_line(r));
  return r.value("status", "error") == "error" ? kExitVerbFailed : 0;
}

Result<int> simple_verb(const char* op) {
  KERN_TRY_ASSIGN(json r, ask({{"op", op}}));
  if (r.value("status", "") == "error") {
    log::error("kernel \"" + g_name + "\": " + answer_error(r));
    return kExitVerbFailed;
  }
  if (std::string(op) == "status") KERN_TRY(print_line(r));
  return 0;
}

Result<int> stop_verb() {
  KERN_TRY_ASSIGN(UniqueFd fd, kernel::connect_kernel(g_name));
  KERN_TRY_ASSIGN(json r, kernel::kernel_request(fd.get(), {{"op", "stop"}}));
  // The supervisor closes the socket once the box is gone: wait for that, so that `stop`
  // returning means nothing of the kernel is left.
  char b[4096];
  while (::read(fd.get(), b, sizeof b) > 0) {
  }
  return 0;
}

Result<int> ls_verb() {
  json all = json::array();
  for (const auto& name : kernel::kernel_names()) {
    auto fd = kernel::connect_kernel(name);
    if (!fd) continue;  // a stale socket: connect_kernel removed it
    auto r = kernel::kernel_request(fd->get(), {{"op", "status"}});
    if (!r) continue;
    json j = *r;
    j.erase("op");
    j.erase("status");
    all.push_back(std::move(j));
  }
  if (g_json) {
    KERN_TRY(print_line(all));
    return 0;
  }
  std::string out = "NAME                 LANG    STATE    CELLS  PID\n";
  for (const auto& j : all) {
    char line[256];
    std::snprintf(line, sizeof line, "%-20s %-7s %-8s %-6llu %d\n", j.value("name", "").c_str(),
                  j.value("lang", "").c_str(), j.value("state", "").c_str(),
                  static_cast<unsigned long long>(j.value("cells", 0ull)), j.value("pid", 0));
    out += line;
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void add_kernel_flags(CLI::App* c, KernelFlags& f) {
  add_box_flags(c, f.box);
  c->add_option("--lang", f.lang, "python (default), node or bash; a REPL: its command after --");
  c->add_option("--prompt", f.prompt, "REPL kernels: regex the REPL's prompt matches at the end of its output");
  c->add_option("--output-limit", f.output_limit, "bytes kept per stream per cell (default 64m)");
  c->add_option("--grace", f.grace_s, "seconds a cell past its deadline gets after SIGINT (default 2)");
  c->add_option("--ready-timeout", f.ready_timeout_s, "seconds the interpreter gets to start (default 60)");
}

void register_kernel(CLI::App& app, VerbContext& ctx) {
  CLI::App* k = app.add_subcommand("kernel", "warm kernels: one interpreter in a box, many cells");
  k->require_subcommand(1);

  CLI::App* start = k->add_subcommand("start", "start a named kernel; returns once it is ready");
  add_kernel_flags(start, g_start);
  start->add_flag("--json", g_start.json_out, "print the ready object");
  start->callback([&ctx] {
    ctx.table = ExitTable::box;
    ctx.action = start_verb;
  });

  CLI::App* serve = k->add_subcommand("serve", "a kernel speaking the protocol on stdin/stdout");
  add_kernel_flags(serve, g_serve);
  serve->callback([&ctx] {
    ctx.table = ExitTable::box;
    ctx.action = serve_verb;
  });

  CLI::App* run = k->add_subcommand("run", "run a cell and wait for its result");
  run->add_option("name", g_name, "kernel name")->required();
  run->add_option("code", g_code, "the cell's code, or - for stdin (or after --)");
  run->add_option("-t,--timeout", g_timeout, "deadline in seconds (SIGINT, then teardown)");
  run->add_flag("--json", g_json, "print the result object");
  run->callback([&ctx] { ctx.action = run_verb; });

  CLI::App* fire = k->add_subcommand("fire", "start a cell and return its id at once");
  fire->add_option("name", g_name, "kernel name")->required();
  fire->add_option("code", g_code, "the cell's code, or - for stdin (or after --)");
  fire->add_flag("--json", g_json, "print the answer object");
  fire->callback([&ctx] { ctx.action = fire_verb; });

  CLI::App* poll = k->add_subcommand("poll", "a cell's result (running while it runs)");
  poll->add_option("name", g_name, "kernel name")->required();
  poll->add_option("cell", g_cell, "cell id (default: the latest)");
  poll->callback([&ctx] { ctx.action = poll_verb; });

  CLI::App* intr = k->add_subcommand("int", "interrupt the running cell (SIGINT)");
  intr->add_option("name", g_name, "kernel name")->required();
  intr->callback([&ctx] { ctx.action = [] { return simple_verb("int"); }; });

  CLI::App* stop = k->add_subcommand("stop", "stop a kernel; nothing of it is left");
  stop->add_option("name", g_name, "kernel name")->required();
  stop->callback([&ctx] { ctx.action = stop_verb; });

  CLI::App* status = k->add_subcommand("status", "a kernel's state as JSON");
  status->add_option("name", g_name, "kernel name")->required();
  status->callback([&ctx] { ctx.action = [] { return simple_verb("status"); }; });

  CLI::App* ls = k->add_subcommand("ls", "list kernels");
  ls->add_flag("--json", g_json, "a JSON array");
  ls->callback([&ctx] { ctx.action = ls_verb; });
}

const VerbRegistration reg{60, "kernel", &register_kernel};

}  // namespace kernel_verb
}  // namespace
}  // namespace kern::cli
