// kern.toml parsing with toml++; see toml_profiles.h.
//
// toml++ is used header-only with exceptions off: Debian's libtomlplusplus3 is built with
// exceptions on (its symbols live in toml::v3::ex), so the no-exceptions entry points
// (toml::v3::noex) exist only when the implementation is compiled in here. This is the only
// translation unit that includes toml++, which also keeps its compile cost in one place.
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include "profiles/toml_profiles.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "profiles/suggest.h"
#include "profiles/units.h"
#include "runtime/sys/log.h"

namespace kern::profiles {
namespace {

Location loc_of(const toml::source_region& r) {
  return Location{static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

std::string join(const std::vector<std::string_view>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += i + 1 == v.size() ? " or " : ", ";
    out += v[i];
  }
  return out;
}

std::string unknown_key_message(std::string_view where_kind, std::string_view key,
                                 const std::vector<std::string_view>& allowed) {
  std::string msg = std::string(where_kind) + "unknown key \"" + log::sanitize(key) + "\"";
  std::string_view best = closest(key, allowed);
  if (!best.empty()) msg += " (did you mean \"" + std::string(best) + "\"?)";
  else msg += " (expected " + join(allowed) + ")";
  return msg;
}

class Reader {
 public:
  explicit Reader(ParseOutcome& out) : out_(out) {}

  void problem(Location at, std::string msg) { out_.problems.push_back({at, std::move(msg)}); }

  // Walks one [[kind]] table: records key locations, reports unknown keys.
  bool keys(const toml::table& t, std::string_view kind, const std::vector<std::string_view>& allowed,
            KeyLocations& at) {
    at.table = loc_of(t.source());
    bool ok = true;
    for (auto&& [k, v] : t) {
      (void)v;
      std::string_view key = k.str();
      at.keys[std::string(key)] = loc_of(k.source());
      bool known = false;
      for (auto a : allowed) known = known || a == key;
      if (!known) {
        problem(loc_of(k.source()), unknown_key_message("[[" + std::string(kind) + "]]: ", key, allowed));
        ok = false;
      }
    }
    return ok;
  }

  std::string prefix(std::string_view kind, std::string_view key) {
    return "[[" + std::string(kind) + "]] " + std::string(key) + ": ";
  }

  bool str(const toml::table& t, std::string_view kind, std::string_view key, std::string& out,
           bool required) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) problem(loc_of(t.source()), "[[" + std::string(kind) + "]]: missing required key \"" + std::string(key) + "\"");
      return !required;
    }
    if (auto s = n->as_string()) {
      out = s->get();
      return true;
    }
    problem(loc_of(n->source()), prefix(kind, key) + "expected a string");
    return false;
  }

  // Sizes: "512m" or an integer byte count.
  bool size(const toml::table& t, std::string_view kind, std::string_view key,
            std::optional<uint64_t>& out, bool memory) {
    const toml::node* n = t.get(key);
    if (!n) return true;
    Result<uint64_t> v = fail(ErrorKind::config, 0, "");
    if (auto s = n->as_string()) {
      v = parse_size(s->get());
    } else if (auto i = n->as_integer()) {
      if (i->get() < 0) v = fail(ErrorKind::config, 0, "a size cannot be negative");
      else v = static_cast<uint64_t>(i->get());
    } else {
      problem(loc_of(n->source()), prefix(kind, key) + "expected a size such as \"512m\" or a byte count");
      return false;
    }
    if (v) {
      Status c = memory ? check_memory(*v) : check_disk_size(*v);
      if (!c) v = fail(std::move(c).error());
    }
    if (!v) {
      problem(loc_of(n->source()), prefix(kind, key) + v.error().message());
      return false;
    }
    out = *v;
    return true;
  }

  bool number(const toml::table& t, std::string_view kind, std::string_view key,
              std::optional<double>& out, bool allow_string) {
    const toml::node* n = t.get(key);
    if (!n) return true;
    if (auto f = n->as_floating_point()) out = f->get();
    else if (auto i = n->as_integer()) out = static_cast<double>(i->get());
    else if (auto s = n->as_string(); s && allow_string) {
      auto v = parse_cpus(s->get());
      if (!v) {
        problem(loc_of(n->source()), prefix(kind, key) + v.error().message());
        return false;
      }
      out = *v;
      return true;
    } else {
      problem(loc_of(n->source()), prefix(kind, key) + "expected a number");
      return false;
    }
    if (!std::isfinite(*out) || *out < kMinCpus || *out > kMaxCpus) {
      problem(loc_of(n->source()), prefix(kind, key) + format_cpus(*out) + " is out of range (" +
                                       format_cpus(kMinCpus) + " to " + format_cpus(kMaxCpus) + ")");
      out.reset();
      return false;
    }
    return true;
  }

  bool integer(const toml::table& t, std::string_view kind, std::string_view key, int64_t lo,
               int64_t hi, std::optional<int64_t>& out) {
    const toml::node* n = t.get(key);
    if (!n) return true;
    auto i = n->as_integer();
    if (!i) {
      problem(loc_of(n->source()), prefix(kind, key) + "expected a whole number");
      return false;
    }
    if (i->get() < lo || i->get() > hi) {
      problem(loc_of(n->source()), prefix(kind, key) + std::to_string(i->get()) + " is out of range (" +
                                       std::to_string(lo) + " to " + std::to_string(hi) + ")");
      return false;
    }
    out = i->get();
    return true;
  }

  // Arrays of device entries; integers are accepted where a bare number is meaningful.
  void devices(const toml::table& t, std::string_view key, bool allow_int, std::vector<DeviceEntry>& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const toml::array* arr = n->as_array();
    if (!arr) {
      problem(loc_of(n->source()), prefix("vgpio", key) + "expected an array of strings");
      return;
    }
    for (const toml::node& e : *arr) {
      if (auto s = e.as_string()) {
        out.push_back({s->get(), loc_of(e.source())});
      } else if (auto i = e.as_integer(); i && allow_int && i->get() >= 0) {
        out.push_back({std::to_string(i->get()), loc_of(e.source())});
      } else {
        problem(loc_of(e.source()), prefix("vgpio", key) + "expected a string");
      }
    }
  }

 private:
  ParseOutcome& out_;
};

template <typename Fn>
void each_table(Reader& r, const toml::node& node, std::string_view kind, Fn&& fn) {
  const toml::array* arr = node.as_array();
  if (!arr || !arr->is_array_of_tables()) {
    r.problem(loc_of(node.source()),
              "\"" + std::string(kind) + "\" must be an array of tables: write [[" + std::string(kind) + "]]");
    return;
  }
  for (const toml::node& e : *arr) fn(*e.as_table());
}

}  // namespace

ParseOutcome parse_profiles(std::string_view text, const std::string& file) {
  ParseOutcome out;
  out.set.file = file;
  toml::parse_result parsed = toml::parse(text, std::string_view(file));
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    out.problems.push_back({loc_of(e.source()), log::sanitize(e.description())});
    return out;
  }
  const toml::table& root = parsed.table();
  Reader r(out);
  ProfileSet& set = out.set;
  for (auto&& [k, node] : root) {
    std::string_view kind = k.str();
    if (kind == "cpu") {
      each_table(r, node, kind, [&](const toml::table& t) {
        CpuBackend b;
        r.keys(t, kind, {"id", "cores"}, b.at);
        r.str(t, kind, "id", b.id, true);
        r.number(t, kind, "cores", b.cores, false);
        set.cpu.push_back(std::move(b));
      });
    } else if (kind == "vcpu") {
      each_table(r, node, kind, [&](const toml::table& t) {
        VcpuProfile p;
        r.keys(t, kind, {"name", "backend", "cpus", "cpuset", "numa", "memory", "nice"}, p.at);
        r.str(t, kind, "name", p.name, true);
        r.str(t, kind, "backend", p.backend, true);
        r.number(t, kind, "cpus", p.cpus, true);
        r.str(t, kind, "cpuset", p.cpuset, false);
        std::optional<int64_t> numa, nice;
        if (r.integer(t, kind, "numa", 0, 1023, numa) && numa) p.numa = static_cast<unsigned>(*numa);
        r.size(t, kind, "memory", p.memory, true);
        if (r.integer(t, kind, "nice", -20, 19, nice) && nice) p.nice = static_cast<int>(*nice);
        set.vcpu.push_back(std::move(p));
      });
    } else if (kind == "disk") {
      each_table(r, node, kind, [&](const toml::table& t) {
        DiskBackend b;
        r.keys(t, kind, {"id", "path"}, b.at);
        r.str(t, kind, "id", b.id, true);
        r.str(t, kind, "path", b.path, true);
        set.disk.push_back(std::move(b));
      });
    } else if (kind == "vdisk") {
      each_table(r, node, kind, [&](const toml::table& t) {
        VdiskProfile p;
        r.keys(t, kind, {"name", "backend", "size"}, p.at);
        r.str(t, kind, "name", p.name, true);
        r.str(t, kind, "backend", p.backend, true);
        std::optional<uint64_t> size;
        r.size(t, kind, "size", size, false);
        if (!t.get("size")) r.problem(p.at.table, "[[vdisk]]: missing required key \"size\"");
        p.size = size.value_or(0);
        set.vdisk.push_back(std::move(p));
      });
    } else if (kind == "gpio") {
      each_table(r, node, kind, [&](const toml::table& t) {
        GpioBackend b;
        r.keys(t, kind, {"id"}, b.at);
        r.str(t, kind, "id", b.id, true);
        set.gpio.push_back(std::move(b));
      });
    } else if (kind == "vgpio") {
      each_table(r, node, kind, [&](const toml::table& t) {
        VgpioProfile p;
        r.keys(t, kind, {"name", "backend", "chips", "i2c", "spi", "uart", "extra"}, p.at);
        r.str(t, kind, "name", p.name, true);
        r.str(t, kind, "backend", p.backend, true);
        r.devices(t, "chips", true, p.chips);
        r.devices(t, "i2c", true, p.i2c);
        r.devices(t, "spi", false, p.spi);
        r.devices(t, "uart", false, p.uart);
        r.devices(t, "extra", false, p.extra);
        set.vgpio.push_back(std::move(p));
      });
    } else {
      r.problem(loc_of(k.source()),
                unknown_key_message("", kind, {"cpu", "vcpu", "disk", "vdisk", "gpio", "vgpio"}));
    }
  }
  std::stable_sort(out.problems.begin(), out.problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
  });
  return out;
}

}  // namespace kern::profiles
