// What `kern images` prints, as pure functions: the rows (one per name, one per unnamed image),
// the reference filter, Docker's relative CREATED, sizes, and the rows --format renders
// (cli/go_template.h) with the fields {{.Repository}} {{.Tag}} {{.ID}} {{.Digest}}
// {{.CreatedSince}} {{.CreatedAt}} {{.Size}}. Any process.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "cli/go_template.h"
#include "oci/image_record.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct ImageRow {
  std::string repository, tag;  // "<none>" when unnamed
  std::string ref;              // the full name, or empty
  std::string id;               // 12 hex digits of the config digest (Docker's IMAGE ID)
  std::string config_digest, manifest_digest;
  std::string created;          // as the config has it (RFC 3339), may be empty
  uint64_t size = 0;
};

ImageRow image_row(const oci::ImageRecord& r);

// Seconds since the epoch of an RFC 3339 time ("2024-05-01T10:00:00.123Z", "...+02:00"), or -1.
int64_t parse_rfc3339(const std::string& text);
// Docker's durations: "Less than a second", "1 second", "About a minute", "3 days", ...
std::string human_duration(int64_t seconds);
// Docker's CreatedAt: "2024-05-01 10:00:00 +0000 UTC"; "N/A" for a negative time.
std::string docker_time(int64_t unix_seconds);
// Docker's "3 days ago", "About an hour ago", "Less than a second ago"; "N/A" without a time.
std::string created_since(const std::string& created, std::time_t now);
// Docker's sizes: decimal units, three significant digits ("7.8MB", "123kB", "1.2GB").
std::string human_size(uint64_t bytes);

// A reference filter: "busybox", "busybox:1.36", "docker.io/library/busybox", "bus*", "*/x:*"
// (shell patterns; '*' does not cross '/'), matched against the full and the short name.
bool reference_matches(const ImageRow& row, const std::string& pattern);

// The fields of --format (cli/go_template.h), with their Docker headers.
const std::vector<TemplateField>& image_fields();
// Refuses an unknown field or an unterminated action (ErrorKind::usage).
Result<GoTemplate> parse_image_format(const std::string& text);
// The output for `rows` under `f`; the default table when `f` is null or "table" alone.
Result<std::string> render_images(const std::vector<ImageRow>& rows, const GoTemplate* f, std::time_t now);

}  // namespace kern::cli
