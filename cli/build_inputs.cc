// kern build's inputs and stages; see build_inputs.h.
#include "cli/build_inputs.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
namespace build_inputs_parts {

using oci::build::Instruction;

std::string q(const std::string& s) { return "\"" + log::sanitize(s) + "\""; }

Error at_line(const Instruction& in, const std::string& what) {
  return Error(ErrorKind::usage, 0, "Dockerfile line " + std::to_string(in.line) + ": " + in.keyword + ": " + what);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

oci::build::Lookup map_lookup(const std::map<std::string, std::string>& m) {
  return [&m](std::string_view k) -> std::optional<std::string> {
    auto it = m.find(std::string(k));
    if (it != m.end()) return it->second;
    return std::nullopt;
  };
}

}  // namespace build_inputs_parts
}  // namespace

std::vector<std::pair<std::string, std::string>> comma_fields(const std::string& text, const std::string& bare) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    size_t eq = item.find('=');
    out.emplace_back(item.substr(0, eq), eq == std::string::npos ? bare : item.substr(eq + 1));
    pos = comma + 1;
  }
  return out;
}

Result<BuildInputs> read_build_inputs(const BuildOptions& o) {
  using namespace build_inputs_parts;
  BuildInputs in;
  char buf[PATH_MAX];
  if (!::realpath(o.context.c_str(), buf))
    return fail(Error(ErrorKind::usage, errno, "the build context " + q(o.context))
                    .with_hint("kern build [OPTIONS] CONTEXT: a directory"));
  in.context_dir = buf;
  KERN_TRY_ASSIGN(in.context_fd, sys::open_at(AT_FDCWD, in.context_dir, O_RDONLY | O_DIRECTORY));
  std::string file = o.file;
  if (file.empty()) {
    file = in.context_dir + "/Dockerfile";
    if (::access(file.c_str(), F_OK) != 0 && ::access((in.context_dir + "/Containerfile").c_str(), F_OK) == 0)
      file = in.context_dir + "/Containerfile";
  }
  auto text = file == "-" ? sys::read_all(STDIN_FILENO, size_t{16} << 20, "the Dockerfile on stdin")
                          : sys::read_file(AT_FDCWD, file, size_t{16} << 20);
  if (!text)
    return fail(Error(text.error()).with_hint(o.file.empty() ? "put a Dockerfile in the context, or name one with -f"
                                                             : "-f names the Dockerfile"));
  KERN_TRY_ASSIGN(in.dockerfile, oci::build::parse_dockerfile(*text));
  auto ignore_text = sys::read_file(in.context_fd.get(), ".dockerignore", size_t{4} << 20);
  if (ignore_text) {
    KERN_TRY_ASSIGN(in.ignore, oci::build::IgnoreRules::parse(*ignore_text));
  } else if (ignore_text.error().sys_errno() != ENOENT) {
    return fail(std::move(ignore_text).error());
  }
  for (const auto& a : o.build_args) {
    size_t eq = a.find('=');
    if (eq == 0) return fail(Error(ErrorKind::usage, 0, "--build-arg " + q(a) + ": no name").with_hint("--build-arg NAME=VALUE"));
    if (eq == std::string::npos) {
      if (const char* v = std::getenv(a.c_str())) in.build_args[a] = v;
    } else {
      in.build_args[a.substr(0, eq)] = a.substr(eq + 1);
    }
  }
  for (const auto& s : o.secrets) {
    std::string id, src;
    for (const auto& [k, v] : comma_fields(s, "")) {
      if (k == "id") id = v;
      else if (k == "src" || k == "source") src = v;
      else if (k != "type" || v != "file")
        return fail(Error(ErrorKind::usage, 0, "--secret " + q(s) + ": unknown field " + q(k)).with_hint("--secret id=NAME,src=FILE"));
    }
    if (id.empty() || src.empty())
      return fail(Error(ErrorKind::usage, 0, "--secret " + q(s) + ": needs id and src").with_hint("--secret id=NAME,src=FILE"));
    in.secrets[id] = src;
  }
  if (const char* e = std::getenv("SOURCE_DATE_EPOCH"); e && *e) {
    char* end = nullptr;
    long long v = std::strtoll(e, &end, 10);
    if (*end || v < 0) return fail(Error(ErrorKind::usage, 0, "SOURCE_DATE_EPOCH=" + std::string(e) + ": not a number of seconds"));
    in.clamp = v;
  }
  in.now = in.clamp ? *in.clamp : static_cast<int64_t>(std::time(nullptr));
  return in;
}

Result<StagePlan> plan_stages(const oci::build::Dockerfile& df, const std::map<std::string, std::string>& build_args) {
  using namespace build_inputs_parts;
  StagePlan plan;
  bool seen_from = false;
  for (const auto& in : df.instructions) {
    if (in.keyword == "ARG") {
      auto kvs = oci::build::parse_key_values(in.text, [](std::string_view) { return std::nullopt; }, df.escape, false);
      if (kvs)
        for (const auto& kv : *kvs) plan.declared.insert(kv.key);
    }
    if (in.keyword == "FROM") {
      seen_from = true;
      plan.stages.push_back({});
      plan.stages.back().from = in;
      continue;
    }
    if (!seen_from) {
      if (in.keyword != "ARG") return fail(at_line(in, "only ARG may come before the first FROM"));
      KERN_TRY_ASSIGN(auto kvs, oci::build::parse_key_values(in.text, map_lookup(plan.global_args), df.escape, false));
      for (const auto& kv : kvs) {
        auto over = build_args.find(kv.key);
        if (over != build_args.end()) plan.global_args[kv.key] = over->second;
        else if (kv.has_value) plan.global_args[kv.key] = kv.value;
      }
      continue;
    }
    plan.stages.back().body.push_back(in);
  }
  if (plan.stages.empty())
    return fail(Error(ErrorKind::usage, 0, "the Dockerfile has no FROM").with_hint("start it with FROM IMAGE"));
  for (auto& st : plan.stages) {
    KERN_TRY_ASSIGN(auto words, from_words(plan, st.from, df.escape));
    if (words.size() == 3 && lower(words[1]) == "as") st.name = lower(words[2]);
    else if (words.size() != 1) return fail(at_line(st.from, "FROM IMAGE [AS NAME]"));
  }
  return plan;
}

Result<std::vector<std::string>> from_words(const StagePlan& plan, const oci::build::Instruction& from, char escape) {
  using namespace build_inputs_parts;
  return oci::build::split_words(from.text, map_lookup(plan.global_args), escape, true);
}

std::optional<size_t> stage_named(const StagePlan& plan, const std::string& text, size_t before) {
  using namespace build_inputs_parts;
  std::string l = lower(text);
  for (size_t i = 0; i < before && i < plan.stages.size(); ++i)
    if (!plan.stages[i].name.empty() && plan.stages[i].name == l) return i;
  if (!l.empty() && l.size() < 6 && std::all_of(l.begin(), l.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    size_t n = std::stoul(l);
    if (n < before) return n;
  }
  return std::nullopt;
}

Result<size_t> target_stage(const StagePlan& plan, const std::string& target) {
  using namespace build_inputs_parts;
  if (target.empty()) return plan.stages.size() - 1;
  for (size_t i = 0; i < plan.stages.size(); ++i)
    if (plan.stages[i].name == lower(target)) return i;
  std::string names;
  for (const auto& s : plan.stages)
    if (!s.name.empty()) names += (names.empty() ? "" : ", ") + s.name;
  return fail(Error(ErrorKind::usage, 0, "--target " + q(target) + ": no stage of that name")
                  .with_hint(names.empty() ? "name a stage with FROM IMAGE AS NAME" : "the stages are: " + names));
}

Result<std::set<size_t>> needed_stages(const StagePlan& plan, size_t target, char escape) {
  std::set<size_t> needed;
  std::vector<size_t> todo{target};
  while (!todo.empty()) {
    size_t i = todo.back();
    todo.pop_back();
    if (!needed.insert(i).second) continue;
    KERN_TRY_ASSIGN(auto words, from_words(plan, plan.stages[i].from, escape));
    if (auto s = stage_named(plan, words[0], i)) todo.push_back(*s);
    for (const auto& in : plan.stages[i].body) {
      for (const auto& f : in.flags) {
        std::optional<std::string> from;
        if ((in.keyword == "COPY" || in.keyword == "ADD") && f.name == "from") from = f.value;
        if (in.keyword == "RUN" && f.name == "mount")
          for (const auto& [k, v] : comma_fields(f.value, ""))
            if (k == "from") from = v;
        if (from)
          if (auto s = stage_named(plan, *from, i)) todo.push_back(*s);
      }
    }
  }
  return needed;
}

}  // namespace kern::cli
