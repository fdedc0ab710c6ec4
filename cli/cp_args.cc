// kern cp's words; see cp_args.h. Pure.
#include "cli/cp_args.h"

#include "runtime/registry.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

constexpr const char* kCpSynopsis = "kern cp [-a] [-L] NAME:SRC DST|-  or  kern cp [-a] [-L] SRC|- NAME:DST";

Error cp_usage(const std::string& msg) {
  return std::move(Error(ErrorKind::usage, 0, "kern cp: " + msg).with_hint(kCpSynopsis));
}

}  // namespace

CopyEnd copy_end(const std::string& word) {
  CopyEnd e;
  if (word == "-") {
    e.kind = CopyEnd::Kind::stream;
    return e;
  }
  size_t colon = word.find(':');
  if (colon != std::string::npos && colon > 0 && word.find('/') > colon) {
    e.kind = CopyEnd::Kind::box;
    e.name = word.substr(0, colon);
    e.path = word.substr(colon + 1);
    return e;
  }
  e.path = word;
  return e;
}

Result<CopyArgs> copy_args(const std::string& src, const std::string& dst) {
  using K = CopyEnd::Kind;
  CopyArgs a{copy_end(src), copy_end(dst)};
  if (a.src.kind == K::box && a.dst.kind == K::box)
    return fail(cp_usage("both SRC and DST name a box; one of them must be on the host"));
  if (a.src.kind != K::box && a.dst.kind != K::box)
    return fail(cp_usage("neither SRC nor DST names a box (NAME:PATH)"));
  for (const CopyEnd* e : {&a.src, &a.dst})
    if (e->kind == K::box && !valid_box_name(e->name))
      return fail(cp_usage("invalid box name \"" + log::sanitize(e->name) + "\""));
  if (a.src.kind == K::host && a.src.path.empty()) return fail(cp_usage("an empty SRC"));
  if (a.dst.kind == K::host && a.dst.path.empty()) return fail(cp_usage("an empty DST"));
  return a;
}

}  // namespace kern::cli
