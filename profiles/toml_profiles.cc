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

#include "profiles/key_depth.h"
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
  // A note every reader of the file prints, not only `kern validate`: what kern skips whole.
  void skipped(Location at, std::string msg) { out_.problems.push_back({at, std::move(msg), false, true, true}); }

  // The id of a backend: upstream files name them bare (id = "0", name = "pool"), which is the
  // same backend as kern's "cpu:0" and "disk:pool", the spelling a profile's backend uses.
  static void qualify(std::string_view kind, std::string& id) {
    if (!id.empty() && id.find(':') == std::string::npos) id = std::string(kind) + ":" + id;
  }

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
        problem(loc_of(k.source()), unknown_key_message(open(kind) + ": ", key, allowed));
        ok = false;
      }
    }
    return ok;
  }

  std::string prefix(std::string_view kind, std::string_view key) {
    return open(kind) + " " + std::string(key) + ": ";
  }
  // "[[vcpu]]", or "[kern]" for the one plain table.
  // "[[vgpio]] usb_ports" for a table nested as "vgpio.usb_ports".
  static std::string open(std::string_view kind) {
    if (kind == "kern") return "[kern]";
    size_t dot = kind.find('.');
    if (dot != std::string_view::npos)
      return "[[" + std::string(kind.substr(0, dot)) + "]] " + std::string(kind.substr(dot + 1));
    return "[[" + std::string(kind) + "]]";
  }

  bool str(const toml::table& t, std::string_view kind, std::string_view key, std::string& out,
           bool required) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) problem(loc_of(t.source()), open(kind) + ": missing required key \"" + std::string(key) + "\"");
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

  bool boolean(const toml::table& t, std::string_view kind, std::string_view key, std::optional<bool>& out) {
    const toml::node* n = t.get(key);
    if (!n) return true;
    if (auto b = n->as_boolean()) {
      out = b->get();
      return true;
    }
    problem(loc_of(n->source()), prefix(kind, key) + "expected true or false");
    return false;
  }

  // io.max rates: iops a whole number (or a string holding one), bandwidth a size per second
  // ("100m", "50 MB", optionally followed by "/s").
  void rate(const toml::table& t, std::string_view kind, std::string_view key, bool bytes,
            std::optional<uint64_t>& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    Result<uint64_t> v = fail(ErrorKind::config, 0, "");
    if (auto i = n->as_integer()) {
      v = i->get() > 0 ? Result<uint64_t>(static_cast<uint64_t>(i->get()))
                       : Result<uint64_t>(fail(ErrorKind::config, 0, "a rate must be above 0"));
    } else if (auto s = n->as_string()) {
      std::string_view text = s->get();
      if (bytes && text.ends_with("/s")) text.remove_suffix(2);
      v = bytes ? parse_bps(text) : parse_iops(text);
    } else {
      problem(loc_of(n->source()), prefix(kind, key) + (bytes ? "expected a size per second such as \"100m\"" : "expected a whole number"));
      return;
    }
    if (!v) {
      problem(loc_of(n->source()), prefix(kind, key) + v.error().message());
      return;
    }
    out = *v;
  }

  // Arrays of device entries; integers are accepted where a bare number is meaningful.
  void devices(const toml::table& t, std::string_view kind, std::string_view key, bool allow_int,
               std::vector<DeviceEntry>& out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const toml::array* arr = n->as_array();
    if (!arr) {
      problem(loc_of(n->source()), prefix(kind, key) + "expected an array of strings");
      return;
    }
    for (const toml::node& e : *arr) {
      if (auto s = e.as_string()) {
        out.push_back({s->get(), loc_of(e.source())});
      } else if (auto i = e.as_integer(); i && allow_int && i->get() >= 0) {
        out.push_back({std::to_string(i->get()), loc_of(e.source())});
      } else {
        problem(loc_of(e.source()), prefix(kind, key) + "expected a string");
      }
    }
  }

  void pins(const toml::table& t, std::string_view kind, std::vector<PinEntry>& out) {
    const toml::node* n = t.get("pins");
    if (!n) return;
    const toml::array* arr = n->as_array();
    if (!arr) {
      problem(loc_of(n->source()), prefix(kind, "pins") + "expected an array of pin numbers");
      return;
    }
    for (const toml::node& e : *arr) {
      auto i = e.as_integer();
      if (i && i->get() >= 0 && i->get() <= 65535) out.push_back({i->get(), loc_of(e.source())});
      else problem(loc_of(e.source()), prefix(kind, "pins") + "expected a pin number from 0 to 65535");
    }
  }

  void usb_ports(const toml::table& t, std::string_view kind, std::vector<UsbPort>& out) {
    const toml::node* n = t.get("usb_ports");
    if (!n) return;
    const toml::array* arr = n->as_array();
    if (!arr || !arr->is_array_of_tables()) {
      problem(loc_of(n->source()), prefix(kind, "usb_ports") +
                                       "expected an array of tables: [{ bus = 1, port = \"1\", name = \"...\" }]");
      return;
    }
    std::string sub = std::string(kind) + ".usb_ports";
    for (const toml::node& e : *arr) {
      const toml::table& pt = *e.as_table();
      UsbPort port;
      keys(pt, sub, {"bus", "port", "usb", "name", "reserved"}, port.at);
      integer(pt, sub, "bus", 0, 65535, port.bus);
      if (const toml::node* pn = pt.get("port")) {
        if (auto s = pn->as_string()) port.port = s->get();
        else if (auto i = pn->as_integer(); i && i->get() >= 0) port.port = std::to_string(i->get());
        else problem(loc_of(pn->source()), prefix(sub, "port") + "expected a port number or path such as \"1.2\"");
      }
      if (const toml::node* un = pt.get("usb")) {
        if (auto s = un->as_string()) port.usb = s->get();
        else if (auto f = un->as_floating_point()) port.usb = format_cpus(f->get());
        else if (auto i = un->as_integer()) port.usb = std::to_string(i->get());
        else problem(loc_of(un->source()), prefix(sub, "usb") + "expected a USB version such as \"3.0\"");
      }
      str(pt, sub, "name", port.name, false);
      std::optional<bool> reserved;
      boolean(pt, sub, "reserved", reserved);
      port.reserved = reserved.value_or(false);
      out.push_back(std::move(port));
    }
  }

  // The keys [[gpio]] and [[vgpio]] share.
  void resources(const toml::table& t, std::string_view kind, GpioResources& res) {
    for (DeviceClass dc : kDeviceClasses) {
      bool ints = dc == DeviceClass::chip || dc == DeviceClass::i2c || dc == DeviceClass::adc || dc == DeviceClass::camera;
      devices(t, kind, device_class_key(dc), ints, res.entries(dc));
    }
    for (std::string_view key : kInertGpioKeys)
      if (t.get(key)) devices(t, kind, key, true, res.inert[std::string(key)]);
    pins(t, kind, res.pins);
    integer(t, kind, "total_pins", 1, 65536, res.total_pins);
    usb_ports(t, kind, res.usb_ports);
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

// A table kern does not read. Upstream's own tables (the GPU family, its sections for other
// tools, compose's [box.NAME]) and any other name far from kern's are skipped with a note that
// names them, so an upstream file loads unchanged; a name one or two edits from one of kern's
// tables is a typo and stays an error.
void unknown_table(Reader& r, std::string_view kind, const toml::node& node, Location at) {
  static const std::vector<std::string_view> known = {"kern", "cpu", "vcpu", "disk", "vdisk", "gpio", "vgpio"};
  static const std::vector<std::string_view> upstream = {"gpu", "vgpu", "box", "intelligence", "pool"};
  bool theirs = std::find(upstream.begin(), upstream.end(), kind) != upstream.end();
  if (!theirs && !closest(kind, known).empty()) {
    r.problem(at, unknown_key_message("", kind, known));
    return;
  }
  bool array = node.is_array();
  std::string shown = std::string(array ? "[[" : "[") + log::sanitize(kind) + (array ? "]]" : "]");
  r.skipped(at, shown + ": not a table kern reads; skipped" +
                    (theirs ? std::string(" (kern has no ") + (kind == "box" ? "compose stacks" : "such resource") + " yet)"
                            : std::string(" (kern reads [kern], [[cpu]], [[vcpu]], [[disk]], [[vdisk]], [[gpio]] and [[vgpio]])")));
}

}  // namespace

ParseOutcome parse_profiles(std::string_view text, const std::string& file) {
  ParseOutcome out;
  out.set.file = file;
  if (auto deep = check_key_depth(text)) {
    out.problems.push_back(std::move(*deep));
    return out;
  }
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
    if (kind == "kern") {
      const toml::table* t = node.as_table();
      if (!t) {
        r.problem(loc_of(node.source()), "\"kern\" must be a table: write [kern]");
        continue;
      }
      KernSettings& ks = set.kern;
      ks.present = true;
      r.keys(*t, kind, {"config_version", "log_level", "crash_recovery", "warn_uncapped"}, ks.at);
      if (r.integer(*t, kind, "config_version", 1, 1000000, ks.config_version) && ks.config_version &&
          *ks.config_version > kConfigVersion)
        r.problem(ks.at.of("config_version"),
                  "[kern] config_version: " + std::to_string(*ks.config_version) + " is newer than the " +
                      std::to_string(kConfigVersion) + " this kern understands");
      if (r.str(*t, kind, "log_level", ks.log_level, false) && !ks.log_level.empty()) {
        static const std::vector<std::string_view> levels = {"error", "warn", "warning", "info", "debug", "trace"};
        if (std::find(levels.begin(), levels.end(), ks.log_level) == levels.end()) {
          std::string msg = "[kern] log_level: unknown level \"" + log::sanitize(ks.log_level) + "\"";
          std::string_view best = closest(ks.log_level, levels);
          msg += best.empty() ? " (expected " + join(levels) + ")" : " (did you mean \"" + std::string(best) + "\"?)";
          r.problem(ks.at.of("log_level"), msg);
        }
      }
      r.boolean(*t, kind, "crash_recovery", ks.crash_recovery);
      r.boolean(*t, kind, "warn_uncapped", ks.warn_uncapped);
    } else if (kind == "cpu") {
      each_table(r, node, kind, [&](const toml::table& t) {
        CpuBackend b;
        r.keys(t, kind, {"id", "cores", "memory", "cpuset", "numa"}, b.at);
        r.str(t, kind, "id", b.id, true);
        Reader::qualify(kind, b.id);
        r.number(t, kind, "cores", b.cores, false);
        // Upstream's budget keys: checked for their type, noted as without effect (key_notes.h).
        std::optional<uint64_t> memory;
        std::string cpuset;
        std::optional<int64_t> numa;
        r.size(t, kind, "memory", memory, true);
        r.str(t, kind, "cpuset", cpuset, false);
        r.integer(t, kind, "numa", 0, 1023, numa);
        set.cpu.push_back(std::move(b));
      });
    } else if (kind == "vcpu") {
      each_table(r, node, kind, [&](const toml::table& t) {
        VcpuProfile p;
        r.keys(t, kind, {"name", "backend", "extends", "cpus", "cpuset", "numa", "memory", "nice"}, p.at);
        r.str(t, kind, "name", p.name, true);
        r.str(t, kind, "backend", p.backend, true);
        r.str(t, kind, "extends", p.extends, false);
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
        r.keys(t, kind, {"id", "name", "path", "default", "size", "iops", "bandwidth", "device", "model"}, b.at);
        if (t.get("id") && t.get("name"))
          r.problem(b.at.of("name"), "[[disk]]: \"name\" is an alias of \"id\": set one of them");
        else if (t.get("name")) {
          r.str(t, kind, "name", b.id, true);
          b.at.keys["id"] = b.at.of("name");
        } else {
          r.str(t, kind, "id", b.id, true);
        }
        Reader::qualify(kind, b.id);
        r.str(t, kind, "path", b.path, true);
        std::optional<bool> def;
        r.boolean(t, kind, "default", def);
        b.is_default = def.value_or(false);
        r.size(t, kind, "size", b.size, false);
        r.rate(t, kind, "iops", false, b.iops);
        r.rate(t, kind, "bandwidth", true, b.bandwidth);
        r.str(t, kind, "device", b.device, false);
        r.str(t, kind, "model", b.model, false);
        set.disk.push_back(std::move(b));
      });
    } else if (kind == "vdisk") {
      each_table(r, node, kind, [&](const toml::table& t) {
        VdiskProfile p;
        r.keys(t, kind, {"name", "backend", "size", "iops", "bandwidth", "persistent"}, p.at);
        r.str(t, kind, "name", p.name, true);
        r.str(t, kind, "backend", p.backend, false);  // none: the default [[disk]] (validation)
        std::optional<uint64_t> size;
        r.size(t, kind, "size", size, false);
        if (!t.get("size")) r.problem(p.at.table, "[[vdisk]]: missing required key \"size\"");
        p.size = size.value_or(0);
        r.rate(t, kind, "iops", false, p.iops);
        r.rate(t, kind, "bandwidth", true, p.bandwidth);
        r.boolean(t, kind, "persistent", p.persistent);
        set.vdisk.push_back(std::move(p));
      });
    } else if (kind == "gpio" || kind == "vgpio") {
      bool v = kind == "vgpio";
      each_table(r, node, kind, [&](const toml::table& t) {
        std::vector<std::string_view> allowed = {v ? "name" : "id"};
        if (v) allowed.push_back("backend");
        for (DeviceClass dc : kDeviceClasses) allowed.push_back(device_class_key(dc));
        for (std::string_view k2 : kInertGpioKeys) allowed.push_back(k2);
        for (std::string_view k2 : {"pins", "total_pins", "usb_ports"}) allowed.push_back(k2);
        if (v) {
          VgpioProfile p;
          r.keys(t, kind, allowed, p.at);
          r.str(t, kind, "name", p.name, true);
          r.str(t, kind, "backend", p.backend, true);
          r.resources(t, kind, p);
          set.vgpio.push_back(std::move(p));
        } else {
          GpioBackend b;
          r.keys(t, kind, allowed, b.at);
          r.str(t, kind, "id", b.id, true);
          Reader::qualify(kind, b.id);
          r.resources(t, kind, b);
          set.gpio.push_back(std::move(b));
        }
      });
    } else {
      unknown_table(r, kind, node, loc_of(k.source()));
    }
  }
  // A [[vdisk]] without a backend goes on the default [[disk]]; with none, upstream makes it a
  // standalone scratch disk, which for an unprivileged box is a "ram" tmpfs.
  if (!set.default_disk()) {
    for (VdiskProfile& p : set.vdisk) {
      if (!p.backend.empty() || p.at.keys.count("backend")) continue;
      p.backend = "ram";
      out.problems.push_back({p.at.table,
                              "[[vdisk]] " + log::quoted(p.name) +
                                  ": no backend and no [[disk]] with default = true: a \"ram\" tmpfs, as upstream's "
                                  "standalone scratch",
                              false, true});
    }
  }
  std::stable_sort(out.problems.begin(), out.problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
  });
  return out;
}

}  // namespace kern::profiles
