// Reading what a box uses; see box_stats.h.
#include "cli/box_stats.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/images_format.h"
#include "profiles/units.h"
#include "runtime/timing.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {

std::optional<std::string> read(const std::string& path) {
  auto r = sys::read_file(AT_FDCWD, path, 1 << 20);
  if (!r) return std::nullopt;
  return std::move(*r);
}

std::optional<uint64_t> number(const std::string& path) {
  auto t = read(path);
  if (!t || t->compare(0, 3, "max") == 0) return std::nullopt;
  return std::strtoull(t->c_str(), nullptr, 10);
}

// "key value" lines (cpu.stat, /proc/PID/io): the value of `key`, 0 when absent.
uint64_t field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v)
    if (k == key || k == key + ":") return v;
  return 0;
}

void add_net(BoxUsage& u, pid_t init) {
  auto dev = read("/proc/" + std::to_string(init) + "/net/dev");
  if (!dev) return;
  std::istringstream in(*dev);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (++n <= 2) continue;  // the two header lines
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string ifname = line.substr(0, colon);
    ifname.erase(0, ifname.find_first_not_of(' '));
    if (ifname == "lo") continue;
    std::istringstream f(line.substr(colon + 1));
    uint64_t v[9] = {};
    for (auto& x : v) f >> x;
    u.net_rx += v[0];
    u.net_tx += v[8];
  }
}

}  // namespace

std::vector<pid_t> box_processes(pid_t init) {
  std::vector<pid_t> out = {init};
  for (size_t i = 0; i < out.size() && out.size() < 100000; ++i) {
    std::string base = "/proc/" + std::to_string(out[i]) + "/task/";
    auto tasks = read(base + std::to_string(out[i]) + "/children");
    if (!tasks) continue;
    std::istringstream in(*tasks);
    pid_t c;
    while (in >> c) out.push_back(c);
  }
  return out;
}

BoxUsage read_usage(const BoxRecord& rec) {
  BoxUsage u;
  u.name = rec.name;
  const std::string& cg = rec.cgroup;
  if (!cg.empty() && ::access((cg + "/cgroup.procs").c_str(), R_OK) == 0) {
    u.source = "cgroup";
    if (auto s = read(cg + "/cpu.stat")) u.cpu_usec = field(*s, "usage_usec");
    u.memory = number(cg + "/memory.current").value_or(0);
    u.memory_limit = number(cg + "/memory.max");
    u.pids = number(cg + "/pids.current").value_or(0);
    u.pids_limit = number(cg + "/pids.max");
    if (auto io = read(cg + "/io.stat")) {
      std::istringstream in(*io);
      std::string word;
      while (in >> word) {
        if (word.rfind("rbytes=", 0) == 0) u.block_read += std::strtoull(word.c_str() + 7, nullptr, 10);
        if (word.rfind("wbytes=", 0) == 0) u.block_write += std::strtoull(word.c_str() + 7, nullptr, 10);
      }
    }
  } else {
    u.source = "proc";
    const long tick = ::sysconf(_SC_CLK_TCK), page = ::sysconf(_SC_PAGESIZE);
    for (pid_t p : box_processes(rec.init_pid)) {
      std::string dir = "/proc/" + std::to_string(p);
      auto stat = read(dir + "/stat");
      if (!stat) continue;
      ++u.pids;
      // After the command's ")": state is field 3; utime and stime are fields 14 and 15.
      std::istringstream in(stat->substr(stat->rfind(')') + 2));
      std::string w;
      uint64_t ut = 0, st = 0;
      for (int f = 3; f <= 15 && in >> w; ++f) {
        if (f == 14) ut = std::strtoull(w.c_str(), nullptr, 10);
        if (f == 15) st = std::strtoull(w.c_str(), nullptr, 10);
      }
      u.cpu_usec += (ut + st) * 1000000 / static_cast<uint64_t>(tick > 0 ? tick : 100);
      if (auto statm = read(dir + "/statm")) {
        std::istringstream m(*statm);
        uint64_t size = 0, resident = 0;
        m >> size >> resident;
        u.memory += resident * static_cast<uint64_t>(page > 0 ? page : 4096);
      }
      if (auto io = read(dir + "/io")) {
        u.block_read += field(*io, "read_bytes");
        u.block_write += field(*io, "write_bytes");
      }
    }
  }
  add_net(u, rec.init_pid);
  return u;
}

void set_cpu_percent(BoxUsage& now, const BoxUsage& before, uint64_t interval_ns) {
  if (interval_ns == 0 || now.cpu_usec < before.cpu_usec) return;
  now.cpu_percent = static_cast<double>(now.cpu_usec - before.cpu_usec) * 1000.0 * 100.0 / static_cast<double>(interval_ns);
}

std::vector<BoxUsage> sample_usage(const std::vector<BoxRecord>& boxes, const std::function<bool()>& wait) {
  std::vector<BoxUsage> before;
  for (const auto& b : boxes) before.push_back(read_usage(b));
  uint64_t t0 = monotonic_ns();
  if (!wait()) return {};
  uint64_t dt = monotonic_ns() - t0;
  std::vector<BoxUsage> now;
  for (size_t i = 0; i < boxes.size(); ++i) {
    BoxUsage u = read_usage(boxes[i]);
    set_cpu_percent(u, before[i], dt);
    now.push_back(std::move(u));
  }
  return now;
}

std::string binary_size(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof kUnits / sizeof kUnits[0]) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g%s", v, kUnits[u]);
  return buf;
}

const std::vector<TemplateField>& stats_fields() {
  static const std::vector<TemplateField> fields = {
      {"Name", "NAME"},       {"ID", "CONTAINER ID"}, {"CPUPerc", "CPU %"},     {"MemUsage", "MEM USAGE / LIMIT"},
      {"MemPerc", "MEM %"},   {"PIDs", "PIDS"},       {"NetIO", "NET I/O"},     {"BlockIO", "BLOCK I/O"},
      {"Source", "SOURCE"}};
  return fields;
}

nlohmann::ordered_json stats_row(const BoxUsage& u) {
  uint64_t limit = u.memory_limit.value_or(0);
  if (limit == 0) {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    limit = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  }
  char cpu[32], mem[32];
  std::snprintf(cpu, sizeof cpu, "%.2f%%", u.cpu_percent);
  std::snprintf(mem, sizeof mem, "%.2f%%", limit ? static_cast<double>(u.memory) * 100.0 / static_cast<double>(limit) : 0.0);
  nlohmann::ordered_json j;
  j["Name"] = u.name;
  j["ID"] = u.name;
  j["CPUPerc"] = cpu;
  j["MemUsage"] = binary_size(u.memory) + " / " + binary_size(limit);
  j["MemPerc"] = mem;
  j["PIDs"] = std::to_string(u.pids);
  j["NetIO"] = human_size(u.net_rx) + " / " + human_size(u.net_tx);
  j["BlockIO"] = human_size(u.block_read) + " / " + human_size(u.block_write);
  j["Source"] = u.source;
  return j;
}

std::string usage_json(const std::vector<BoxUsage>& all) {
  nlohmann::json a = nlohmann::json::array();
  auto opt = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& u : all)
    a.push_back({{"name", u.name},
                 {"source", u.source},
                 {"cpu_percent", static_cast<double>(static_cast<int64_t>(u.cpu_percent * 100 + 0.5)) / 100},
                 {"cpu_usec", u.cpu_usec},
                 {"memory", u.memory},
                 {"memory_limit", opt(u.memory_limit)},
                 {"pids", u.pids},
                 {"pids_limit", opt(u.pids_limit)},
                 {"net_rx", u.net_rx},
                 {"net_tx", u.net_tx},
                 {"block_read", u.block_read},
                 {"block_write", u.block_write}});
  return a.dump(2) + "\n";
}

std::string usage_table(const std::vector<BoxUsage>& all) {
  auto size = [](uint64_t b) { return profiles::format_size(b); };
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-7s %8s %22s %8s %19s %19s\n", "NAME", "SOURCE", "CPU %", "MEM / LIMIT", "PIDS",
                "NET RX / TX", "BLOCK R / W");
  out += line;
  for (const auto& u : all) {
    std::string mem = size(u.memory) + " / " + (u.memory_limit ? size(*u.memory_limit) : std::string("-"));
    std::string pids = std::to_string(u.pids) + (u.pids_limit ? "/" + std::to_string(*u.pids_limit) : "");
    std::snprintf(line, sizeof line, "%-24s %-7s %7.2f%% %22s %8s %19s %19s\n", u.name.c_str(), u.source.c_str(),
                  u.cpu_percent, mem.c_str(), pids.c_str(), (size(u.net_rx) + " / " + size(u.net_tx)).c_str(),
                  (size(u.block_read) + " / " + size(u.block_write)).c_str());
    out += line;
  }
  return out;
}

}  // namespace kern::cli
