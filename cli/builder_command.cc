// `kern builder prune [-a] [-f]`: removes kern build's cache: the entries that map step keys to
// images, the images only the cache kept (unnamed), and then what no image needs any more, as
// `docker builder prune` does. RUN --mount=type=cache directories go too with -a.
#include <unistd.h>

#include "cli/build_cache.h"
#include "cli/verb.h"
#include "oci/store.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/human_size.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
namespace builder_verb {

bool g_all = false, g_force = false;

Result<int> run_prune() {
  (void)g_force;  // kern asks no questions: -f is accepted for docker's scripts
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  BuildCache cache(store);
  auto entries = cache.entries();
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(true));
  size_t images = 0;
  for (const auto& [key, digest] : entries) {
    auto rec = store.find_image(digest);
    if (!rec || !*rec) continue;
    // An image a name points at stays (kern build's result, tagged).
    auto refs = store.list_refs();
    bool named = false;
    if (refs)
      for (const auto& r : refs->records) named |= r.digest == digest;
    if (named) continue;
    if (store.remove_image(digest)) ++images;
  }
  size_t removed = cache.clear();
  if (g_all) (void)sys::remove_tree(AT_FDCWD, store.root() + "/build-mounts");
  KERN_TRY_ASSIGN(oci::Store::GcResult gc, store.collect(false));
  std::string out = "Deleted build cache: " + std::to_string(removed) + " entries, " + std::to_string(images) +
                    " images\nTotal reclaimed space: " + sys::human_size(gc.bytes) + "\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_builder(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("builder", "manage kern build's cache");
  c->require_subcommand(1);
  CLI::App* p = c->add_subcommand("prune", "remove the build cache");
  p->add_flag("-a,--all", g_all, "also the directories of RUN --mount=type=cache");
  p->add_flag("-f,--force", g_force, "do not ask (kern never asks)");
  p->callback([&ctx] { ctx.action = run_prune; });
}

const VerbRegistration reg{39, "builder", &register_builder};

}  // namespace builder_verb
}  // namespace
}  // namespace kern::cli
