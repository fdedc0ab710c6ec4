// JsonNode: typed reads of a parsed JSON document that name the JSON path of a wrong type.
#include "runtime/bundle/json_node.h"

#include <limits>

namespace kern::bundle {

bool JsonNode::has(const char* key) const {
  if (!j_->is_object()) return false;
  auto it = j_->find(key);
  return it != j_->end() && !it->is_null();
}

JsonNode JsonNode::at(const char* key) const {
  return JsonNode((*j_)[key], path_.empty() ? std::string(key) : path_ + "." + key);
}

JsonNode JsonNode::at(size_t i) const { return JsonNode((*j_)[i], path_ + "[" + std::to_string(i) + "]"); }

Error JsonNode::error(const std::string& what) const {
  return Error(ErrorKind::config, 0, (path_.empty() ? std::string("(document)") : path_) + ": " + what);
}

Status JsonNode::object() const {
  if (!j_->is_object()) return fail(error("expected an object"));
  return {};
}

Status JsonNode::array() const {
  if (!j_->is_array()) return fail(error("expected an array"));
  return {};
}

Result<std::string> JsonNode::str() const {
  if (!j_->is_string()) return fail(error("expected a string"));
  return j_->get<std::string>();
}

Result<bool> JsonNode::boolean() const {
  if (!j_->is_boolean()) return fail(error("expected a boolean"));
  return j_->get<bool>();
}

Result<int64_t> JsonNode::i64() const {
  if (j_->is_number_integer() && !j_->is_number_unsigned()) return j_->get<int64_t>();
  if (j_->is_number_unsigned()) {
    uint64_t v = j_->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(error("out of range for a signed 64-bit integer"));
    return static_cast<int64_t>(v);
  }
  return fail(error("expected an integer"));
}

Result<uint64_t> JsonNode::u64() const {
  if (j_->is_number_unsigned()) return j_->get<uint64_t>();
  if (j_->is_number_integer()) return fail(error("expected an integer of at least 0"));
  return fail(error("expected an integer"));
}

Result<uint32_t> JsonNode::u32() const {
  KERN_TRY_ASSIGN(uint64_t v, u64());
  if (v > std::numeric_limits<uint32_t>::max()) return fail(error("out of range for a 32-bit unsigned integer"));
  return static_cast<uint32_t>(v);
}

Result<int32_t> JsonNode::i32() const {
  KERN_TRY_ASSIGN(int64_t v, i64());
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    return fail(error("out of range for a 32-bit integer"));
  return static_cast<int32_t>(v);
}

Result<std::vector<std::string>> JsonNode::strings() const {
  KERN_TRY(array());
  std::vector<std::string> out;
  out.reserve(size());
  for (size_t i = 0; i < size(); ++i) {
    KERN_TRY_ASSIGN(std::string s, at(i).str());
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::map<std::string, std::string>> JsonNode::string_map() const {
  KERN_TRY(object());
  std::map<std::string, std::string> out;
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    JsonNode v(it.value(), path_ + "." + it.key());
    KERN_TRY_ASSIGN(std::string s, v.str());
    out.emplace(it.key(), std::move(s));
  }
  return out;
}

namespace {
template <typename T, typename Read>
Status get_with(const JsonNode& obj, const char* key, T& out, Read read) {
  if (!obj.has(key)) return {};
  auto r = read(obj.at(key));
  if (!r) return fail(std::move(r).error());
  out = std::move(r).value();
  return {};
}
}  // namespace

Status get(const JsonNode& o, const char* k, std::string& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.str(); });
}
Status get(const JsonNode& o, const char* k, bool& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.boolean(); });
}
Status get(const JsonNode& o, const char* k, std::optional<int64_t>& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.i64(); });
}
Status get(const JsonNode& o, const char* k, std::optional<uint64_t>& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.u64(); });
}
Status get(const JsonNode& o, const char* k, std::optional<uint32_t>& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.u32(); });
}
Status get(const JsonNode& o, const char* k, std::optional<int32_t>& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.i32(); });
}
Status get(const JsonNode& o, const char* k, std::vector<std::string>& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.strings(); });
}
Status get(const JsonNode& o, const char* k, std::map<std::string, std::string>& out) {
  return get_with(o, k, out, [](const JsonNode& n) { return n.string_map(); });
}

Status require(const JsonNode& obj, const char* key) {
  if (obj.has(key)) return {};
  std::string path = obj.path().empty() ? std::string(key) : obj.path() + "." + key;
  return fail(ErrorKind::config, 0, path + ": required");
}

}  // namespace kern::bundle
