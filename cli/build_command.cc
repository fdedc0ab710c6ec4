// `kern build [-t NAME]... [-f FILE] [--build-arg K=V]... [--target STAGE] [--no-cache]
// [--network none|host|private] [--secret id=X,src=F]... [--label K=V]... [--progress plain|tty|auto]
// [-q] [--iidfile F] [CONTEXT]`: an image from a Dockerfile, rootless and without a daemon
// (kern-build(1)); the work is build_exec.h's.
#include <unistd.h>

#include "cli/build_exec.h"
#include "cli/verb.h"
#include "oci/reference.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {
namespace build_verb {

BuildOptions g_opts;
std::string g_progress = "auto";

Result<int> run_build_verb() {
  if (g_progress != "auto" && g_progress != "plain" && g_progress != "tty")
    return fail(Error(ErrorKind::usage, 0, "--progress " + g_progress + ": auto, plain or tty"));
  if (g_opts.network != "none" && g_opts.network != "host" && g_opts.network != "private")
    return fail(Error(ErrorKind::usage, 0, "--network " + g_opts.network + ": kern build runs RUN steps with none, host or private")
                    .with_hint("none (the default) has no network; private has a network of its own (pasta)"));
  // A name that cannot be given is refused before anything is built.
  for (const auto& t : g_opts.tags) {
    auto ref = oci::parse_reference(t);
    if (!ref || ref->kind != oci::Reference::Kind::registry || !ref->digest.empty())
      return fail(Error(ErrorKind::usage, 0, "-t \"" + t + "\": not an image name")
                      .with_hint("-t NAME[:TAG], for example -t app:1 or -t registry.example/team/app:1"));
  }
  KERN_TRY_ASSIGN(BuildResult r, run_build(g_opts));
  if (g_opts.quiet) KERN_TRY(sys::write_all(STDOUT_FILENO, r.image_id + "\n", "stdout"));
  else KERN_TRY(sys::write_all(STDOUT_FILENO, r.image_id.substr(7) + "\n", "stdout"));
  return 0;
}

void register_build(CLI::App& app, VerbContext& ctx) {
  g_opts = BuildOptions{};
  g_progress = "auto";
  CLI::App* c = app.add_subcommand("build", "build an image from a Dockerfile");
  c->add_option("-t,--tag", g_opts.tags, "name the image NAME[:TAG] (repeatable)")->allow_extra_args(false);
  c->add_option("-f,--file", g_opts.file, "the Dockerfile, - for standard input (default: CONTEXT/Dockerfile, else Containerfile)");
  c->add_flag("--pull", g_opts.pull, "pull the FROM images again, even when the store has them");
  c->add_option("--build-arg", g_opts.build_args, "an ARG's value, K=V (or K: from the environment)")->allow_extra_args(false);
  c->add_option("--target", g_opts.target, "build this stage, and what it needs, only");
  c->add_flag("--no-cache", g_opts.no_cache, "run every step, taking nothing from the build cache");
  c->add_option("--network", g_opts.network, "RUN steps' network: none (default), private or host");
  c->add_option("--secret", g_opts.secrets, "id=NAME,src=FILE: for RUN --mount=type=secret,id=NAME")->allow_extra_args(false);
  c->add_option("--label", g_opts.labels, "a label of the image, K=V (repeatable)")->allow_extra_args(false);
  c->add_option("--progress", g_progress, "auto, plain or tty (kern prints plain steps)");
  c->add_flag("-q,--quiet", g_opts.quiet, "print only the image id (a step's output only when it fails)");
  c->add_option("--iidfile", g_opts.iidfile, "write the image id to this file");
  c->add_option("CONTEXT", g_opts.context, "the build context directory (default: .)");
  c->callback([&ctx] { ctx.action = run_build_verb; });
}

const VerbRegistration reg{39, "build", &register_build};

}  // namespace build_verb
}  // namespace
}  // namespace kern::cli
