// `kern load [-i FILE] [-q] [--json]`: import every image of a docker-archive (`docker save`) or
// OCI archive tar, from FILE or stdin. Prints "Loaded image: NAME" (or the digest of an unnamed
// image), or with --json one object {"images":[...]} (cli/image_json.h). Per-layer progress on
// stderr (oci/progress.h), none with -q.
#include <fcntl.h>
#include <unistd.h>

#include "cli/image_json.h"
#include "cli/verb.h"
#include "oci/archive_source.h"
#include "oci/image_sources.h"
#include "oci/progress.h"
#include "oci/store.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
namespace load_verb {

std::string g_input;
bool g_quiet = false;
bool g_json = false;

// The archive is read twice (small files first, then layers), so stdin is first copied into the
// store's staging dir, once its first block shows an archive: a stream that is none (/dev/zero)
// is refused before anything is written.
Result<std::string> spool_stdin(oci::Staging& staging) {
  std::vector<char> buf(1 << 20);
  size_t head = 0;
  bool checked = false;
  UniqueFd out;
  std::string file = staging.path() + "/stdin.tar";
  for (;;) {
    size_t want = checked ? buf.size() : 512 - head;
    ssize_t n = ::read(STDIN_FILENO, buf.data() + (checked ? 0 : head), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read stdin", ErrorKind::image);
    size_t have = checked ? static_cast<size_t>(n) : head + static_cast<size_t>(n);
    if (!checked) {
      head = have;
      if (n > 0 && head < 512) continue;
      if (!oci::archive_head_plausible(std::string_view(buf.data(), head)))
        return fail(Error(ErrorKind::image, 0,
                          head == 0 ? "standard input is empty, not an image archive"
                                    : "standard input is not an image archive: its first bytes are neither a tar "
                                      "header nor gzip, zstd or xz data")
                        .with_hint("kern load reads a docker-archive or OCI archive tar (docker save, skopeo copy)"));
      checked = true;
      KERN_TRY_ASSIGN(out, sys::open_at(staging.fd(), "stdin.tar", O_WRONLY | O_CREAT | O_EXCL, 0600));
    }
    if (have > 0) KERN_TRY(sys::write_all(out.get(), std::string_view(buf.data(), have), file));
    if (n == 0) break;
  }
  return file;
}

Result<int> run_load() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  std::optional<oci::Staging> spool;
  std::string path = g_input;
  if (path.empty() || path == "-") {
    if (::isatty(STDIN_FILENO))
      return fail(ErrorKind::usage, 0, "kern load reads an archive from stdin; give -i FILE or redirect stdin");
    KERN_TRY_ASSIGN(oci::Staging s, store.begin_staging());
    spool.emplace(std::move(s));
    KERN_TRY_ASSIGN(path, spool_stdin(*spool));
  }
  auto display = oci::progress::stderr_display(g_quiet ? oci::progress::Mode::none : oci::progress::Mode::lines);
  std::optional<oci::progress::Scope> scope(display.get());
  KERN_TRY_ASSIGN(auto records, oci::load_archive(store, path));
  scope.reset();
  display.reset();  // the last redraw before stdout
  if (g_json) {
    nlohmann::ordered_json images = nlohmann::ordered_json::array();
    for (const auto& loaded : records) {
      KERN_TRY_ASSIGN(auto j, image_json(store, loaded.image, loaded.names.empty() ? "" : loaded.names.front()));
      j["names"] = loaded.names;
      images.push_back(std::move(j));
    }
    KERN_TRY(sys::write_all(STDOUT_FILENO, nlohmann::ordered_json{{"images", images}}.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", "stdout"));
    return 0;
  }
  std::string out;
  for (const auto& loaded : records) {
    for (const auto& n : loaded.names) out += "Loaded image: " + log::sanitize(n) + "\n";
    if (loaded.names.empty()) out += "Loaded image ID: " + loaded.image.digest + "\n";
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_load(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("load", "import images from a docker-archive or OCI archive tar");
  c->add_option("-i,--input", g_input, "archive file (default: stdin)");
  c->add_flag("-q,--quiet", g_quiet, "no progress output");
  c->add_flag("--json", g_json, "print the loaded images as one JSON object");
  c->callback([&ctx] { ctx.action = run_load; });
}

const VerbRegistration reg{44, "load", &register_load};

}  // namespace load_verb
}  // namespace
}  // namespace kern::cli
