// Interpolation, .env lines, shell words and durations of compose files (compose_text.h).
#include "cli/compose_text.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace kern::compose {
namespace text_impl {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The end of the ${...} that starts at `open` (the index of '{'), nested braces counted.
size_t closing_brace(std::string_view t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i] == '$' && i + 1 < t.size() && t[i + 1] == '$') {
      ++i;
      continue;
    }
    if (t[i] == '{') ++depth;
    if (t[i] == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

Result<std::string> braced(std::string_view body, const Lookup& lookup) {
  size_t n = 0;
  while (n < body.size() && name_char(body[n])) ++n;
  std::string name(body.substr(0, n));
  if (name.empty() || !name_start(name[0]))
    return fail(ErrorKind::config, 0, "invalid interpolation \"${" + std::string(body) + "}\"");
  std::optional<std::string> value = lookup(name);
  std::string_view rest = body.substr(n);
  if (rest.empty()) return value.value_or("");
  bool colon = rest[0] == ':';
  if (colon) rest.remove_prefix(1);
  if (rest.empty() || (rest[0] != '-' && rest[0] != '?' && rest[0] != '+'))
    return fail(ErrorKind::config, 0, "invalid interpolation \"${" + std::string(body) + "}\"");
  char op = rest[0];
  std::string_view arg = rest.substr(1);
  bool set = colon ? value && !value->empty() : value.has_value();
  switch (op) {
    case '-':
      if (set) return *value;
      return interpolate(arg, lookup);
    case '+':
      if (!set) return std::string();
      return interpolate(arg, lookup);
    default: {
      if (set) return *value;
      KERN_TRY_ASSIGN(std::string msg, interpolate(arg, lookup));
      return fail(ErrorKind::config, 0,
                  "required variable " + name + " is " + (value ? "empty" : "missing a value") +
                      (msg.empty() ? std::string() : ": " + msg));
    }
  }
}

std::string unescape_double(std::string_view v) {
  std::string o;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) {
      char c = v[++i];
      o += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
    } else {
      o += v[i];
    }
  }
  return o;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace text_impl

Result<std::string> interpolate(std::string_view t, const Lookup& lookup) {
  using namespace text_impl;
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '$') {
      out += t[i];
      continue;
    }
    if (i + 1 < t.size() && t[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (i + 1 < t.size() && t[i + 1] == '{') {
      size_t close = closing_brace(t, i + 1);
      if (close == std::string_view::npos)
        return fail(ErrorKind::config, 0, "invalid interpolation: unterminated \"${\" in \"" + std::string(t) + "\"");
      KERN_TRY_ASSIGN(std::string v, braced(t.substr(i + 2, close - i - 2), lookup));
      out += v;
      i = close;
      continue;
    }
    if (i + 1 < t.size() && name_start(t[i + 1])) {
      size_t e = i + 1;
      while (e < t.size() && name_char(t[e])) ++e;
      out += lookup(std::string(t.substr(i + 1, e - i - 1))).value_or("");
      i = e - 1;
      continue;
    }
    return fail(
        ErrorKind::config, 0,
        "invalid interpolation: a '$' not followed by a name in \"" + std::string(t) + "\" (write $$ for a '$')");
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::optional<std::string>>>> parse_dotenv(std::string_view text,
                                                                                     const std::string& file,
                                                                                     const Lookup* outer) {
  using namespace text_impl;
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  // ${VAR} in a value: the outer lookup, else a line above.
  Lookup here = [&out, outer](const std::string& name) -> std::optional<std::string> {
    if (outer)
      if (std::optional<std::string> v = (*outer)(name)) return v;
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->first == name && it->second) return it->second;
    return std::nullopt;
  };
  auto expand = [&](std::string_view raw, int line) -> Result<std::string> {
    if (!outer) return std::string(raw);
    auto v = interpolate(raw, here);
    if (!v) return fail(ErrorKind::config, 0, file + ":" + std::to_string(line) + ": " + v.error().message());
    return *v;
  };
  size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    if (l.substr(0, 7) == "export ") l = trim(l.substr(7));
    size_t eq = l.find('=');
    std::string key(trim(l.substr(0, eq)));
    bool valid = !key.empty();
    for (char c : key) valid = valid && !std::isspace(static_cast<unsigned char>(c)) && c != '#';
    if (!valid) return fail(ErrorKind::config, 0, file + ":" + std::to_string(lineno) + ": not KEY=VALUE");
    if (eq == std::string_view::npos) {
      out.emplace_back(key, std::nullopt);
      continue;
    }
    std::string_view v = trim(l.substr(eq + 1));
    std::string value;
    if (!v.empty() && (v[0] == '"' || v[0] == '\'')) {
      char q = v[0];
      // The value may span lines: find the closing quote from here in the whole text.
      size_t start = static_cast<size_t>(v.data() - text.data()) + 1;
      size_t i = start;
      for (; i < text.size(); ++i) {
        if (q == '"' && text[i] == '\\') {
          ++i;
          continue;
        }
        if (text[i] == q) break;
      }
      if (i >= text.size())
        return fail(ErrorKind::config, 0, file + ":" + std::to_string(lineno) + ": unterminated quote");
      std::string_view raw = text.substr(start, i - start);
      int first_line = lineno;
      for (char c : raw) lineno += c == '\n';
      if (q == '"') {
        KERN_TRY_ASSIGN(std::string expanded, expand(raw, first_line));
        value = unescape_double(expanded);
      } else {
        value = std::string(raw);
      }
      size_t end = text.find('\n', i);
      pos = end == std::string_view::npos ? text.size() : end + 1;
    } else {
      size_t hash = v.find(" #");
      KERN_TRY_ASSIGN(value, expand(trim(v.substr(0, hash)), lineno));
    }
    out.emplace_back(key, value);
  }
  return out;
}

Result<std::vector<std::string>> shell_split(std::string_view t) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 < t.size()) cur += t[++i];
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      for (; j < t.size() && t[j] != c; ++j) {
        if (c == '"' && t[j] == '\\' && j + 1 < t.size() &&
            (t[j + 1] == '"' || t[j + 1] == '\\' || t[j + 1] == '$' || t[j + 1] == '`')) {
          cur += t[++j];
          continue;
        }
        cur += t[j];
      }
      if (j >= t.size()) return fail(ErrorKind::config, 0, "unterminated quote in \"" + std::string(t) + "\"");
      i = j;
      continue;
    }
    cur += c;
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

std::string shell_quote(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") ==
                        std::string::npos)
    return w;
  std::string o = "'";
  for (char c : w) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string o;
  for (const auto& w : words) o += (o.empty() ? "" : " ") + shell_quote(w);
  return o;
}

std::optional<long long> duration_ms(std::string_view t) {
  if (t.empty()) return std::nullopt;
  double total = 0;
  size_t i = 0;
  bool bare = t.find_first_not_of("0123456789.") == std::string_view::npos;
  while (i < t.size()) {
    size_t s = i;
    while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
    if (s == i) return std::nullopt;
    double v = std::strtod(std::string(t.substr(s, i - s)).c_str(), nullptr);
    size_t u = i;
    while (i < t.size() && std::isalpha(static_cast<unsigned char>(t[i]))) ++i;
    std::string_view unit = t.substr(u, i - u);
    double scale = unit == "h"              ? 3600e3
                   : unit == "m"            ? 60e3
                   : unit == "s"            ? 1e3
                   : unit == "ms"           ? 1
                   : unit == "us"           ? 1e-3
                   : unit == "ns"           ? 1e-6
                   : (unit.empty() && bare) ? 1e3
                                            : -1;
    if (scale < 0) return std::nullopt;
    total += v * scale;
  }
  return static_cast<long long>(std::llround(total));
}

}  // namespace kern::compose
