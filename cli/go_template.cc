// The --format templates of the listing verbs; see go_template.h.
#include "cli/go_template.h"

#include <algorithm>
#include <cctype>

#include "cli/text_columns.h"
#include "runtime/sys/log.h"

namespace kern::cli {
// A named namespace: cli/CMakeLists.txt compiles the verb files as one unit.
namespace go_template_impl {

using Action = GoTemplate::Action;
using json = nlohmann::ordered_json;

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\n"));
  s.erase(s.find_last_not_of(" \t\n") + 1);
  return s;
}

// "\t" and "\n" as typed in a shell become the characters (docker does the same before parsing).
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 't' || s[i + 1] == 'n')) out += s[++i] == 't' ? '\t' : '\n';
    else out += s[i];
  }
  return out;
}

Error usage(const std::string& msg, const std::string& hint) {
  return Error(ErrorKind::usage, 0, msg).with_hint(hint);
}

std::string syntax_hint() {
  return "{{.Field}}, {{.A.B}}, {{json .}}, {{json .Field}}, {{index .Field \"key\"}}, a \"table\" prefix, or json";
}

// ".A.B" as {"A", "B"}; "." as {}.
Result<std::vector<std::string>> parse_path(const std::string& word, const std::string& action) {
  if (word.empty() || word[0] != '.')
    return fail(usage("--format: \"{{" + log::sanitize(action) + "}}\" is not a field (a field starts with a dot)",
                      syntax_hint()));
  std::vector<std::string> path;
  if (word == ".") return path;
  size_t pos = 1;
  for (;;) {
    size_t dot = word.find('.', pos);
    std::string seg = word.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    bool ok = !seg.empty() && std::all_of(seg.begin(), seg.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!ok) return fail(usage("--format: \"{{" + log::sanitize(action) + "}}\": bad field name", syntax_hint()));
    path.push_back(seg);
    if (dot == std::string::npos) return path;
    pos = dot + 1;
  }
}

// The words of an action: bare words and double-quoted strings ("a b" is one word, quotes gone).
Result<std::vector<std::string>> split_words(const std::string& action) {
  std::vector<std::string> words;
  for (size_t i = 0; i < action.size();) {
    if (action[i] == ' ' || action[i] == '\t') {
      ++i;
      continue;
    }
    std::string w;
    if (action[i] == '"') {
      size_t end = action.find('"', i + 1);
      if (end == std::string::npos)
        return fail(usage("--format: \"{{" + log::sanitize(action) + "}}\": a quote is not closed", syntax_hint()));
      w = "\"" + action.substr(i + 1, end - i - 1);  // the leading quote marks a string
      i = end + 1;
    } else {
      while (i < action.size() && action[i] != ' ' && action[i] != '\t') w += action[i++];
    }
    words.push_back(w);
  }
  return words;
}

Result<Action> parse_action(const std::string& action) {
  KERN_TRY_ASSIGN(std::vector<std::string> words, split_words(action));
  Action a;
  if (words.empty()) return fail(usage("--format: an empty action \"{{}}\"", syntax_hint()));
  if (words[0] == "json" && words.size() == 2) {
    a.op = Action::Op::json;
    KERN_TRY_ASSIGN(a.path, parse_path(words[1], action));
    return a;
  }
  if (words[0] == "index" && words.size() >= 3) {
    a.op = Action::Op::index;
    KERN_TRY_ASSIGN(a.path, parse_path(words[1], action));
    for (size_t i = 2; i < words.size(); ++i) {
      const std::string& k = words[i];
      bool number = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (k.empty() || (k[0] != '"' && !number))
        return fail(usage("--format: \"{{" + log::sanitize(action) + "}}\": index takes \"quoted\" keys or numbers",
                          "{{index .Labels \"com.example.key\"}}"));
      a.keys.push_back(k[0] == '"' ? k.substr(1) : k);
    }
    return a;
  }
  if (words.size() != 1 || words[0][0] != '.')
    return fail(usage("--format: \"{{" + log::sanitize(action) + "}}\" is not an action kern knows", syntax_hint()));
  a.op = Action::Op::field;
  KERN_TRY_ASSIGN(a.path, parse_path(words[0], action));
  return a;
}

std::string dotted(const std::vector<std::string>& path, size_t n) {
  std::string s;
  for (size_t i = 0; i < n && i < path.size(); ++i) s += "." + path[i];
  return s.empty() ? "." : s;
}

std::string keys_of(const json& o) {
  std::string s;
  for (const auto& [k, v] : o.items()) s += " ." + k;
  return s;
}

Result<const json*> lookup(const json& row, const std::vector<std::string>& path, const std::string& verb) {
  const json* at = &row;
  for (size_t i = 0; i < path.size(); ++i) {
    if (!at->is_object())
      return fail(usage("--format: " + dotted(path, i + 1) + ": " + dotted(path, i) + " is not an object",
                        "{{json " + dotted(path, i) + "}} shows what it holds"));
    auto it = at->find(path[i]);
    if (it == at->end())
      return fail(usage(verb + " --format: no field " + dotted(path, i + 1),
                        dotted(path, i) + " has" + keys_of(*at)));
    at = &*it;
  }
  return at;
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "<nil>";
  if (v.is_object()) {
    std::string s;
    for (const auto& [k, x] : v.items()) s += (s.empty() ? "" : ",") + k + "=" + text_of(x);
    return s;
  }
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + text_of(x);
    return s;
  }
  return v.dump();
}

std::string compact(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// What a table's header says for an action: the verb's header for a top-level field, else the
// last name in capitals ({{.State.Pid}}: PID; {{json .}}: JSON).
std::string header_of(const Action& a, const std::vector<TemplateField>& fields) {
  if (a.path.size() == 1)
    for (const auto& f : fields)
      if (f.name == a.path[0]) return a.op == Action::Op::index ? upper(a.keys.back()) : f.header;
  if (a.op == Action::Op::index) return upper(a.keys.back());
  if (a.path.empty()) return a.op == Action::Op::json ? "JSON" : "";
  return upper(a.path.back());
}

std::string field_list_impl(const std::vector<TemplateField>& fields) {
  std::string s;
  for (const auto& f : fields) s += " ." + f.name;
  return s;
}

Result<GoTemplate> parse_impl(const std::string& text, const std::string& verb,
                              const std::vector<TemplateField>& fields) {
  GoTemplate t;
  std::string body = text;
  if (trim(body) == "json") {
    t.kind = GoTemplate::Kind::json;
    return t;
  }
  if (body.rfind("table", 0) == 0 && (body.size() == 5 || body[5] == ' ' || body[5] == '\t')) {
    t.kind = GoTemplate::Kind::table;
    body = body.size() > 6 ? body.substr(6) : std::string();
    if (trim(body).empty()) return t;
  }
  body = unescape(body);
  std::string lit;
  bool trim_next = false;
  for (size_t i = 0; i < body.size();) {
    if (body.compare(i, 2, "{{") != 0) {
      lit += body[i++];
      continue;
    }
    size_t end = body.find("}}", i + 2);
    if (end == std::string::npos)
      return fail(usage("--format: \"{{\" without \"}}\"", syntax_hint()));
    std::string inner = body.substr(i + 2, end - i - 2);
    if (trim_next) lit.erase(0, lit.find_first_not_of(" \t\n"));
    // "{{- " trims the white space before, " -}}" the white space after.
    if (inner.rfind("- ", 0) == 0) {
      inner.erase(0, 2);
      lit.erase(lit.find_last_not_of(" \t\n") + 1);
    }
    trim_next = inner.size() >= 2 && inner.compare(inner.size() - 2, 2, " -") == 0;
    if (trim_next) inner.resize(inner.size() - 2);
    if (!lit.empty()) t.actions.push_back({Action::Op::text, lit, {}, {}});
    lit.clear();
    KERN_TRY_ASSIGN(Action a, parse_action(trim(inner)));
    if (!fields.empty() && !a.path.empty() &&
        std::none_of(fields.begin(), fields.end(), [&](const TemplateField& f) { return f.name == a.path[0]; }))
      return fail(usage(verb + " --format: no field ." + a.path[0], verb + " has" + field_list_impl(fields)));
    t.actions.push_back(std::move(a));
    i = end + 2;
  }
  if (trim_next) lit.erase(0, lit.find_first_not_of(" \t\n"));
  if (!lit.empty()) t.actions.push_back({Action::Op::text, lit, {}, {}});
  return t;
}

Result<std::string> render_row_impl(const GoTemplate& t, const json& row, const std::string& verb) {
  if (t.kind == GoTemplate::Kind::json) return compact(row);
  std::string out;
  for (const auto& a : t.actions) {
    if (a.op == Action::Op::text) {
      out += a.text;
      continue;
    }
    KERN_TRY_ASSIGN(const json* v, lookup(row, a.path, verb));
    if (a.op == Action::Op::json) {
      out += compact(*v);
      continue;
    }
    if (a.op == Action::Op::index) {
      for (const auto& k : a.keys) {
        if (v->is_object()) {
          auto it = v->find(k);
          // Go's index of a map gives the zero value for a missing key: "" here.
          static const json kNone = "";
          v = it == v->end() ? &kNone : &*it;
        } else if (v->is_array() && !k.empty() && k.find_first_not_of("0123456789") == std::string::npos &&
                   std::stoull(k) < v->size()) {
          v = &(*v)[std::stoull(k)];
        } else {
          return fail(usage(verb + " --format: index " + dotted(a.path, a.path.size()) + " \"" + log::sanitize(k) +
                                "\": nothing to index there",
                            "index takes an object's key or a list's position"));
        }
      }
    }
    out += text_of(*v);
  }
  return out;
}

Result<std::string> render_rows_impl(const GoTemplate& t, const std::vector<json>& rows, const std::string& verb,
                                     const std::vector<TemplateField>& fields) {
  std::string out;
  if (t.kind != GoTemplate::Kind::table) {
    for (const auto& r : rows) {
      KERN_TRY_ASSIGN(std::string line, render_row_impl(t, r, verb));
      out += line + "\n";
    }
    return out;
  }
  std::string header;
  for (const auto& a : t.actions) header += a.op == Action::Op::text ? a.text : header_of(a, fields);
  std::vector<std::vector<std::string>> lines;
  // A template may print several lines a row ("\n"): each is a line of the table.
  auto add = [&lines](const std::string& text) {
    size_t pos = 0;
    for (;;) {
      size_t nl = text.find('\n', pos);
      lines.push_back(split_tabs(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos)));
      if (nl == std::string::npos) return;
      pos = nl + 1;
    }
  };
  add(header);
  for (const auto& r : rows) {
    KERN_TRY_ASSIGN(std::string line, render_row_impl(t, r, verb));
    add(line);
  }
  return align_columns(lines);
}

}  // namespace go_template_impl

std::string field_list(const std::vector<TemplateField>& fields) { return go_template_impl::field_list_impl(fields); }

Result<GoTemplate> parse_go_template(const std::string& text, const std::string& verb,
                                     const std::vector<TemplateField>& fields) {
  return go_template_impl::parse_impl(text, verb, fields);
}

Result<std::string> render_row(const GoTemplate& t, const nlohmann::ordered_json& row, const std::string& verb) {
  return go_template_impl::render_row_impl(t, row, verb);
}

Result<std::string> render_rows(const GoTemplate& t, const std::vector<nlohmann::ordered_json>& rows,
                                const std::string& verb, const std::vector<TemplateField>& fields) {
  return go_template_impl::render_rows_impl(t, rows, verb, fields);
}

}  // namespace kern::cli
