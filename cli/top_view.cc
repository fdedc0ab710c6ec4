// The table of kern top; see top_view.h.
#include "cli/top_view.h"

#include <algorithm>
#include <cstdio>

#include "cli/images_format.h"
#include "cli/ps_fields.h"
#include "cli/text_columns.h"
#include "runtime/sys/log.h"

namespace kern::cli {

std::string top_table(const std::vector<BoxRecord>& boxes, const std::vector<BoxUsage>& usage, int64_t now_unix) {
  std::vector<size_t> order;
  for (size_t i = 0; i < boxes.size() && i < usage.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (usage[a].cpu_percent != usage[b].cpu_percent) return usage[a].cpu_percent > usage[b].cpu_percent;
    return boxes[a].name < boxes[b].name;
  });
  std::vector<std::vector<std::string>> lines = {{"NAME", "STATE", "CPU %", "MEM / LIMIT", "PIDS", "NET RX / TX", "UP"}};
  for (size_t i : order) {
    const BoxUsage& u = usage[i];
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, "%.2f%%", u.cpu_percent);
    lines.push_back({log::sanitize(boxes[i].name), ps_row(boxes[i], now_unix, false)["State"].get<std::string>(), cpu,
                     binary_size(u.memory) + " / " + (u.memory_limit ? binary_size(*u.memory_limit) : std::string("-")),
                     std::to_string(u.pids) + (u.pids_limit ? "/" + std::to_string(*u.pids_limit) : ""),
                     human_size(u.net_rx) + " / " + human_size(u.net_tx), human_duration(now_unix - boxes[i].started_unix)});
  }
  return align_columns(lines);
}

}  // namespace kern::cli
