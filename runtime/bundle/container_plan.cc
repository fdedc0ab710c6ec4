// container_plan; see container_plan.h.
#include "runtime/bundle/container_plan.h"

#include <unistd.h>

#include "runtime/bundle/bundle_load.h"
#include "runtime/cgroup/container.h"
#include "runtime/bundle/oci_root.h"
#include "runtime/bundle/state_dir.h"
#include "runtime/plan_text.h"
#include "runtime/sys/log.h"

namespace kern::bundle {

Result<std::string> container_plan(const std::string& bundle_dir, const std::string& id, const CreateOptions& o,
                                   bool json) {
  KERN_TRY(check_container_id(id));
  KERN_TRY_ASSIGN(LoadedBundle b, load_bundle(bundle_dir));
  CreateOptions opts = o;
  opts.initial_userns = in_initial_user_namespace();
  KERN_TRY_ASSIGN(std::unique_ptr<OciLaunch> launch, plan_container(b, id, opts, ::geteuid(), ::getegid()));
  const Linux* l = b.config.linux_config ? &*b.config.linux_config : nullptr;
  PlanExtras x;
  std::string path = l && !l->cgroups_path.empty() ? "linux.cgroupsPath \"" + l->cgroups_path + "\"" : "kern's default path";
  x.cgroup.push_back("the container's own, at " + path);
  if (l && l->resources) {
    for (const auto& [file, value] : resource_files(*l->resources)) x.cgroup.push_back(file + "=" + value);
  }
  if (x.cgroup.size() == 1) x.cgroup.push_back("no linux.resources");
  x.network_note = launch->plan.loopback_up ? ", loopback up" : "";
  const LaunchPlan& p = launch->plan;
  std::string out = json ? plan_json(p, x).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                         : plan_text(p, x);
  for (const auto& w : launch->warnings) log::warning(w);
  return json ? out : log::sanitize_lines(out);
}

}  // namespace kern::bundle
