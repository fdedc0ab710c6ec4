// The rows, filter, times, sizes and templates of `kern images`; see images_format.h.
#include "cli/images_format.h"

#include <fnmatch.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "oci/reference.h"

namespace kern::cli {
namespace {

struct Field {
  const char* name;
  const char* header;
};
constexpr Field kFields[] = {{"Repository", "REPOSITORY"}, {"Tag", "TAG"},          {"ID", "IMAGE ID"},
                             {"Digest", "DIGEST"},         {"CreatedSince", "CREATED"}, {"CreatedAt", "CREATED AT"},
                             {"Size", "SIZE"}};

std::string short_name(std::string name) {
  if (name.rfind("docker.io/", 0) == 0) name.erase(0, 10);
  if (name.rfind("library/", 0) == 0 && name.find('/', 8) == std::string::npos) name.erase(0, 8);
  return name;
}

std::string value(const ImageRow& r, const std::string& field, std::time_t now) {
  if (field == "Repository") return r.repository;
  if (field == "Tag") return r.tag;
  if (field == "ID") return r.id;
  if (field == "Digest") return r.manifest_digest.empty() ? "<none>" : r.manifest_digest;
  if (field == "CreatedSince") return created_since(r.created, now);
  if (field == "CreatedAt") return docker_time(parse_rfc3339(r.created));
  if (field == "Size") return human_size(r.size);
  return {};
}

}  // namespace

ImageRow image_row(const oci::ImageRecord& r) {
  ImageRow row;
  row.repository = row.tag = "<none>";
  if (!r.ref.empty()) {
    row.ref = r.ref;
    auto ref = oci::parse_reference(r.ref);
    if (ref && ref->kind == oci::Reference::Kind::registry) {
      row.repository = ref->name();
      row.tag = ref->tag.empty() ? "<none>" : ref->tag;
    } else {
      row.repository = r.ref;
      row.tag = "-";
    }
  }
  const std::string& id_from = r.config_digest.size() > 19 ? r.config_digest : r.digest;
  row.id = id_from.substr(7, 12);
  row.config_digest = r.config_digest;
  row.manifest_digest = r.digest;
  row.created = r.created;
  row.size = r.size;
  return row;
}

int64_t parse_rfc3339(const std::string& text) {
  int y, mo, d, h, mi, s, n = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
    return -1;
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  }
  int64_t offset = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') && text[pos + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(text.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) return -1;
    offset = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return -1;
  }
  if (pos != text.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return -1;
  struct tm tm {};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  int64_t t = static_cast<int64_t>(::timegm(&tm)) - offset;
  return t < 0 ? -1 : t;
}

std::string human_duration(int64_t secs) {
  auto n = [](int64_t v, const char* unit) { return std::to_string(v) + " " + unit; };
  if (secs < 1) return "Less than a second";
  if (secs == 1) return "1 second";
  if (secs < 60) return n(secs, "seconds");
  int64_t minutes = secs / 60;
  if (minutes == 1) return "About a minute";
  if (minutes < 60) return n(minutes, "minutes");
  int64_t hours = (secs + 1800) / 3600;  // rounded, as Docker does
  if (hours == 1) return "About an hour";
  if (hours < 48) return n(hours, "hours");
  if (hours < 24 * 7 * 2) return n(hours / 24, "days");
  if (hours < 24 * 30 * 2) return n(hours / 24 / 7, "weeks");
  if (hours < 24 * 365 * 2) return n(hours / 24 / 30, "months");
  return n(secs / 3600 / 24 / 365, "years");
}

std::string created_since(const std::string& created, std::time_t now) {
  int64_t t = parse_rfc3339(created);
  if (t < 0) return "N/A";
  return human_duration(static_cast<int64_t>(now) - t) + " ago";
}

std::string docker_time(int64_t unix_seconds) {
  if (unix_seconds < 0) return "N/A";
  std::time_t tt = static_cast<std::time_t>(unix_seconds);
  struct tm tm {};
  ::gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S +0000 UTC", &tm);
  return buf;
}

std::string human_size(uint64_t bytes) {
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1000.0 && u + 1 < sizeof kUnits / sizeof kUnits[0]) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, kUnits[u]);
  return buf;
}

bool reference_matches(const ImageRow& row, const std::string& pattern) {
  if (row.ref.empty() || row.tag == "-") return false;
  // A ':' after the last '/' starts a tag; one before it is a registry's port.
  size_t colon = pattern.rfind(':'), slash = pattern.rfind('/');
  bool with_tag = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  std::string full = with_tag ? row.repository + ":" + row.tag : row.repository;
  for (const std::string& candidate : {full, short_name(full)})
    if (::fnmatch(pattern.c_str(), candidate.c_str(), FNM_PATHNAME) == 0) return true;
  return false;
}

const std::vector<TemplateField>& image_fields() {
  static const std::vector<TemplateField> fields = [] {
    std::vector<TemplateField> v;
    for (const auto& x : kFields) v.push_back({x.name, x.header});
    return v;
  }();
  return fields;
}

nlohmann::ordered_json image_template_row(const ImageRow& r, std::time_t now) {
  nlohmann::ordered_json j;
  for (const auto& x : kFields) j[x.name] = value(r, x.name, now);
  return j;
}

Result<GoTemplate> parse_image_format(const std::string& text) {
  return parse_go_template(text, "kern images", image_fields());
}

Result<std::string> render_images(const std::vector<ImageRow>& rows, const GoTemplate* f, std::time_t now) {
  GoTemplate table;
  if (!f || f->default_table()) {
    KERN_TRY_ASSIGN(table, parse_image_format("table {{.Repository}}\\t{{.Tag}}\\t{{.ID}}\\t{{.CreatedSince}}\\t{{.Size}}"));
    f = &table;
  }
  std::vector<nlohmann::ordered_json> objects;
  for (const auto& r : rows) objects.push_back(image_template_row(r, now));
  return render_rows(*f, objects, "kern images", image_fields());
}

}  // namespace kern::cli
