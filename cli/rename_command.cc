// `kern rename NAME NEW_NAME`: a detached box, running or exited, takes another name, as
// `docker rename` does. A running box's supervisor moves it (its record, log, socket, kept upper
// and lockdown record; a restart policy's next box is made under the new name); an exited box's
// files are moved here. Its cgroup keeps the name it was made with. A foreground box or a warm
// kernel is held by the process that started it under its name: refused, with the reason.
#include <unistd.h>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/detached/wire.h"
#include "runtime/registry.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace rename_verb {

std::string g_from, g_to;

Result<int> run_rename() {
  if (!valid_box_name(g_to))
    return fail(Error(ErrorKind::usage, 0, "invalid box name \"" + log::sanitize(g_to) + "\"")
                    .with_hint("letters, digits, '.', '_' and '-', at most 64, not starting with '.' or '-'"));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_from));
  if (g_to == rec.name) return 0;
  if (rec.kind == "kernel")
    return fail(Error(ErrorKind::config, 0, "\"" + rec.name + "\" is a warm kernel: its supervisor answers to its name")
                    .with_hint("stop it and start it again under the new name"));
  if (!rec.detached)
    return fail(Error(ErrorKind::config, 0,
                      "the box \"" + rec.name + "\" runs in the foreground: its kern process holds the name")
                    .with_hint("name it when it starts (kern box --name NAME), or run it detached (kern box -d)"));
  if (record_exited(rec)) {
    KERN_TRY(rename_exited_box(rt, rec.name, g_to));
    return 0;
  }
  KERN_TRY_ASSIGN(UniqueFd fd, ask_box(rt, rec.name, "rename " + g_to));
  std::string buf;
  KERN_TRY_ASSIGN(std::optional<WireFrame> f, read_frame(fd.get(), buf));
  if (!f) return fail(ErrorKind::config, 0, "the box \"" + rec.name + "\" ended before it was renamed");
  if (f->type == WireType::error) return fail(ErrorKind::config, 0, "rename \"" + rec.name + "\": " + f->payload);
  return 0;
}

void register_rename(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("rename", "give a detached box another name");
  c->add_option("name", g_from, "the box's name")->required();
  c->add_option("new_name", g_to, "its new name")->required();
  c->callback([&ctx] { ctx.action = run_rename; });
}

const VerbRegistration reg{37, "rename", &register_rename};

}  // namespace rename_verb
}  // namespace
}  // namespace kern::cli
