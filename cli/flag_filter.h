// FlagFilter: which of a verb's flags to build. CLI11 spends about 17,000 instructions on each
// option it adds, and `kern box` has about fifty; a box start names a handful. A filter made from
// the words the parser will see wants every option any of those words could name (a long name
// before its "=", every letter of a short cluster such as "-it" or "-eK=V"), so the parse of those
// words is the same with the options it leaves out as with all of them. Help ("--help", a cluster
// with "h") wants everything. A command line that fails to parse is parsed again with every
// option (app.cc), so that its error, with its did-you-mean, is the full app's.
#pragma once

#include "cli/cli11.h"

#include <string>
#include <string_view>
#include <vector>

namespace kern::cli {

class FlagFilter {
 public:
  FlagFilter() = default;  // every option
  explicit FlagFilter(const std::vector<std::string>& words);
  // `names` as CLI11 takes them ("-e,--env"); a positional (a name without "-") is always wanted.
  bool wants(std::string_view names) const;
  bool everything() const { return all_; }

 private:
  bool all_ = true;
  std::vector<std::string> longs_;
  std::string shorts_;
};

// c->add_option / c->add_flag when `f` wants `names`, else nothing (nullptr).
template <class T>
CLI::Option* add_option(CLI::App* c, const FlagFilter& f, const std::string& names, T& value, const std::string& desc) {
  return f.wants(names) ? c->add_option(names, value, desc) : nullptr;
}
template <class T>
CLI::Option* add_flag(CLI::App* c, const FlagFilter& f, const std::string& names, T& value, const std::string& desc) {
  return f.wants(names) ? c->add_flag(names, value, desc) : nullptr;
}
// A repeatable option that takes exactly one value per occurrence (when it was made).
inline CLI::Option* one_value(CLI::Option* o) { return o != nullptr ? o->allow_extra_args(false) : nullptr; }

}  // namespace kern::cli
