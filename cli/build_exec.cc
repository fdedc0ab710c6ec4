// The Dockerfile executor; see build_exec.h.
#include "cli/build_exec.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/build_cache.h"
#include "cli/build_config.h"
#include "cli/build_copy.h"
#include "cli/build_inputs.h"
#include "cli/build_run.h"
#include "oci/build/dockerfile.h"
#include "oci/build/dockerignore.h"
#include "oci/digest.h"
#include "oci/image_commit.h"
#include "oci/image_resolver.h"
#include "oci/manifest.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
using json = nlohmann::json;
using oci::build::Instruction;
namespace build_exec_parts {

std::string q(const std::string& s) { return "\"" + log::sanitize(s) + "\""; }

Error at_line(const Instruction& in, const std::string& what) {
  return Error(ErrorKind::usage, 0, "Dockerfile line " + std::to_string(in.line) + ": " + in.keyword + ": " + what);
}

std::optional<std::string> flag(const Instruction& in, const std::string& name) {
  for (const auto& f : in.flags)
    if (f.name == name) return f.value;
  return std::nullopt;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What a finished stage left: its image.
struct StageImage {
  oci::ImageRecord record;
};

class Executor {
 public:
  Executor(const BuildOptions& o, oci::Store& store) : o_(o), store_(store), cache_(store) {}

  Result<BuildResult> run() {
    KERN_TRY_ASSIGN(in_, read_build_inputs(o_));
    KERN_TRY_ASSIGN(plan_, plan_stages(in_.dockerfile, in_.build_args));
    KERN_TRY_ASSIGN(size_t target, target_stage(plan_, o_.target));
    KERN_TRY_ASSIGN(std::set<size_t> needed, needed_stages(plan_, target, in_.dockerfile.escape));
    for (size_t i : needed) KERN_TRY(build_stage(i, i == target));
    std::string unused;
    for (const auto& [k, v] : in_.build_args)
      if (!plan_.declared.count(k)) unused += (unused.empty() ? "" : ", ") + k;
    if (!unused.empty()) log::warning("--build-arg " + unused + ": no ARG of the Dockerfile takes it");
    return result_;
  }

 private:
  // --- output --------------------------------------------------------------------------------
  void say(const std::string& line) {
    if (o_.quiet) return;
    (void)sys::write_all(STDOUT_FILENO, line + "\n", "stdout");
  }

  // --- a stage -------------------------------------------------------------------------------
  struct State {
    size_t index = 0;
    std::optional<oci::ImageRecord> image;  // the image of the layers so far (none: scratch, empty)
    oci::ImageDraft draft;
    std::string key;
    bool dirty = false;  // config changed since `image`
    std::map<std::string, std::string> args;
    UniqueFd tree, tree_lock;
  };

  Status open_tree(State& s) {
    s.tree = UniqueFd();
    s.tree_lock = UniqueFd();
    if (!s.image) return {};
    KERN_TRY_ASSIGN(s.tree_lock, store_.lock_tree_shared(s.image->tree));
    KERN_TRY_ASSIGN(s.tree, sys::open_at(AT_FDCWD, store_.tree_path(s.image->tree), O_RDONLY | O_DIRECTORY));
    return {};
  }

  Status adopt(State& s, const oci::ImageRecord& rec) {
    s.image = rec;
    KERN_TRY_ASSIGN(s.draft, oci::draft_from(store_, &rec));
    s.dirty = false;
    return open_tree(s);
  }

  Result<oci::ImageRecord> image_of_ref(const std::string& ref) {
    KERN_TRY_ASSIGN(oci::ResolvedImage img,
                    oci::resolve_for_box(ref, o_.pull ? oci::PullPolicy::always : oci::PullPolicy::missing));
    KERN_TRY_ASSIGN(oci::ImageRecord rec, oci::lookup_image(store_, img.digest));
    return rec;
  }

  Status build_stage(size_t i, bool last) {
    StageDef& def = plan_.stages[i];
    State s;
    s.index = i;
    KERN_TRY_ASSIGN(auto words, from_words(plan_, def.from, in_.dockerfile.escape));
    size_t total = def.body.size() + 1;
    std::string prefix = "[" + std::to_string(i + 1) + "/" + std::to_string(plan_.stages.size()) + "] STEP ";
    say(prefix + "1/" + std::to_string(total) + ": " + def.from.source);
    if (auto st = stage_named(plan_, words[0], i)) {
      auto it = built_.find(*st);
      if (it == built_.end()) return fail(at_line(def.from, "stage " + q(words[0]) + " was not built"));
      KERN_TRY(adopt(s, it->second.record));
    } else if (lower(words[0]) == "scratch") {
      KERN_TRY_ASSIGN(s.draft, oci::draft_from(store_, nullptr));
    } else {
      KERN_TRY_ASSIGN(oci::ImageRecord rec, image_of_ref(words[0]));
      KERN_TRY(adopt(s, rec));
    }
    s.key = s.image ? "FROM " + s.image->digest : "FROM scratch";
    KERN_TRY_ASSIGN(s.key, step_key("", s.key));
    // ONBUILD triggers of the base run first, and are not passed on.
    std::vector<Instruction> body;
    json& c = s.draft.config["config"];
    if (c.contains("OnBuild") && c["OnBuild"].is_array()) {
      for (const auto& t : c["OnBuild"]) {
        if (!t.is_string()) continue;
        KERN_TRY_ASSIGN(auto df, oci::build::parse_dockerfile(t.get<std::string>() + "\n"));
        for (auto& in : df.instructions) body.push_back(std::move(in));
      }
      c.erase("OnBuild");
      s.dirty = true;
    }
    for (const auto& in : def.body) body.push_back(in);
    size_t step = 1;
    for (const auto& in : body) {
      ++step;
      if (step <= total) say(prefix + std::to_string(step) + "/" + std::to_string(total) + ": " + in.source);
      else say(prefix + "ONBUILD: " + in.source);
      Status done = run_instruction(s, in);
      if (!done) {
        // A bad word of the instruction (an expansion, a key=value pair) says where it is.
        const Error& e = done.error();
        if (e.kind() == ErrorKind::usage && e.message().rfind("Dockerfile line", 0) != 0) {
          std::string where = "Dockerfile line " + std::to_string(in.line) + ": ";
          if (e.message().rfind(in.keyword + " ", 0) != 0) where += in.keyword + ": ";
          Error at(e.kind(), e.sys_errno(), where + e.message());
          if (!e.explicit_hint().empty()) at.with_hint(e.explicit_hint());
          return fail(at);
        }
        return done;
      }
    }
    if (last) {
      for (const auto& l : o_.labels) {
        size_t eq = l.find('=');
        json& labels = s.draft.config["config"]["Labels"];
        if (!labels.is_object()) labels = json::object();
        labels[l.substr(0, eq)] = eq == std::string::npos ? "" : l.substr(eq + 1);
        s.dirty = true;
      }
    }
    if (s.dirty || !s.image) {
      // The config steps after the last layer are cached as one image too, so that a build that
      // changed nothing gives the same image (its times included).
      std::string labels;
      if (last)
        for (const auto& l : o_.labels) labels += "\n" + l;
      KERN_TRY_ASSIGN(std::string key, step_key(s.key, "config" + labels));
      std::optional<std::string> cached = o_.no_cache ? std::nullopt : cache_.find(key);
      auto rec = cached ? store_.find_image(*cached) : Result<std::optional<oci::ImageRecord>>(std::nullopt);
      if (rec && *rec) {
        s.image = **rec;
      } else {
        s.draft.config["created"] = oci::rfc3339(in_.now);
        KERN_TRY_ASSIGN(oci::ImageRecord made, oci::commit_image(store_, s.draft, {}, {}));
        KERN_TRY(mark_intermediate(made, !last));
        if (!o_.no_cache) cache_.put(key, made.digest);
        s.image = made;
      }
    }
    if (last) KERN_TRY(mark_intermediate(*s.image, false));
    built_[i] = StageImage{*s.image};
    if (last) {
      for (const auto& t : o_.tags) {
        auto named = oci::tag_image(store_, s.image->digest, t);
        if (!named) return fail(std::move(named).error());
      }
      say("COMMIT " + (o_.tags.empty() ? std::string() : o_.tags[0]));
      say("--> " + s.image->config_digest.substr(7, 12));
      for (const auto& t : o_.tags) say("Successfully tagged " + t);
      result_.image_id = s.image->config_digest;
      result_.digest = s.image->digest;
    }
    return {};
  }

  std::string created() const { return oci::rfc3339(in_.now); }

  // A step's image is listed by kern images -a only; the build's result always.
  Status mark_intermediate(oci::ImageRecord& rec, bool intermediate) {
    if (rec.intermediate == intermediate) return {};
    rec.intermediate = intermediate;
    return store_.write_image(rec);
  }

  // A step that made (or took from the cache) a layer: the image after it.
  Status commit_step(State& s, const std::string& key, const std::optional<oci::WrittenLayer>& layer,
                     const std::string& history) {
    oci::add_history(s.draft.config, created(), history, !layer, "kern build");
    s.draft.config["created"] = created();
    std::vector<oci::WrittenLayer> layers;
    if (layer) layers.push_back(*layer);
    KERN_TRY_ASSIGN(oci::ImageRecord rec, oci::commit_image(store_, s.draft, layers, {}));
    KERN_TRY(mark_intermediate(rec, true));
    if (!o_.no_cache) cache_.put(key, rec.digest);
    KERN_TRY(adopt(s, rec));
    ++result_.ran;
    return {};
  }

  // The cached image of `key`, taken as the stage's image; false on a miss.
  Result<bool> take_cached(State& s, const std::string& key) {
    if (o_.no_cache) return false;
    auto digest = cache_.find(key);
    if (!digest) return false;
    auto rec = store_.find_image(*digest);
    if (!rec || !*rec) return false;
    KERN_TRY(adopt(s, **rec));
    say("--> Using cache " + std::string(oci::digest_hex((*rec)->config_digest)).substr(0, 12));
    ++result_.cached;
    return true;
  }

  oci::build::Lookup lookup(const State& s) { return build_lookup(s.draft.config, s.args); }

  Status run_instruction(State& s, const Instruction& in) {
    ++result_.steps;
    const std::string& k = in.keyword;
    if (k == "ARG") {
      KERN_TRY_ASSIGN(auto kvs, oci::build::parse_key_values(in.text, lookup(s), in_.dockerfile.escape, false));
      for (const auto& kv : kvs) {
        std::optional<std::string> v;
        if (auto over = in_.build_args.find(kv.key); over != in_.build_args.end()) v = over->second;
        else if (kv.has_value) v = kv.value;
        else if (auto g = plan_.global_args.find(kv.key); g != plan_.global_args.end()) v = g->second;
        else if (auto p = predefined(kv.key)) v = p;
        if (v) s.args[kv.key] = *v;
        KERN_TRY_ASSIGN(s.key, step_key(s.key, "ARG " + kv.key + "=" + v.value_or("")));
      }
      return {};
    }
    if (k == "RUN") return run_run(s, in);
    if (k == "COPY" || k == "ADD") return run_copy(s, in);
    if (k == "FROM") return fail(at_line(in, "FROM starts a stage"));
    if (config_instruction(k)) {
      KERN_TRY_ASSIGN(std::string text, apply_config_instruction(s.draft.config, in, s.args, in_.dockerfile.escape));
      KERN_TRY_ASSIGN(s.key, step_key(s.key, text));
      if (k == "WORKDIR") return make_workdir(s, text);
      oci::add_history(s.draft.config, created(), text, true, "kern build");
      s.dirty = true;
      return {};
    }
    return fail(at_line(in, "not supported by kern build"));
  }

  // WORKDIR makes its directory when the image lacks it, as Docker does: a layer of its own.
  Status make_workdir(State& s, const std::string& text) {
    std::string wd = s.draft.config["config"].value("WorkingDir", std::string("/"));
    CopyRoot none{in_.context_fd.get(), "the build context", nullptr};
    CopyRequest req;
    req.dest = wd + "/";
    req.workdir = "/";
    req.now = in_.now;
    KERN_TRY_ASSIGN(CopyPlan plan, plan_copy(none, s.tree.valid() ? s.tree.get() : -1, req));
    if (plan.entries.empty()) {
      oci::add_history(s.draft.config, created(), text, true, "kern build");
      s.dirty = true;
      return {};
    }
    return layer_step(s, s.key, plan, text);
  }

  Status layer_step(State& s, const std::string& key, const CopyPlan& plan, const std::string& history) {
    KERN_TRY_ASSIGN(bool hit, take_cached(s, key));
    if (hit) return {};
    KERN_TRY_ASSIGN(oci::Staging staging, store_.begin_staging());
    KERN_TRY_ASSIGN(UniqueFd out, staging.create("layer.tar", O_WRONLY));
    KERN_TRY_ASSIGN(oci::LayerTar tar, oci::LayerTar::create(out.get(), in_.clamp));
    KERN_TRY(write_plan(plan, tar));
    KERN_TRY_ASSIGN(oci::LayerDigest d, tar.finish());
    return commit_step(s, key, oci::WrittenLayer{d, staging.fd(), "layer.tar"}, history);
  }

  std::optional<std::string> predefined(const std::string& name) {
    std::string arch = oci::host_architecture();
    if (name == "TARGETARCH" || name == "BUILDARCH") return arch;
    if (name == "TARGETOS" || name == "BUILDOS") return std::string("linux");
    if (name == "TARGETPLATFORM" || name == "BUILDPLATFORM") return "linux/" + arch;
    if (name == "TARGETVARIANT" || name == "BUILDVARIANT") return std::string(arch == "arm64" ? "v8" : "");
    return std::nullopt;
  }

  // --- COPY and ADD ----------------------------------------------------------------------------
  Status run_copy(State& s, const Instruction& in) {
    for (const auto& f : in.flags)
      if (f.name != "from" && f.name != "chown" && f.name != "chmod" && f.name != "link")
        return fail(at_line(in, "--" + f.name + " is not supported by kern build").with_hint("--from, --chown, --chmod and --link are"));
    std::vector<std::string> words;
    if (in.json) {
      for (const auto& a : in.args) {
        KERN_TRY_ASSIGN(std::string w, oci::build::expand(a, lookup(s), in_.dockerfile.escape));
        words.push_back(w);
      }
    } else {
      KERN_TRY_ASSIGN(words, oci::build::split_words(in.text, lookup(s), in_.dockerfile.escape, true));
    }
    CopyRequest req;
    req.add = in.keyword == "ADD";
    req.workdir = s.draft.config["config"].value("WorkingDir", std::string("/"));
    if (req.workdir.empty()) req.workdir = "/";
    req.now = in_.now;
    std::vector<std::string> rest;
    for (const auto& w : words) {
      if (w.rfind("<<", 0) == 0 && !in.heredocs.empty()) {
        std::string name = w.substr(2);
        if (!name.empty() && name[0] == '-') name = name.substr(1);
        if (name.size() >= 2 && (name[0] == '"' || name[0] == '\'')) name = name.substr(1, name.size() - 2);
        auto h = std::find_if(in.heredocs.begin(), in.heredocs.end(), [&](const auto& x) { return x.name == name; });
        if (h != in.heredocs.end()) {
          std::string body = h->body;
          if (h->expand) {
            KERN_TRY_ASSIGN(body, oci::build::expand(body, lookup(s), in_.dockerfile.escape));
          }
          req.inline_files.emplace_back(h->name, body);
          continue;
        }
      }
      rest.push_back(w);
    }
    if (rest.empty() || (rest.size() < 2 && req.inline_files.empty()))
      return fail(at_line(in, "needs a source and a destination").with_hint(in.keyword + " SRC... DEST"));
    req.dest = rest.back();
    rest.pop_back();
    req.sources = rest;
    if (auto m = flag(in, "chmod")) {
      char* end = nullptr;
      unsigned long v = std::strtoul(m->c_str(), &end, 8);
      if (m->empty() || *end || v > 07777) return fail(at_line(in, "--chmod=" + *m + ": an octal mode").with_hint("--chmod=0755"));
      req.chmod = static_cast<mode_t>(v);
    }
    if (auto c = flag(in, "chown")) {
      KERN_TRY_ASSIGN(std::string text, oci::build::expand(*c, lookup(s), in_.dockerfile.escape));
      KERN_TRY_ASSIGN(req.chown, resolve_chown(s.tree.valid() ? s.tree.get() : -1, text));
    }
    CopyRoot root{in_.context_fd.get(), "the build context " + q(in_.context_dir), in_.ignore ? &*in_.ignore : nullptr};
    UniqueFd from_tree, from_lock;
    std::string from_key;
    if (auto from = flag(in, "from")) {
      KERN_TRY_ASSIGN(std::string f, oci::build::expand(*from, lookup(s), in_.dockerfile.escape));
      oci::ImageRecord rec;
      if (auto st = stage_named(plan_, f, s.index)) {
        auto it = built_.find(*st);
        if (it == built_.end()) return fail(at_line(in, "stage " + q(f) + " was not built"));
        rec = it->second.record;
      } else {
        KERN_TRY_ASSIGN(rec, image_of_ref(f));
      }
      KERN_TRY_ASSIGN(from_lock, store_.lock_tree_shared(rec.tree));
      KERN_TRY_ASSIGN(from_tree, sys::open_at(AT_FDCWD, store_.tree_path(rec.tree), O_RDONLY | O_DIRECTORY));
      root = CopyRoot{from_tree.get(), "--from=" + f, nullptr};
      from_key = rec.digest;
    }
    KERN_TRY_ASSIGN(CopyPlan plan, plan_copy(root, s.tree.valid() ? s.tree.get() : -1, req));
    KERN_TRY_ASSIGN(std::string content, plan_digest(plan));
    std::string text = in.keyword;
    for (const auto& f : in.flags) text += " --" + f.name + "=" + f.value;
    for (const auto& src : req.sources) text += " " + src;
    for (const auto& [name, body] : req.inline_files) text += " <<" + name;
    text += " " + req.dest;
    KERN_TRY_ASSIGN(std::string key, step_key(s.key, text + "\n" + from_key + "\n" + content));
    s.key = key;
    return layer_step(s, key, plan, text);
  }

  // --- RUN ---------------------------------------------------------------------------------------
  Status run_run(State& s, const Instruction& in) {
    RunStep step;
    step.network = o_.network;
    step.quiet = o_.quiet;
    std::string mounts_text;
    for (const auto& f : in.flags) {
      if (f.name == "network") {
        if (f.value != "none" && f.value != "host" && f.value != "default" && f.value != "private")
          return fail(at_line(in, "--network=" + f.value + ": none, host, private or default"));
        if (f.value != "default") step.network = f.value;
      } else if (f.name == "mount") {
        KERN_TRY(run_mount(s, in, f.value, step));
        mounts_text += " --mount=" + f.value;
      } else {
        return fail(at_line(in, "--" + f.name + " is not supported by kern build").with_hint("--mount and --network are"));
      }
    }
    std::string shown;
    if (in.json) {
      step.argv = in.args;
      shown = json(in.args).dump();
    } else {
      std::string text = in.text;
      // RUN <<EOF (the whole command is the heredoc): the heredoc is the script.
      std::string trimmed = text;
      trimmed.erase(0, trimmed.find_first_not_of(" \t"));
      if (!in.heredocs.empty()) {
        const auto& h = in.heredocs.front();
        std::string body = h.body;
        if (h.expand) {
          KERN_TRY_ASSIGN(body, oci::build::expand(body, lookup(s), in_.dockerfile.escape));
        }
        if (trimmed.rfind("<<", 0) == 0 && trimmed.find_first_of(" \t") == std::string::npos) {
          step.argv = build_shell(s.draft.config);
          step.argv.push_back(body);
          shown = body;
        } else {
          // RUN CMD <<EOF: the command reads the heredoc on its stdin.
          size_t at = text.find("<<");
          size_t end = text.find_first_of(" \t", at);
          std::string cmd = text.substr(0, at) + (end == std::string::npos ? "" : text.substr(end));
          step.argv = build_shell(s.draft.config);
          step.argv.push_back(cmd);
          step.stdin_data = body;
          shown = text + "\n" + body;
        }
      } else {
        step.argv = build_shell(s.draft.config);
        step.argv.push_back(text);
        shown = text;
      }
    }
    // The ARGs in scope reach the step's environment (the config's Env wins), not the image.
    json env = s.draft.config["config"].value("Env", json::array());
    std::string arg_text;
    for (const auto& [k, v] : s.args) {
      if (env_value(s.draft.config, k)) continue;
      step.env.push_back(k + "=" + v);
      arg_text += " " + k + "=" + v;
    }
    for (const auto& e : env)
      if (e.is_string()) step.env.push_back(e.get<std::string>());
    const json& c = s.draft.config["config"];
    step.workdir = c.value("WorkingDir", std::string());
    if (step.workdir.empty()) step.workdir = "/";
    step.user = c.value("User", std::string());
    if (step.user.empty()) step.user = "0";
    std::string text = "RUN" + mounts_text + " " + shown;
    KERN_TRY_ASSIGN(std::string key,
                    step_key(s.key, text + "\nargs:" + arg_text + "\nnetwork:" + step.network + "\nuser:" + step.user +
                                        "\nworkdir:" + step.workdir + "\nenv:" + env.dump()));
    s.key = key;
    KERN_TRY_ASSIGN(bool hit, take_cached(s, key));
    if (hit) return {};
    if (!s.image)
      return fail(at_line(in, "a FROM scratch stage has no files to run a command with").with_hint("COPY a program in first"));
    step.image = s.image->digest;
    step.lower_fd = s.tree.get();
    if (s.image->has_owners) step.owners_path = store_.owners_path(s.image->tree);
    KERN_TRY_ASSIGN(oci::Staging staging, store_.begin_staging());
    KERN_TRY_ASSIGN(RunResult r, run_step(store_, step, staging.fd(), "layer.tar", in_.clamp));
    if (r.exit_code != 0) {
      Error e(ErrorKind::workload, 0, "Dockerfile line " + std::to_string(in.line) + ": RUN " +
                                          log::sanitize(shown.substr(0, 200)) + ": exit code " + std::to_string(r.exit_code));
      if (step.network == "none") e.with_hint("RUN steps have no network unless kern build --network private (or host)");
      return fail(e);
    }
    std::optional<oci::WrittenLayer> layer;
    if (r.layer_written) layer = oci::WrittenLayer{r.layer, staging.fd(), "layer.tar"};
    return commit_step(s, key, layer, text);
  }

  // RUN --mount=type=cache|secret|bind,...: a -v or --secret of the step's box.
  Status run_mount(State& s, const Instruction& in, const std::string& spec, RunStep& step) {
    std::map<std::string, std::string> kv;
    for (auto& [k, v] : comma_fields(spec, "true")) kv[k] = v;
    std::string type = kv.count("type") ? kv["type"] : "bind";
    std::string target = kv.count("target") ? kv["target"] : kv.count("dst") ? kv["dst"] : kv["destination"];
    if (type == "secret") {
      std::string id = kv.count("id") ? kv["id"] : "";
      if (id.empty() && !target.empty()) id = target.substr(target.rfind('/') + 1);
      auto it = in_.secrets.find(id);
      if (it == in_.secrets.end()) {
        if (kv.count("required") && kv["required"] == "true")
          return fail(at_line(in, "the secret " + q(id) + " was not given").with_hint("kern build --secret id=" + id + ",src=FILE"));
        return {};
      }
      if (!target.empty() && target != "/run/secrets/" + id)
        return fail(at_line(in, "a secret is mounted at /run/secrets/ID only").with_hint("drop target= or use target=/run/secrets/" + id));
      step.secrets.push_back(it->second + ":" + id);
      return {};
    }
    if (target.empty()) return fail(at_line(in, "--mount=" + spec + ": needs target="));
    if (type == "cache") {
      std::string id = kv.count("id") ? kv["id"] : target;
      KERN_TRY_ASSIGN(std::string d, oci::sha256_of(id));
      std::string dir = store_.root() + "/build-mounts";
      ::mkdir(dir.c_str(), 0700);
      dir += "/" + std::string(oci::digest_hex(d)).substr(0, 32);
      ::mkdir(dir.c_str(), 0755);
      step.volumes.push_back(dir + ":" + target);
      return {};
    }
    if (type == "bind") {
      if (kv.count("from"))
        return fail(at_line(in, "--mount=type=bind,from=...: not supported by kern build").with_hint("COPY --from the files in first"));
      std::string source = kv.count("source") ? kv["source"] : kv.count("src") ? kv["src"] : ".";
      std::string host = in_.context_dir + "/" + source;
      bool rw = kv.count("rw") || kv.count("readwrite");
      step.volumes.push_back(host + ":" + target + (rw ? "" : ":ro"));
      (void)s;
      return {};
    }
    return fail(at_line(in, "--mount type=" + type + ": kern build supports cache, secret and bind"));
  }

  const BuildOptions& o_;
  oci::Store& store_;
  BuildCache cache_;
  BuildInputs in_;
  StagePlan plan_;
  std::map<size_t, StageImage> built_;
  BuildResult result_;
};

}  // namespace build_exec_parts
}  // namespace

Result<BuildResult> run_build(const BuildOptions& o) {
  using namespace build_exec_parts;
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  Executor ex(o, store);
  KERN_TRY_ASSIGN(BuildResult r, ex.run());
  if (!o.iidfile.empty()) KERN_TRY(sys::write_file(AT_FDCWD, o.iidfile, r.image_id, 0644));
  return r;
}

}  // namespace kern::cli
