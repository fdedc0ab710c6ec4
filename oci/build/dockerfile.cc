// The Dockerfile parser and the variable expansion of `kern build`; see dockerfile.h.
#include "oci/build/dockerfile.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

namespace kern::oci::build {
namespace {

constexpr std::array<std::string_view, 18> kKeywords = {
    "ADD",    "ARG",        "CMD",   "COPY",    "ENTRYPOINT", "ENV",   "EXPOSE",     "FROM",  "HEALTHCHECK",
    "LABEL",  "MAINTAINER", "ONBUILD", "RUN",   "SHELL",      "STOPSIGNAL", "USER", "VOLUME", "WORKDIR"};

// Blanks as Docker's line splitting sees them (ASCII only: bytes >= 0x80 are never blanks).
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }
char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_upper(c);
  return out;
}
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string_view trim_left(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}
std::string_view trim_right(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && is_blank(s[n - 1])) --n;
  return s.substr(0, n);
}
std::string_view trim(std::string_view s) { return trim_right(trim_left(s)); }

Unexpected<Error> line_error(int line, const std::string& what) {
  return fail(ErrorKind::usage, 0, "Dockerfile line " + std::to_string(line) + ": " + what);
}

bool known_keyword(std::string_view kw) {
  return std::find(kKeywords.begin(), kKeywords.end(), kw) != kKeywords.end();
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// "unknown instruction RUNN (did you mean RUN?)": the nearest keyword within two edits.
std::string unknown_instruction(std::string_view word) {
  std::string up = upper(word);
  std::string best;
  size_t best_d = 3;
  for (std::string_view kw : kKeywords) {
    size_t d = edit_distance(up, kw);
    if (d < best_d) {
      best_d = d;
      best = std::string(kw);
    }
  }
  std::string msg = "unknown instruction " + std::string(word);
  if (!best.empty()) msg += " (did you mean " + best + "?)";
  return msg;
}

// Splits on blanks outside quotes, keeping quotes and escapes in the words (what Docker's parser
// keeps in its nodes before expansion). An unterminated quote runs to the end.
std::vector<std::string> raw_words(std::string_view s, char escape) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote == 0 && is_blank(c)) {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    cur += c;
    if (c == escape && quote != '\'' && i + 1 < s.size()) {
      cur += s[++i];
    } else if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
    } else if (quote != 0 && c == quote) {
      quote = 0;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

// The leading --flags of an instruction's text: quotes inside a flag word group and are removed,
// the escape char escapes the next char; a bare "--" ends the flags. Returns the rest.
std::string_view extract_flags(std::string_view s, char escape, std::vector<Flag>* flags) {
  size_t i = 0;
  for (;;) {
    while (i < s.size() && is_blank(s[i])) ++i;
    if (i + 1 >= s.size() || s[i] != '-' || s[i + 1] != '-') return s.substr(i);
    std::string word;
    char quote = 0;
    size_t j = i;
    for (; j < s.size(); ++j) {
      char c = s[j];
      if (quote == 0 && is_blank(c)) break;
      if (c == escape && quote != '\'' && j + 1 < s.size()) {
        word += s[++j];
      } else if (quote == 0 && (c == '\'' || c == '"')) {
        quote = c;
      } else if (quote != 0 && c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    }
    i = j;
    if (word == "--") return trim_left(s.substr(i));
    Flag f;
    std::string_view body = std::string_view(word).substr(2);
    size_t eq = body.find('=');
    if (eq == std::string_view::npos) {
      f.name = std::string(body);
    } else {
      f.name = std::string(body.substr(0, eq));
      f.value = std::string(body.substr(eq + 1));
      f.has_value = true;
    }
    flags->push_back(std::move(f));
  }
}

// A JSON array of strings, as a whole text; nullopt for anything else.
std::optional<std::vector<std::string>> json_string_array(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.front() != '[') return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(s.begin(), s.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& e : j) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.get<std::string>());
  }
  return out;
}

bool heredoc_keyword(std::string_view kw) { return kw == "RUN" || kw == "COPY" || kw == "ADD"; }

// The heredocs named by a joined line: words of the form [digits]<<[-]word, the word not empty
// and holding no '<'. The word's quotes and escapes are removed; any of them turns expansion off.
std::vector<Heredoc> heredoc_markers(std::string_view line, char escape) {
  std::vector<Heredoc> out;
  for (const std::string& w : raw_words(line, escape)) {
    size_t i = 0;
    while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
    if (w.compare(i, 2, "<<") != 0) continue;
    i += 2;
    Heredoc h;
    if (i < w.size() && w[i] == '-') {
      h.strip_tabs = true;
      ++i;
    }
    std::string_view rest = std::string_view(w).substr(i);
    if (rest.empty() || rest.find('<') != std::string_view::npos) continue;
    char quote = 0;
    for (size_t k = 0; k < rest.size(); ++k) {
      char c = rest[k];
      if (c == escape && quote != '\'' && k + 1 < rest.size()) {
        h.name += rest[++k];
        h.expand = false;
      } else if (quote == 0 && (c == '\'' || c == '"')) {
        quote = c;
        h.expand = false;
      } else if (quote != 0 && c == quote) {
        quote = 0;
      } else {
        h.name += c;
      }
    }
    if (h.name.empty()) continue;
    out.push_back(std::move(h));
  }
  return out;
}

bool can_contain_heredoc(const Instruction& ins, char escape) {
  if (ins.json) return false;
  if (heredoc_keyword(ins.keyword)) return true;
  if (ins.keyword != "ONBUILD") return false;
  auto inner = parse_instruction(ins.text, ins.line, escape);
  return inner && heredoc_keyword(inner->keyword) && !inner->json;
}

// The line without its continuation mark, and whether it had one.
std::pair<std::string_view, bool> strip_continuation(std::string_view s, char escape) {
  std::string_view t = s;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (!t.empty() && t.back() == escape) return {t.substr(0, t.size() - 1), true};
  return {s, false};
}

bool is_comment(std::string_view s) {
  s = trim_left(s);
  return !s.empty() && s.front() == '#';
}

// "# name = value" at the top of the file: the lower-cased name and the value.
std::optional<std::pair<std::string, std::string>> directive(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.front() != '#') return std::nullopt;
  s = trim_left(s.substr(1));
  size_t i = 0;
  if (i >= s.size() || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) return std::nullopt;
  while (i < s.size() && (is_name_char(s[i]) && s[i] != '_')) ++i;
  std::string name = lower(s.substr(0, i));
  s = trim_left(s.substr(i));
  if (s.empty() || s.front() != '=') return std::nullopt;
  std::string_view value = trim(s.substr(1));
  if (value.empty()) return std::nullopt;
  return std::make_pair(std::move(name), std::string(value));
}

// ---- expansion ----

enum class Mode {
  raw,    // expand: quotes are ordinary characters, only escape+$ is special
  word,   // process_word: quotes removed, escapes applied, no splitting
  words,  // split_words: as word, and unquoted blanks split words
};

struct Out {
  bool split = false;
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;

  void add(char c) {
    cur += c;
    in_word = true;
  }
  void add(std::string_view s) {
    cur += s;
    in_word = true;
  }
  // An unquoted expansion: split at its blanks when splitting words.
  void add_splittable(std::string_view s) {
    if (!split) {
      cur += s;
      if (!s.empty()) in_word = true;
      return;
    }
    for (char c : s) {
      if (is_blank(c) || c == '\n') {
        end();
      } else {
        add(c);
      }
    }
  }
  void end() {
    if (in_word) words.push_back(std::move(cur));
    cur.clear();
    in_word = false;
  }
};

class Expander {
 public:
  Expander(std::string_view s, const Lookup* lookup, char escape, Mode mode)
      : s_(s), lookup_(lookup), escape_(escape), mode_(mode) {}

  // Reads from pos_ to the end (or, with stop_at_brace, to an unquoted '}', not consumed).
  // `live` is false inside a ${x:-word} whose word is not used: ${y:?} there does not fail.
  Status scan(Out& out, bool stop_at_brace, bool live) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (stop_at_brace && c == '}') return {};
      if (mode_ == Mode::raw) {
        if (c == escape_ && pos_ + 1 < s_.size() && s_[pos_ + 1] == '$') {
          out.add('$');
          pos_ += 2;
        } else if (c == escape_ && pos_ + 1 < s_.size() && s_[pos_ + 1] == escape_) {
          out.add(std::string(2, escape_));
          pos_ += 2;
        } else if (c == '$' && lookup_ != nullptr) {
          KERN_TRY_ASSIGN(std::string v, dollar(live));
          out.add_splittable(v);
        } else {
          out.add(c);
          ++pos_;
        }
        continue;
      }
      if (c == escape_) {
        if (pos_ + 1 < s_.size()) out.add(s_[pos_ + 1]);
        pos_ += 2;
      } else if (c == '\'') {
        size_t close = s_.find('\'', pos_ + 1);
        if (close == std::string_view::npos) {
          return fail(ErrorKind::usage, 0, "unexpected end of text looking for the closing ' in: " + std::string(s_));
        }
        out.add(s_.substr(pos_ + 1, close - pos_ - 1));
        pos_ = close + 1;
      } else if (c == '"') {
        KERN_TRY(double_quoted(out, live));
      } else if (c == '$' && lookup_ != nullptr) {
        KERN_TRY_ASSIGN(std::string v, dollar(live));
        out.add_splittable(v);
      } else if (out.split && (is_blank(c) || c == '\n')) {
        out.end();
        ++pos_;
      } else {
        out.add(c);
        ++pos_;
      }
    }
    return {};
  }

  size_t pos() const { return pos_; }

 private:
  Status double_quoted(Out& out, bool live) {
    out.in_word = true;  // "" is an empty word
    ++pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return {};
      }
      if (c == escape_ && pos_ + 1 < s_.size()) {
        char n = s_[pos_ + 1];
        if (n == '"' || n == '$' || n == escape_) {
          out.add(n);
          pos_ += 2;
        } else {
          out.add(c);
          ++pos_;
        }
      } else if (c == '$' && lookup_ != nullptr) {
        KERN_TRY_ASSIGN(std::string v, dollar(live));
        out.add(v);
      } else {
        out.add(c);
        ++pos_;
      }
    }
    return fail(ErrorKind::usage, 0, "unexpected end of text looking for the closing \" in: " + std::string(s_));
  }

  std::optional<std::string> get(std::string_view name) const {
    if (lookup_ == nullptr || !*lookup_) return std::nullopt;
    return (*lookup_)(name);
  }

  // At a '$': its expansion. A '$' not followed by a name or '{' is itself.
  Result<std::string> dollar(bool live) {
    ++pos_;
    if (pos_ >= s_.size()) return std::string("$");
    char c = s_[pos_];
    if (c != '{') {
      if (!is_name_char(c)) return std::string("$");
      size_t start = pos_;
      if (c >= '0' && c <= '9') {
        ++pos_;  // $1: one digit, as a shell reads positional parameters
      } else {
        while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
      }
      return get(s_.substr(start, pos_ - start)).value_or("");
    }
    ++pos_;
    size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    std::string name(s_.substr(start, pos_ - start));
    if (name.empty()) return fail(ErrorKind::usage, 0, "bad substitution: a ${ without a name in: " + std::string(s_));
    if (pos_ >= s_.size()) return fail(ErrorKind::usage, 0, "missing } in: " + std::string(s_));
    c = s_[pos_];
    if (c == '}') {
      ++pos_;
      return get(name).value_or("");
    }
    bool colon = false;
    if (c == ':') {
      colon = true;
      ++pos_;
      if (pos_ >= s_.size()) return fail(ErrorKind::usage, 0, "missing } in: " + std::string(s_));
      c = s_[pos_];
    }
    if (c != '-' && c != '+' && c != '?') {
      return fail(ErrorKind::usage, 0,
                  std::string("unsupported modifier ") + (colon ? ":" : "") + c + " in ${" + name + "...}");
    }
    ++pos_;
    std::optional<std::string> value = get(name);
    bool set = value.has_value() && (!colon || !value->empty());
    bool word_used = (c == '-' && !set) || (c == '+' && set) || (c == '?' && !set);
    Out word;
    KERN_TRY(scan(word, /*stop_at_brace=*/true, live && word_used));
    if (pos_ >= s_.size()) return fail(ErrorKind::usage, 0, "missing } in: " + std::string(s_));
    ++pos_;
    switch (c) {
      case '-':
        return set ? *value : word.cur;
      case '+':
        return set ? word.cur : std::string();
      default:  // '?'
        if (!set && live) {
          return fail(ErrorKind::usage, 0,
                      name + ": " + (word.cur.empty() ? std::string("is not set") : word.cur));
        }
        return value.value_or("");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  const Lookup* lookup_;
  char escape_;
  Mode mode_;
};

}  // namespace

Result<Instruction> parse_instruction(std::string_view joined, int line, char escape) {
  std::string_view s = trim(joined);
  Instruction ins;
  ins.line = line;
  ins.source = std::string(s);
  size_t end = 0;
  while (end < s.size() && !is_blank(s[end])) ++end;
  std::string_view word = s.substr(0, end);
  ins.keyword = upper(word);
  if (!known_keyword(ins.keyword)) return line_error(line, unknown_instruction(word));
  std::string_view rest = extract_flags(trim_left(s.substr(end)), escape, &ins.flags);
  ins.text = std::string(trim(rest));
  const std::string& kw = ins.keyword;

  if (ins.text.empty() && kw != "CMD" && kw != "ENTRYPOINT") {
    return line_error(line, kw + " requires at least one argument");
  }
  if (kw == "RUN" || kw == "CMD" || kw == "ENTRYPOINT" || kw == "SHELL") {
    if (auto a = json_string_array(ins.text)) {
      ins.json = true;
      ins.args = std::move(*a);
    } else if (!ins.text.empty()) {
      ins.args = {ins.text};
    }
  } else if (kw == "COPY" || kw == "ADD" || kw == "VOLUME") {
    if (auto a = json_string_array(ins.text)) {
      ins.json = true;
      ins.args = std::move(*a);
    } else {
      ins.args = raw_words(ins.text, escape);
    }
  } else if (kw == "WORKDIR" || kw == "USER" || kw == "STOPSIGNAL" || kw == "MAINTAINER") {
    ins.args = {ins.text};
  } else if (kw == "HEALTHCHECK") {
    std::string_view t = ins.text;
    size_t e = 0;
    while (e < t.size() && !is_blank(t[e])) ++e;
    std::string type = upper(t.substr(0, e));
    std::string cmd(trim(t.substr(e)));
    if (type == "NONE") {
      if (!cmd.empty()) return line_error(line, "HEALTHCHECK NONE takes no arguments");
      ins.args = {"NONE"};
    } else if (type == "CMD") {
      if (cmd.empty()) return line_error(line, "HEALTHCHECK CMD requires a command");
      ins.args = {"CMD"};
      if (auto a = json_string_array(cmd)) {
        ins.json = true;
        ins.args.insert(ins.args.end(), a->begin(), a->end());
      } else {
        ins.args.push_back(std::move(cmd));
      }
    } else {
      return line_error(line, "HEALTHCHECK " + std::string(t.substr(0, e)) + ": expected CMD or NONE");
    }
  } else if (kw == "ONBUILD") {
    KERN_TRY_ASSIGN(Instruction inner, parse_instruction(ins.text, line, escape));
    if (inner.keyword == "ONBUILD") return line_error(line, "ONBUILD ONBUILD is not allowed");
    if (inner.keyword == "FROM" || inner.keyword == "MAINTAINER") {
      return line_error(line, "ONBUILD may not trigger " + inner.keyword);
    }
    ins.args = {ins.text};
  } else {
    ins.args = raw_words(ins.text, escape);
  }
  return ins;
}

Result<Dockerfile> parse_dockerfile(std::string_view text) {
  Dockerfile df;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);

  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    std::string_view l = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }

  size_t i = 0;
  bool seen_escape = false, seen_syntax = false, seen_check = false;
  for (; i < lines.size(); ++i) {
    auto d = directive(lines[i]);
    if (!d) break;
    const int n = static_cast<int>(i) + 1;
    auto once = [&](bool& seen) -> Status {
      if (seen) return line_error(n, "only one " + d->first + " directive may be used");
      seen = true;
      return {};
    };
    if (d->first == "escape") {
      KERN_TRY(once(seen_escape));
      if (d->second != "\\" && d->second != "`") {
        return line_error(n, "invalid escape character '" + d->second + "': must be ` or \\");
      }
      df.escape = d->second.front();
    } else if (d->first == "syntax") {
      KERN_TRY(once(seen_syntax));
      df.syntax = d->second;
    } else if (d->first == "check") {
      KERN_TRY(once(seen_check));
      df.check = d->second;
    } else {
      // An unknown directive is a comment, and ends the directives.
      ++i;
      break;
    }
  }

  const char esc = df.escape;
  for (; i < lines.size(); ++i) {
    std::string_view first = trim_left(lines[i]);
    if (first.empty() || first.front() == '#') continue;
    const int line_no = static_cast<int>(i) + 1;
    auto [part, more] = strip_continuation(first, esc);
    std::string joined(part);
    while (more && i + 1 < lines.size()) {
      std::string_view next = lines[++i];
      if (is_comment(next) || trim_left(next).empty()) continue;
      auto [p, m] = strip_continuation(next, esc);
      joined += p;
      more = m;
    }
    if (trim(joined).empty()) continue;  // a lone escape char
    KERN_TRY_ASSIGN(Instruction ins, parse_instruction(joined, line_no, esc));
    if (can_contain_heredoc(ins, esc) && joined.find("<<") != std::string::npos) {
      ins.heredocs = heredoc_markers(joined, esc);
      for (Heredoc& h : ins.heredocs) {
        bool terminated = false;
        while (i + 1 < lines.size()) {
          std::string_view body_line = lines[++i];
          if (h.strip_tabs) {
            while (!body_line.empty() && body_line.front() == '\t') body_line.remove_prefix(1);
          }
          if (body_line == h.name) {
            terminated = true;
            break;
          }
          h.body += body_line;
          h.body += '\n';
        }
        if (!terminated) return line_error(line_no, "unterminated heredoc <<" + h.name + " (no line " + h.name + " follows)");
      }
    }
    df.instructions.push_back(std::move(ins));
  }
  return df;
}

Result<std::string> expand(std::string_view word, const Lookup& lookup, char escape) {
  Expander e(word, &lookup, escape, Mode::raw);
  Out out;
  KERN_TRY(e.scan(out, false, true));
  return std::move(out.cur);
}

Result<std::vector<std::string>> split_words(std::string_view text, const Lookup& lookup, char escape,
                                             bool expand_vars) {
  Expander e(text, expand_vars ? &lookup : nullptr, escape, Mode::words);
  Out out;
  out.split = true;
  KERN_TRY(e.scan(out, false, true));
  out.end();
  return std::move(out.words);
}

Result<std::string> process_word(std::string_view text, const Lookup& lookup, char escape) {
  Expander e(text, &lookup, escape, Mode::word);
  Out out;
  KERN_TRY(e.scan(out, false, true));
  return std::move(out.cur);
}

Result<std::vector<KeyValue>> parse_key_values(std::string_view text, const Lookup& lookup, char escape,
                                               bool legacy_allowed) {
  text = trim(text);
  std::vector<std::string> words = raw_words(text, escape);
  if (words.empty()) return fail(ErrorKind::usage, 0, "expected name=value, found nothing");
  std::vector<KeyValue> out;
  auto read_key = [&](std::string_view raw) -> Result<std::string> {
    KERN_TRY_ASSIGN(std::string key, process_word(raw, lookup, escape));
    if (key.empty()) return fail(ErrorKind::usage, 0, "empty name in \"" + std::string(text) + "\"");
    return key;
  };
  if (legacy_allowed && words[0].find('=') == std::string::npos) {
    // The one-pair form: the name, blanks, then the value to the end of the line.
    size_t e = 0;
    while (e < text.size() && !is_blank(text[e])) ++e;
    std::string_view value_raw = trim_left(text.substr(e));
    if (value_raw.empty()) {
      return fail(ErrorKind::usage, 0,
                  "\"" + std::string(text) + "\" has a name but no value (use name=value, or name value)");
    }
    KeyValue kv;
    KERN_TRY_ASSIGN(kv.key, read_key(text.substr(0, e)));
    KERN_TRY_ASSIGN(kv.value, process_word(value_raw, lookup, escape));
    out.push_back(std::move(kv));
    return out;
  }
  for (const std::string& w : words) {
    size_t eq = w.find('=');
    KeyValue kv;
    if (eq == std::string::npos) {
      if (legacy_allowed) {
        return fail(ErrorKind::usage, 0, "no = in \"" + w + "\": each word must be name=value");
      }
      KERN_TRY_ASSIGN(kv.key, read_key(w));
      kv.has_value = false;
    } else {
      KERN_TRY_ASSIGN(kv.key, read_key(std::string_view(w).substr(0, eq)));
      KERN_TRY_ASSIGN(kv.value, process_word(std::string_view(w).substr(eq + 1), lookup, escape));
    }
    out.push_back(std::move(kv));
  }
  return out;
}

}  // namespace kern::oci::build
