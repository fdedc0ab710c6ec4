// Store record (de)serialisation; see image_record.h.
#include "oci/image_record.h"

#include <nlohmann/json.hpp>

#include "oci/reference.h"

namespace kern::oci {
namespace {
using json = nlohmann::ordered_json;

Unexpected<Error> bad(const std::string& what) {
  return fail(ErrorKind::image, 0, "store record: " + what);
}

std::vector<std::string> list(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
}
}  // namespace

std::string record_to_json(const ImageRecord& r) {
  json j;
  j["schema"] = 1;
  if (!r.ref.empty()) j["ref"] = r.ref;
  j["digest"] = r.digest;
  j["manifest_media_type"] = r.manifest_media_type;
  j["config_digest"] = r.config_digest;
  j["layers"] = r.layers;
  j["layer_media_types"] = r.layer_media_types;
  j["tree"] = r.tree;
  j["has_owners"] = r.has_owners;
  j["size"] = r.size;
  j["created"] = r.created;
  j["os"] = r.os;
  j["architecture"] = r.architecture;
  j["config"] = {{"entrypoint", r.config.entrypoint}, {"cmd", r.config.cmd}, {"env", r.config.env},
                 {"working_dir", r.config.working_dir}, {"user", r.config.user}};
  if (const auto& h = r.config.healthcheck)
    j["config"]["healthcheck"] = {{"test", h->test},
                                  {"interval_ns", h->interval_ns},
                                  {"timeout_ns", h->timeout_ns},
                                  {"start_period_ns", h->start_period_ns},
                                  {"retries", h->retries}};
  if (!r.source_stamp.empty()) j["source_stamp"] = r.source_stamp;
  if (r.intermediate) j["intermediate"] = true;
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<ImageRecord> record_from_json(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("schema") || j["schema"] != 1) return bad("unknown schema");
  ImageRecord r;
  r.ref = str(j, "ref");
  r.digest = str(j, "digest");
  r.manifest_media_type = str(j, "manifest_media_type");
  r.config_digest = str(j, "config_digest");
  r.layers = list(j, "layers");
  r.layer_media_types = list(j, "layer_media_types");
  r.tree = str(j, "tree");
  r.has_owners = j.value("has_owners", false);
  r.size = j.value("size", uint64_t{0});
  r.created = str(j, "created");
  r.os = str(j, "os");
  r.architecture = str(j, "architecture");
  r.source_stamp = str(j, "source_stamp");
  r.intermediate = j.value("intermediate", false);
  auto c = j.find("config");
  if (c != j.end() && c->is_object()) {
    r.config.entrypoint = list(*c, "entrypoint");
    r.config.cmd = list(*c, "cmd");
    r.config.env = list(*c, "env");
    r.config.working_dir = str(*c, "working_dir");
    r.config.user = str(*c, "user");
    auto h = c->find("healthcheck");
    if (h != c->end() && h->is_object()) {
      ImageHealthcheck hc;
      hc.test = list(*h, "test");
      hc.interval_ns = h->value("interval_ns", uint64_t{0});
      hc.timeout_ns = h->value("timeout_ns", uint64_t{0});
      hc.start_period_ns = h->value("start_period_ns", uint64_t{0});
      hc.retries = h->value("retries", 0u);
      if (!hc.test.empty()) r.config.healthcheck = std::move(hc);
    }
  }
  if (!valid_digest(r.digest)) return bad("invalid digest");
  // The tree id becomes a path component: 64 hex digits and nothing else.
  if (r.tree.size() != 64 || r.tree.find_first_not_of("0123456789abcdef") != std::string::npos)
    return bad("invalid tree id");
  return r;
}

std::string escape_ref(std::string_view ref) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : ref) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.size() <= 200) return out;
  // FNV-1a 64: no libcrypto on the fast path; the record's "ref" field settles collisions.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : ref) h = (h ^ c) * 1099511628211ull;
  char tail[20];
  std::snprintf(tail, sizeof tail, "~%016llx", static_cast<unsigned long long>(h));
  return out.substr(0, 180) + tail;
}

}  // namespace kern::oci
