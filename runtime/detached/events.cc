// The event log; see events.h.
#include "runtime/detached/events.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "runtime/detached/wire.h"
#include "runtime/sys/fdio.h"

namespace kern {

std::string event_log_path(const std::string& runtime_dir) { return runtime_dir + "/events.jsonl"; }

void append_event(const std::string& runtime_dir, const std::string& type, const std::string& name,
                  const std::string& extra_json) {
  const std::string path = event_log_path(runtime_dir);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) > kEventLogMax)
    (void)::rename(path.c_str(), (path + ".1").c_str());
  std::string line = "{\"time_ns\":" + std::to_string(wall_ns()) + ",\"type\":" + nlohmann::json(type).dump() +
                     ",\"name\":" + nlohmann::json(name).dump() + (extra_json.empty() ? "" : "," + extra_json) + "}\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  (void)sys::write_all_raw(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace kern
