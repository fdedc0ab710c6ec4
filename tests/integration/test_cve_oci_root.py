"""test_cve_oci.py's attacks on kern-oci run as root (rootful bundles from `kern oci spec`), as
containerd and Docker run it: the classes whose harm is a root container's (a masked path, the
console, procfs writes, mount targets, inheritable capabilities). CTest runs the suite as root;
this file keeps root (it never drops to the test user) and skips by name ("root") otherwise."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
import test_cve_oci  # noqa: E402


class RootOciCveTest(test_cve_oci.OciCveTest):
    spec_args = ()
    # A rootless class: as root the cgroup tree is mounted, never the host's bound.
    test_host_cgroup_tree_is_never_writable = None

    def setUp(self):
        kerntest.require(self, "root", os.geteuid() == 0, "kern-oci as root needs the test run as root")
        super().setUp()


if __name__ == "__main__":
    kerntest.main(keep_root=True)
