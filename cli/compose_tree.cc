// YAML into compose::Node, merge keys, the Compose merge, and the config writers (compose_tree.h).
#include "cli/compose_tree.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace kern::compose {
namespace tree_impl {

using FilePtr = std::shared_ptr<const std::string>;

// Aliases are copied, so a small file of aliases of aliases could expand without bound: the
// copy stops at this many nodes.
constexpr size_t kMaxNodes = 1'000'000;

struct Budget {
  size_t nodes = 0;
};

Result<Node> convert(const YAML::Node& y, const FilePtr& file, int depth, Budget& budget);

Result<void> add_merged(Node& out, const std::set<std::string>& explicit_keys, const Node& src, const FilePtr& file,
                        int line) {
  if (!src.is_map()) {
    Node at;
    at.file = file;
    at.line = line;
    return fail(tree_error(at, "<<", "a merge key takes a mapping or a list of mappings, not " + src.kind_name()));
  }
  for (const auto& [k, v] : src.entries)
    if (!explicit_keys.count(k) && !out.get(k)) out.entries.emplace_back(k, v);
  return {};
}

Result<Node> convert(const YAML::Node& y, const FilePtr& file, int depth, Budget& budget) {
  Node n;
  n.file = file;
  n.line = y.Mark().line + 1;
  if (depth > 200) return fail(tree_error(n, "", "nested too deep"));
  if (++budget.nodes > kMaxNodes)
    return fail(tree_error(n, "", "more than " + std::to_string(kMaxNodes) + " values once aliases are expanded"));
  switch (y.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return n;
    case YAML::NodeType::Scalar:
      n.kind = Node::Kind::scalar;
      n.text = y.Scalar();
      n.quoted = y.Tag() == "!";
      return n;
    case YAML::NodeType::Sequence:
      n.kind = Node::Kind::seq;
      for (const auto& item : y) {
        KERN_TRY_ASSIGN(Node c, convert(item, file, depth + 1, budget));
        n.items.push_back(std::move(c));
      }
      return n;
    case YAML::NodeType::Map: {
      n.kind = Node::Kind::map;
      std::set<std::string> explicit_keys;
      for (const auto& kv : y) {
        if (!kv.first.IsScalar()) return fail(tree_error(n, "", "a mapping key must be a string"));
        std::string k = kv.first.Scalar();
        if (k == "<<" && kv.first.Tag() != "!") continue;
        if (!explicit_keys.insert(k).second) return fail(tree_error(n, k, "duplicate key"));
      }
      for (const auto& kv : y) {
        std::string k = kv.first.Scalar();
        KERN_TRY_ASSIGN(Node v, convert(kv.second, file, depth + 1, budget));
        if (k == "<<" && kv.first.Tag() != "!") {
          if (v.is_seq()) {
            for (const Node& m : v.items) KERN_TRY(add_merged(n, explicit_keys, m, file, v.line));
          } else {
            KERN_TRY(add_merged(n, explicit_keys, v, file, v.line));
          }
          continue;
        }
        n.entries.emplace_back(std::move(k), std::move(v));
      }
      return n;
    }
  }
  return n;
}

std::string join_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// The identity of an entry of a unique-resource list (compose_tree.h), or empty for none.
std::string unique_key(const std::string& attr, const Node& item) {
  auto field = [&](const char* k) {
    const Node* f = item.get(k);
    return f && f->is_scalar() ? f->text : std::string();
  };
  if (attr == "volumes") {
    if (item.is_map()) return field("target");
    if (!item.is_scalar()) return "";
    size_t c = item.text.find(':');
    if (c == std::string::npos) return item.text;
    size_t e = item.text.find(':', c + 1);
    return item.text.substr(c + 1, e == std::string::npos ? std::string::npos : e - c - 1);
  }
  if (attr == "secrets") {
    if (item.is_map()) {
      std::string t = field("target");
      return t.empty() ? field("source") : t;
    }
    return item.is_scalar() ? item.text : "";
  }
  if (attr == "ports") {
    if (item.is_map())
      return field("host_ip") + "|" + field("published") + "|" + field("target") + "|" + field("protocol");
    return item.is_scalar() ? item.text : "";
  }
  return item.is_scalar() ? "=" + item.text : "";
}

bool replaced_whole(const std::string& path) {
  auto ends = [&](std::string_view s) {
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".command") || ends(".entrypoint") || ends(".healthcheck.test");
}

bool reads_as_other(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return true;
  static const char* const words[] = {"true", "false", "yes", "no", "on", "off", "y", "n"};
  std::string low;
  for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : words)
    if (low == w) return true;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (end && *end == '\0') return true;
  return s.find_first_of(".") != std::string::npos && (low == ".inf" || low == ".nan" || low == "-.inf");
}

void emit(YAML::Emitter& out, const Node& n) {
  switch (n.kind) {
    case Node::Kind::null:
      out << YAML::Null;
      break;
    case Node::Kind::scalar:
      if (n.quoted && reads_as_other(n.text))
        out << YAML::DoubleQuoted << n.text;
      else
        out << n.text;
      break;
    case Node::Kind::seq:
      out << YAML::BeginSeq;
      for (const Node& i : n.items) emit(out, i);
      out << YAML::EndSeq;
      break;
    case Node::Kind::map:
      out << YAML::BeginMap;
      for (const auto& [k, v] : n.entries) {
        out << YAML::Key << k << YAML::Value;
        emit(out, v);
      }
      out << YAML::EndMap;
      break;
  }
}

// A plain scalar that reads as a number or a boolean stays one in JSON; a quoted one is a string.
nlohmann::ordered_json json_value(const Node& n) {
  switch (n.kind) {
    case Node::Kind::null:
      return nullptr;
    case Node::Kind::scalar: {
      if (n.quoted) return n.text;
      if (std::optional<bool> b = scalar_bool(n); b && (n.text == "true" || n.text == "false")) return *b;
      nlohmann::ordered_json number = nlohmann::ordered_json::parse(n.text, nullptr, false);
      return number.is_number() ? number : nlohmann::ordered_json(n.text);
    }
    case Node::Kind::seq: {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const Node& i : n.items) a.push_back(json_value(i));
      return a;
    }
    case Node::Kind::map: {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (const auto& [k, v] : n.entries) o[k] = json_value(v);
      return o;
    }
  }
  return nullptr;
}

// "K=V" / "K" / "K:V" (extra_hosts) into the mapping entry it names.
std::pair<std::string, Node> split_assignment(const Node& item, bool host) {
  size_t eq = item.text.find('=');
  if (host && eq == std::string::npos) eq = item.text.find(':');
  if (eq == std::string::npos) {
    Node v;
    v.file = item.file;
    v.line = item.line;
    return {item.text, v};
  }
  Node v = item;
  v.quoted = true;
  v.text = item.text.substr(eq + 1);
  return {item.text.substr(0, eq), v};
}

}  // namespace tree_impl

const Node* Node::get(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}
Node* Node::get(std::string_view key) {
  for (auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}
void Node::set(const std::string& key, Node value) {
  if (Node* n = get(key))
    *n = std::move(value);
  else
    entries.emplace_back(key, std::move(value));
}
void Node::erase(std::string_view key) {
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (it->first == key) {
      entries.erase(it);
      return;
    }
}
std::string Node::where() const {
  if (!file) return "";
  return line > 0 ? *file + ":" + std::to_string(line) : *file;
}
std::string Node::kind_name() const {
  switch (kind) {
    case Kind::null:
      return "null";
    case Kind::seq:
      return "a list";
    case Kind::map:
      return "a mapping";
    case Kind::scalar:
      break;
  }
  if (quoted) return "a string";
  if (scalar_bool(*this)) return "a boolean";
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0') return "a number";
  return "a string";
}
Node Node::string(std::string s) {
  Node n;
  n.kind = Kind::scalar;
  n.text = std::move(s);
  n.quoted = true;
  return n;
}
Node Node::plain(std::string s) {
  Node n = string(std::move(s));
  n.quoted = false;
  return n;
}
Node Node::map() {
  Node n;
  n.kind = Kind::map;
  return n;
}
Node Node::seq() {
  Node n;
  n.kind = Kind::seq;
  return n;
}

std::optional<bool> scalar_bool(const Node& node) {
  if (!node.is_scalar()) return std::nullopt;
  std::string low;
  for (char c : node.text) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (low == "true" || low == "yes" || low == "on") return true;
  if (low == "false" || low == "no" || low == "off") return false;
  return std::nullopt;
}

Error tree_error(const Node& node, const std::string& path, const std::string& message) {
  std::string where = node.where();
  std::string text = where.empty() ? "" : where + ": ";
  if (!path.empty()) text += path + ": ";
  return Error(ErrorKind::config, 0, text + message);
}

Result<Node> parse_yaml(const std::string& text, const std::string& file) {
  auto name = std::make_shared<const std::string>(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Node at;
    at.file = name;
    at.line = e.mark.line + 1;
    return fail(tree_error(at, "", e.msg));
  }
  try {
    tree_impl::Budget budget;
    KERN_TRY_ASSIGN(Node n, tree_impl::convert(root, name, 0, budget));
    if (n.is_null()) {
      n = Node::map();
      n.file = name;
    }
    return n;
  } catch (const YAML::Exception& e) {
    Node at;
    at.file = name;
    return fail(tree_error(at, "", e.msg));
  }
}

Result<Node> read_yaml_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Error(ErrorKind::config, errno, "open \"" + path + "\""));
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_yaml(ss.str(), path);
}

void merge_tree(Node& base, const Node& over, const std::string& path) {
  using namespace tree_impl;
  if (base.is_map() && over.is_map()) {
    for (const auto& [k, v] : over.entries) {
      if (Node* b = base.get(k))
        merge_tree(*b, v, join_path(path, k));
      else
        base.entries.emplace_back(k, v);
    }
    return;
  }
  if (base.is_seq() && over.is_seq() && !replaced_whole(path)) {
    std::string attr = path.substr(path.rfind('.') + 1);
    for (const Node& item : over.items) {
      std::string key = unique_key(attr, item);
      bool done = false;
      if (!key.empty())
        for (Node& b : base.items)
          if (unique_key(attr, b) == key) {
            b = item;
            done = true;
            break;
          }
      if (!done) base.items.push_back(item);
    }
    return;
  }
  base = over;
}

void normalize_service(Node& service) {
  using namespace tree_impl;
  if (!service.is_map()) return;
  for (const char* attr : {"environment", "labels", "sysctls", "extra_hosts", "annotations"}) {
    Node* n = service.get(attr);
    if (!n || !n->is_seq()) continue;
    bool all_scalars = true;
    for (const Node& i : n->items) all_scalars = all_scalars && i.is_scalar();
    if (!all_scalars) continue;  // a type error, reported by the model
    Node m = Node::map();
    m.file = n->file;
    m.line = n->line;
    for (const Node& i : n->items) {
      auto kv = split_assignment(i, std::string_view(attr) == "extra_hosts");
      m.set(kv.first, kv.second);
    }
    *n = std::move(m);
  }
  if (Node* d = service.get("depends_on"); d && d->is_seq()) {
    Node m = Node::map();
    m.file = d->file;
    m.line = d->line;
    for (const Node& i : d->items) {
      if (!i.is_scalar()) return;
      Node c = Node::map();
      c.file = i.file;
      c.line = i.line;
      c.set("condition", Node::string("service_started"));
      m.set(i.text, c);
    }
    *d = std::move(m);
  }
}

std::string to_yaml(const Node& node) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  tree_impl::emit(out, node);
  return std::string(out.c_str()) + "\n";
}

std::string to_json(const Node& node) {
  return tree_impl::json_value(node).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace kern::compose
