// A fake cgroup v2 tree in a temp dir for the cgroup unit tests: plain directories and files
// laid out like the kernel's, so read-back and discovery run against known contents.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/cgroup/subtree.h"
#include "runtime/sys/proc_stat.h"

namespace kern::testing {

class FakeCgroupTree {
 public:
  FakeCgroupTree() {
    char tmpl[] = "/tmp/kern-cgroup-test.XXXXXX";
    if (::mkdtemp(tmpl)) root_ = tmpl;
  }
  ~FakeCgroupTree() {
    if (!root_.empty()) std::system(("chmod -R u+rwx '" + root_ + "' 2>/dev/null; rm -rf '" + root_ + "'").c_str());
  }
  const std::string& root() const { return root_; }

  // mkdir -p of a cgroup (relative path "/a/b").
  void dir(const std::string& rel) const {
    for (size_t i = 1; i <= rel.size(); ++i)
      if (i == rel.size() || rel[i] == '/') ::mkdir((root_ + rel.substr(0, i)).c_str(), 0755);
  }
  void file(const std::string& rel, const std::string& text) const {
    std::string p = root_ + rel;
    dir(p.substr(root_.size(), p.rfind('/') - root_.size()));
    std::ofstream(p) << text;
  }
  bool exists(const std::string& rel) const {
    struct stat st;
    return ::stat((root_ + rel).c_str(), &st) == 0;
  }
  std::string read(const std::string& rel) const {
    std::ifstream in(root_ + rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  CgroupHost host(const std::string& self) const {
    CgroupHost h;
    h.mount = root_;
    h.self = self;
    h.proc_self = self;
    h.euid = ::geteuid();
    h.pid = ::getpid();
    h.start_time = sys::process_start_time(h.pid);
    h.cpus = 2;
    return h;
  }

 private:
  std::string root_;
};

}  // namespace kern::testing
