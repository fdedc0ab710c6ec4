// The key nesting bound of kern.toml; see key_depth.h.
#include "profiles/key_depth.h"

#include <vector>

namespace kern::profiles {
namespace {

bool bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  std::optional<Diagnostic> run() {
    size_t table_depth = 0;  // the parts of the last [table] or [[array]] header
    while (!done()) {
      skip_blank(true);
      if (done()) break;
      char c = t_[i_];
      if (c == '[') {
        ++i_;
        if (peek('[')) ++i_;
        Location at = here();
        table_depth = chain();
        if (table_depth > kMaxKeyDepth) return too_deep(at, table_depth);
        skip_line();
        continue;
      }
      if (bare_key_char(c) || c == '"' || c == '\'') {
        Location at = here();
        size_t parts = chain();
        if (table_depth + parts > kMaxKeyDepth) return too_deep(at, table_depth + parts);
        skip_blank(false);
        if (peek('=')) {
          ++i_;
          if (auto d = value(table_depth + parts)) return d;
        }
        skip_line();
        continue;
      }
      skip_line();  // not a statement: toml++ says what is wrong with it
    }
    return std::nullopt;
  }

 private:
  bool done() const { return i_ >= t_.size(); }
  bool peek(char c) const { return i_ < t_.size() && t_[i_] == c; }
  Location here() const { return Location{line_, static_cast<int>(i_ - line_start_) + 1}; }
  void newline() {
    ++line_;
    line_start_ = i_ + 1;
  }

  Diagnostic too_deep(Location at, size_t depth) const {
    return Diagnostic{at, "a key nested " + std::to_string(depth) + " tables deep (at most " +
                              std::to_string(kMaxKeyDepth) + ": kern.toml's tables are two deep)"};
  }

  // Spaces, tabs and comments; newlines too when `lines`.
  void skip_blank(bool lines) {
    while (!done()) {
      char c = t_[i_];
      if (c == ' ' || c == '\t' || c == '\r') ++i_;
      else if (c == '\n' && lines) newline(), ++i_;
      else if (c == '#') {
        while (!done() && t_[i_] != '\n') ++i_;
      } else break;
    }
  }

  void skip_line() {
    while (!done() && t_[i_] != '\n') {
      if (t_[i_] == '"' || t_[i_] == '\'') string();
      else ++i_;
    }
  }

  // A string of any of TOML's four kinds, from its opening quote.
  void string() {
    char q = t_[i_];
    bool multi = t_.substr(i_, 3) == std::string_view(q == '"' ? "\"\"\"" : "'''");
    i_ += multi ? 3 : 1;
    while (!done()) {
      char c = t_[i_];
      if (c == '\\' && q == '"') {
        ++i_;
        if (!done() && t_[i_] == '\n') newline();
        ++i_;
        continue;
      }
      if (c == '\n') {
        if (!multi) return;  // unterminated: toml++ reports it
        newline();
      }
      if (c == q && (!multi || t_.substr(i_, 3) == std::string_view(q == '"' ? "\"\"\"" : "'''"))) {
        i_ += multi ? 3 : 1;
        return;
      }
      ++i_;
    }
  }

  // A dotted key: its number of parts.
  size_t chain() {
    size_t parts = 0;
    while (!done()) {
      skip_blank(false);
      if (peek('"') || peek('\'')) string();
      else if (!done() && bare_key_char(t_[i_])) {
        while (!done() && bare_key_char(t_[i_])) ++i_;
      } else break;
      ++parts;
      skip_blank(false);
      if (!peek('.')) break;
      ++i_;
    }
    return parts;
  }

  // A value after '=' whose key is `depth` tables deep; an inline table's keys add their parts
  // to the depth of the key that holds it, an array one level. Nesting is followed with a stack
  // of its own, never by recursion.
  std::optional<Diagnostic> value(size_t depth) {
    std::vector<std::pair<char, size_t>> open;  // '{' or '[' and the depth of what is inside
    size_t next = depth;                        // the depth of a value that starts here
    auto key = [&](size_t base) -> std::optional<Diagnostic> {
      skip_blank(true);
      Location at = here();
      size_t parts = chain();
      if (base + parts > kMaxKeyDepth) return too_deep(at, base + parts);
      next = base + parts;
      return std::nullopt;
    };
    while (!done()) {
      skip_blank(!open.empty());
      if (done()) break;
      char c = t_[i_];
      if (c == '"' || c == '\'') {
        string();
      } else if (c == '{') {
        ++i_;
        open.push_back({c, next});
        if (auto d = key(next)) return d;
      } else if (c == '[') {
        ++i_;
        open.push_back({c, next + 1});
        next = next + 1;
      } else if (c == ',' && !open.empty()) {
        ++i_;
        if (open.back().first == '{') {
          if (auto d = key(open.back().second)) return d;
        } else {
          next = open.back().second;
        }
      } else if (c == '}' || c == ']') {
        ++i_;
        if (!open.empty()) open.pop_back();
      } else if (c == '\n') {
        if (open.empty()) return std::nullopt;
        newline();
        ++i_;
      } else {
        ++i_;
      }
      if (open.empty() && (done() || t_[i_] == '\n' || t_[i_] == '#')) return std::nullopt;
    }
    return std::nullopt;
  }

  std::string_view t_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::optional<Diagnostic> check_key_depth(std::string_view text) { return Scanner(text).run(); }

}  // namespace kern::profiles
