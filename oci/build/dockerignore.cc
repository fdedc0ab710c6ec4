// .dockerignore parsing and matching; see dockerignore.h.
#include "oci/build/dockerignore.h"

namespace kern::oci::build {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// One code point at s[i] and its length; a byte that does not start valid UTF-8 is U+FFFD, one
// byte long (what Go's regexp does with it).
std::pair<char32_t, size_t> decode(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (c >= 0xF5) len = 0;
  if (len == 0 || i + len > s.size()) return {0xFFFD, 1};
  char32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0xFFFD, 1};
  return {cp, len};
}

// Go's filepath.Clean on "/"-separated paths.
std::string clean(std::string_view p) {
  bool rooted = !p.empty() && p.front() == '/';
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    std::string_view part = p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == ".") {
      // nothing
    } else if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(part);
      }
    } else {
      parts.push_back(part);
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  std::string out = rooted ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  if (out.empty()) out = ".";
  return out;
}

}  // namespace

Result<IgnoreRules::Tokens> IgnoreRules::compile(std::string_view p) {
  Tokens out;
  auto bad = [&](const std::string& why) {
    return fail(ErrorKind::usage, 0, "bad pattern \"" + std::string(p) + "\": " + why);
  };
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    Token t;
    if (c == '*') {
      if (i + 1 < p.size() && p[i + 1] == '*') {
        i += 2;
        if (i < p.size() && p[i] == '/') ++i;
        t.kind = i >= p.size() ? Token::Kind::any_rest : Token::Kind::any_dirs;
      } else {
        t.kind = Token::Kind::star;
        ++i;
      }
    } else if (c == '?') {
      t.kind = Token::Kind::question;
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= p.size()) return bad("it ends in an escape \\");
      t.byte = p[i + 1];
      i += 2;
    } else if (c == '[') {
      t.kind = Token::Kind::cls;
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') {
        t.negated = true;
        ++j;
      }
      bool first = true;
      auto read_char = [&](char32_t* cp) -> bool {
        if (j < p.size() && p[j] == '\\') ++j;
        if (j >= p.size()) return false;
        auto [v, len] = decode(p, j);
        *cp = v;
        j += len;
        return true;
      };
      for (;;) {
        if (j >= p.size()) return bad("a [ without its ]");
        if (p[j] == ']' && !first) {
          ++j;
          break;
        }
        first = false;
        char32_t lo = 0, hi = 0;
        if (!read_char(&lo)) return bad("a [ without its ]");
        hi = lo;
        if (j + 1 < p.size() && p[j] == '-' && p[j + 1] != ']') {
          ++j;
          if (!read_char(&hi)) return bad("a [ without its ]");
          if (hi < lo) return bad("a range that runs backwards");
        }
        t.ranges.emplace_back(lo, hi);
      }
      i = j;
    } else {
      t.byte = c;
      ++i;
    }
    out.push_back(std::move(t));
  }
  return out;
}

bool IgnoreRules::matches(const Tokens& tokens, std::string_view s) {
  const size_t n = s.size();
  // memo[ti * (n + 1) + si]: 0 not yet known, 1 no, 2 yes.
  std::vector<unsigned char> memo((tokens.size() + 1) * (n + 1), 0);
  auto go = [&](auto&& self, size_t ti, size_t si) -> bool {
    unsigned char& m = memo[ti * (n + 1) + si];
    if (m != 0) return m == 2;
    bool r = false;
    if (ti == tokens.size()) {
      r = si == n;
    } else {
      const Token& t = tokens[ti];
      switch (t.kind) {
        case Token::Kind::literal:
          r = si < n && s[si] == t.byte && self(self, ti + 1, si + 1);
          break;
        case Token::Kind::question:
          r = si < n && s[si] != '/' && self(self, ti + 1, si + decode(s, si).second);
          break;
        case Token::Kind::cls:
          if (si < n) {
            auto [cp, len] = decode(s, si);
            bool in = false;
            for (const auto& [lo, hi] : t.ranges) in = in || (cp >= lo && cp <= hi);
            r = in != t.negated && self(self, ti + 1, si + len);
          }
          break;
        case Token::Kind::star:
          r = self(self, ti + 1, si) || (si < n && s[si] != '/' && self(self, ti, si + 1));
          break;
        case Token::Kind::any_dirs:  // (.*/)?
          r = self(self, ti + 1, si);
          for (size_t k = si; !r && k < n; ++k) {
            if (s[k] == '/') r = self(self, ti + 1, k + 1);
          }
          break;
        case Token::Kind::any_rest:
          r = true;
          break;
      }
    }
    m = r ? 2 : 1;
    return r;
  };
  return go(go, 0, 0);
}

Result<IgnoreRules> IgnoreRules::parse(std::string_view text) {
  IgnoreRules rules;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  int line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.starts_with('#')) continue;
    line = trim(line);
    if (line.empty()) continue;
    Rule r;
    if (line.front() == '!') {
      r.exception = true;
      line = trim(line.substr(1));
      if (line.empty()) {
        return fail(ErrorKind::usage, 0, ".dockerignore line " + std::to_string(line_no) + ": a \"!\" without a pattern");
      }
    }
    r.pattern = clean(line);
    if (r.pattern.size() > 1 && r.pattern.front() == '/') r.pattern.erase(0, 1);
    auto tokens = compile(r.pattern);
    if (!tokens) return fail(std::move(tokens).error().with_context(".dockerignore line " + std::to_string(line_no)));
    rules.rules_.push_back(std::move(r));
    rules.compiled_.push_back(std::move(*tokens));
  }
  return rules;
}

bool IgnoreRules::ignored(std::string_view rel) const {
  while (!rel.empty() && rel.back() == '/') rel.remove_suffix(1);
  if (rel.empty() || rel == ".") return false;
  bool matched = false;
  for (size_t r = 0; r < rules_.size(); ++r) {
    // An exclusion only matters while the path is not yet matched, an exception only after.
    if (rules_[r].exception != matched) continue;
    bool m = matches(compiled_[r], rel);
    for (size_t slash = rel.find('/'); !m && slash != std::string_view::npos; slash = rel.find('/', slash + 1)) {
      m = matches(compiled_[r], rel.substr(0, slash));
    }
    if (m) matched = !rules_[r].exception;
  }
  return matched;
}

bool IgnoreRules::may_contain_exception(std::string_view dir) const {
  while (!dir.empty() && dir.back() == '/') dir.remove_suffix(1);
  std::vector<std::string_view> comps;
  for (size_t start = 0; start < dir.size();) {
    size_t slash = dir.find('/', start);
    if (slash == std::string_view::npos) slash = dir.size();
    comps.push_back(dir.substr(start, slash - start));
    start = slash + 1;
  }
  for (const Rule& rule : rules_) {
    if (!rule.exception) continue;
    std::string_view p = rule.pattern;
    // Walk the pattern one "/"-component at a time along the directory's components.
    size_t k = 0;
    bool possible = true;
    while (possible) {
      if (k == comps.size()) break;  // the pattern goes on below dir
      if (p.empty()) break;          // it matched an ancestor of the contents
      size_t slash = p.find('/');
      std::string_view seg = p.substr(0, slash);
      if (seg.find("**") != std::string_view::npos || seg.find('[') != std::string_view::npos) break;
      auto tokens = compile(seg);
      if (!tokens) break;
      possible = matches(*tokens, comps[k]);
      ++k;
      p = slash == std::string_view::npos ? std::string_view() : p.substr(slash + 1);
    }
    if (possible) return true;
  }
  return false;
}

}  // namespace kern::oci::build
