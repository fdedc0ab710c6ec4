// A read-only view of one value of a parsed JSON document together with its JSON path
// ("process.args[2]"), so that every type error names where it is. Pure; any process.
//
// The OCI runtime specification says unknown properties are ignored, so nothing here rejects a
// key it was not asked about; a known key with the wrong type is refused. A null is treated as
// the key being absent, as the engines' own Go decoders do.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::bundle {

class JsonNode {
 public:
  JsonNode(const nlohmann::json& j, std::string path) : j_(&j), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *j_; }
  const std::string& path() const { return path_; }

  // Whether `key` is present and not null (only meaningful on an object).
  bool has(const char* key) const;
  JsonNode at(const char* key) const;  // requires has(key)
  JsonNode at(size_t i) const;         // requires is an array of more than i items
  size_t size() const { return j_->size(); }

  // The error for this node: "<path>: <what>".
  Error error(const std::string& what) const;

  Status object() const;  // an object, else "expected an object"
  Status array() const;   // an array, else "expected an array"
  Result<std::string> str() const;
  Result<bool> boolean() const;
  Result<int64_t> i64() const;
  Result<uint64_t> u64() const;
  Result<uint32_t> u32() const;
  Result<int32_t> i32() const;
  Result<std::vector<std::string>> strings() const;
  Result<std::map<std::string, std::string>> string_map() const;

 private:
  const nlohmann::json* j_;
  std::string path_;
};

// Optional members: leave `out` alone when the key is absent, refuse a wrong type.
Status get(const JsonNode& obj, const char* key, std::string& out);
Status get(const JsonNode& obj, const char* key, bool& out);
Status get(const JsonNode& obj, const char* key, std::optional<int64_t>& out);
Status get(const JsonNode& obj, const char* key, std::optional<uint64_t>& out);
Status get(const JsonNode& obj, const char* key, std::optional<uint32_t>& out);
Status get(const JsonNode& obj, const char* key, std::optional<int32_t>& out);
Status get(const JsonNode& obj, const char* key, std::vector<std::string>& out);
Status get(const JsonNode& obj, const char* key, std::map<std::string, std::string>& out);
// A member the schema requires: "<path>.<key>: required" when absent.
Status require(const JsonNode& obj, const char* key);

// Each item of an array of objects, after the members the schema requires are checked: calls
// f(item) -> Status, stopping at the first error.
template <typename F>
Status each_object(const JsonNode& arr, std::initializer_list<const char*> required, F&& f) {
  KERN_TRY(arr.array());
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonNode item = arr.at(i);
    KERN_TRY(item.object());
    for (const char* k : required) KERN_TRY(require(item, k));
    KERN_TRY(f(item));
  }
  return {};
}

}  // namespace kern::bundle
