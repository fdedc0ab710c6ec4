// The config-root steps of the one mount walker (mount_exec.cc): what a root a configuration
// describes (config_root.h, the OCI mode) needs besides a kern box's, through the same MountOps.
// Child only; never throws.
#pragma once

#include <string>

#include "runtime/config_root.h"
#include "runtime/box/mount_exec.h"
#include "runtime/box/mount_ops.h"
#include "runtime/mount_plan.h"

namespace kern {

class ConfigRootSteps {
 public:
  ConfigRootSteps(const MountContext& ctx, MountOps& ops) : ctx_(ctx), ops_(ops) {}
  ~ConfigRootSteps();
  ConfigRootSteps(const ConfigRootSteps&) = delete;
  ConfigRootSteps& operator=(const ConfigRootSteps&) = delete;

  // One config-root step: 0, or the errno with what failed (a static text) and on what.
  int run(const MountStep& s, const char** what, std::string* detail);

 private:
  struct Fail;
  const std::string& root() const;
  int mount_one(const ConfigMount& m, bool writable_for_now, Fail& f);
  int tmpfs_copyup(const ConfigMount& m, int tfd, const std::string& data, bool existed, Fail& f);
  int cgroup_v1(const ConfigMount& m, int tfd, unsigned long flags, Fail& f);
  int remount_at(const std::string& dest, unsigned long flags);
  int readonly_below(const std::string& dest);
  int device(const DeviceNode& d, bool is_default, Fail& f);
  void dev_links();
  int readonly_path(const std::string& p, Fail& f);
  int mask_path(const std::string& p, Fail& f);

  const MountContext& ctx_;
  MountOps& ops_;
  bool entered_ = false;  // after enter_root, paths resolve beneath the new "/"
  int null_fd_ = -1;      // the checked /dev/null every file mask binds
};

}  // namespace kern
