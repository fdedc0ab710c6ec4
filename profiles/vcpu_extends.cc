// [[vcpu]] inheritance; see vcpu_extends.h.
#include "profiles/vcpu_extends.h"

#include <map>

#include "profiles/suggest.h"
#include "runtime/sys/log.h"

namespace kern::profiles {
namespace {

class Resolver {
 public:
  Resolver(ProfileSet& set, std::vector<Diagnostic>& out) : set_(set), out_(out) {
    for (size_t i = 0; i < set.vcpu.size(); ++i) index_.emplace(set.vcpu[i].name, i);  // first wins
  }

  // Resolves profile i (its parents first). False when its chain is broken.
  bool resolve(size_t i) {
    VcpuProfile& p = set_.vcpu[i];
    if (state_[i] == done) return ok_[i];
    if (state_[i] == visiting) return false;  // reported by the profile that closed the cycle
    if (p.extends.empty()) {
      state_[i] = done;
      return ok_[i] = true;
    }
    state_[i] = visiting;
    chain_.push_back(p.name);
    auto it = index_.find(p.extends);
    bool good = false;
    if (it == index_.end()) {
      std::vector<std::string_view> names;
      for (const auto& v : set_.vcpu) names.push_back(v.name);
      std::string msg = "[[vcpu]] extends: no [[vcpu]] named " + log::quoted(p.extends);
      std::string_view best = closest(p.extends, names);
      if (!best.empty()) msg += " (did you mean \"" + log::sanitize(best) + "\"?)";
      error(p.at.of("extends"), msg);
    } else if (state_[it->second] == visiting) {
      std::string cycle;
      bool on = false;
      for (const auto& n : chain_) {
        on = on || n == p.extends;
        if (on) cycle += log::sanitize(n) + " -> ";
      }
      error(p.at.of("extends"), "[[vcpu]] extends: a cycle: " + cycle + log::sanitize(p.extends));
    } else if (resolve(it->second)) {
      inherit(p, set_.vcpu[it->second]);
      good = true;
    }
    chain_.pop_back();
    state_[i] = done;
    return ok_[i] = good;
  }

 private:
  enum State { unvisited, visiting, done };

  void error(Location at, std::string msg) { out_.push_back({at, std::move(msg), false}); }

  template <typename T>
  static void take(VcpuProfile& child, const char* key, std::optional<T>& mine, const std::optional<T>& theirs) {
    if (mine || !theirs) return;
    mine = theirs;
    child.inherited.push_back(key);
  }

  static void inherit(VcpuProfile& c, const VcpuProfile& parent) {
    take(c, "cpus", c.cpus, parent.cpus);
    if (c.cpuset.empty() && !c.numa) {
      if (!parent.cpuset.empty()) {
        c.cpuset = parent.cpuset;
        c.inherited.push_back("cpuset");
      }
      take(c, "numa", c.numa, parent.numa);
    }
    take(c, "memory", c.memory, parent.memory);
    take(c, "nice", c.nice, parent.nice);
  }

  ProfileSet& set_;
  std::vector<Diagnostic>& out_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<size_t, State> state_;
  std::map<size_t, bool> ok_;
  std::vector<std::string> chain_;
};

}  // namespace

std::vector<Diagnostic> resolve_extends(ProfileSet& set) {
  std::vector<Diagnostic> out;
  Resolver r(set, out);
  for (size_t i = 0; i < set.vcpu.size(); ++i) (void)r.resolve(i);
  return out;
}

}  // namespace kern::profiles
