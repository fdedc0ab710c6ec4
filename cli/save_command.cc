// `kern save REF... [-o FILE]`: write images of the store as one docker-archive (what
// `docker load`, `podman load` and `kern load` read), to FILE or to stdout.
#include <fcntl.h>
#include <unistd.h>

#include "cli/verb.h"
#include "oci/exporter.h"
#include "oci/progress.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
namespace save_verb {

std::vector<std::string> g_refs;
std::string g_output;
bool g_quiet = false;

// The names an image is saved under: the one asked for, or (asked by id) every name it has.
Result<oci::SaveItem> save_item(const oci::Store& store, const std::string& text) {
  oci::SaveItem item;
  KERN_TRY_ASSIGN(item.image, oci::lookup_image(store, text));
  auto ref = oci::parse_reference(text);
  if (ref && ref->kind == oci::Reference::Kind::registry && ref->digest.empty()) {
    item.names.push_back(ref->str());
    return item;
  }
  KERN_TRY_ASSIGN(oci::Store::Listing refs, store.list_refs());
  for (const auto& e : refs.unreadable) log::warning("an image name may be missing from the archive: " + e.what());
  for (const auto& r : refs.records)
    if (r.config_digest == item.image.config_digest && r.ref.rfind("oci:", 0) != 0 &&
        r.ref.rfind("docker-archive:", 0) != 0)
      item.names.push_back(r.ref);
  return item;
}

Result<int> run_save() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(false));
  std::vector<oci::SaveItem> items;
  for (const auto& text : g_refs) {
    KERN_TRY_ASSIGN(oci::SaveItem item, save_item(store, text));
    items.push_back(std::move(item));
  }
  UniqueFd file;
  int fd = STDOUT_FILENO;
  std::string tmp;
  if (!g_output.empty() && g_output != "-") {
    tmp = g_output + ".kern-partial";
    KERN_TRY_ASSIGN(file, sys::open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    fd = file.get();
  } else if (::isatty(STDOUT_FILENO)) {
    return fail(ErrorKind::usage, 0, "refusing to write an archive to a terminal; give -o FILE or redirect stdout");
  }
  auto display = oci::progress::stderr_display(g_quiet ? oci::progress::Mode::none : oci::progress::Mode::lines);
  std::optional<oci::progress::Scope> scope(display.get());
  Status st = oci::save_docker_archive(store, items, fd);
  scope.reset();
  display.reset();
  if (!tmp.empty()) {
    if (!st) {
      ::unlink(tmp.c_str());
      return fail(std::move(st).error());
    }
    if (::rename(tmp.c_str(), g_output.c_str()) != 0) return fail_errno("rename \"" + g_output + "\"", ErrorKind::image);
  }
  KERN_TRY(std::move(st));
  return 0;
}

void register_save(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("save", "write images as one docker-archive tar");
  c->add_option("REF", g_refs, "image names or ids (several go into one archive)")->required();
  c->add_option("-o,--output", g_output, "output file (default: stdout)");
  c->add_flag("-q,--quiet", g_quiet, "no progress output");
  c->callback([&ctx] { ctx.action = run_save; });
}

const VerbRegistration reg{45, "save", &register_save};

}  // namespace save_verb
}  // namespace
}  // namespace kern::cli
