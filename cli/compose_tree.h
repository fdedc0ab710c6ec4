// The YAML tree kern compose works on (kern-compose(1)): yaml-cpp's nodes copied into plain
// values that remember their file and line, with YAML merge keys ("<<") applied while copying
// (yaml-cpp resolves anchors and aliases but not merge keys). The Compose merge of two trees
// (several -f files, extends) and the writers of `kern compose config` work on it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::compose {

struct Node {
  enum class Kind { null, scalar, seq, map };
  Kind kind = Kind::null;
  std::string text;         // a scalar's text
  bool quoted = false;      // a quoted scalar: a string even when it reads as a number or a bool
  std::vector<Node> items;  // a sequence
  std::vector<std::pair<std::string, Node>> entries;  // a mapping, in file order
  std::shared_ptr<const std::string> file;            // where it was read (empty for made nodes)
  int line = 0;

  bool is_null() const { return kind == Kind::null; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_seq() const { return kind == Kind::seq; }
  bool is_map() const { return kind == Kind::map; }
  const Node* get(std::string_view key) const;
  Node* get(std::string_view key);
  // Replaces the value of `key`, or appends it.
  void set(const std::string& key, Node value);
  void erase(std::string_view key);
  // "FILE:LINE" (or "FILE", or empty).
  std::string where() const;
  // "a mapping", "a list", "a string", "a number", "a boolean", "null": for type errors.
  std::string kind_name() const;

  static Node string(std::string s);  // a quoted scalar
  static Node plain(std::string s);   // a plain scalar (a number, a boolean)
  static Node map();
  static Node seq();
};

// The error for `path` of `node`: "FILE:LINE: PATH: MESSAGE".
Error tree_error(const Node& node, const std::string& path, const std::string& message);

// Parses YAML text (one document; an empty one is an empty mapping) into a Node, applying merge
// keys: `<<: *a` or `<<: [*a, *b]` adds the keys of those mappings that the mapping does not
// name itself (of two merged mappings, the first wins). A syntax error names file and line.
Result<Node> parse_yaml(const std::string& text, const std::string& file);
// The same, from a file.
Result<Node> read_yaml_file(const std::string& path);

// Compose's merge of `over` into `base` at `path` (a dotted path, "services.web"): mappings key
// by key, scalars replaced, sequences appended, except: command, entrypoint and healthcheck.test
// are replaced; volumes and secrets are unique by target, ports by ip/published/target/protocol
// (a later entry replaces the earlier of the same key); other lists of scalars keep one copy of
// each. environment, labels and the other KEY=VALUE lists must already be mappings
// (normalize_service).
void merge_tree(Node& base, const Node& over, const std::string& path);

// Turns a service's list forms into the mapping forms the merge works on: environment, labels,
// sysctls, extra_hosts and annotations lists ("K=V", "K"), and a depends_on list.
void normalize_service(Node& service);

// The writers of `kern compose config`: YAML (block style, a string that would read as
// something else quoted) and JSON (2-space indent).
std::string to_yaml(const Node& node);
std::string to_json(const Node& node);

// Whether a plain scalar reads as YAML 1.1/1.2 true or false; nullopt when it is neither.
std::optional<bool> scalar_bool(const Node& node);

}  // namespace kern::compose
