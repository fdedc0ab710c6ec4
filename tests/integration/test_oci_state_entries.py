"""kern-oci's entries under --root when they are not what kern wrote, and --pid-file through a
planted link. Rootless, as test_oci_runtime (the same bundle case).

- A state.json that is a FIFO: `list` and `state` answer at once (the FIFO is named on stderr),
  `delete --force` removes the entry and `create` of that id works again.
- An entry with no state.json (a create that died): `create` of the id says it exists and how
  to remove it; `delete --force` removes it.
- A junk entry holding another container's pid and start time (its record copied, its id
  changed or not): `kill` and `delete --force` of the junk never signal that container; the
  positive control, `delete --force` of the real container, kills it in the same run.
- --pid-file: a link planted at its temporary name is never written through (the victim file
  keeps its bytes; the control: writing the same path outside kern does follow it); a link at
  the path itself is refused and the create leaves nothing."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from test_oci_runtime import OciBundleCase, wait_pid  # noqa: E402


def alive(pid):
    return os.path.exists("/proc/%d" % pid) and not kerntest.is_zombie(pid)


class OciStateEntriesTest(OciBundleCase):

    def running(self, cid):
        self.write_cfg(args=["sh", "-c", "exec sleep 60"])
        self.create(cid)
        pid = self.state(cid)["pid"]
        self.assertExit(self.oci("start", cid), 0)
        return pid

    def entry(self, cid):
        return os.path.join(self.root, cid)

    def test_fifo_state_is_named_not_waited_for(self):
        pid = self.running("s1")
        os.mkdir(self.entry("s2"), 0o700)
        os.mkfifo(os.path.join(self.entry("s2"), "state.json"), 0o600)
        listed = self.oci("list", timeout=15)
        self.assertExit(listed, 0)
        self.assertIn("s1", listed.out)
        self.assertIn("s2", listed.err)
        self.assertIn("not a regular file", listed.err)
        state = self.oci("state", "s2", timeout=15)
        self.assertExit(state, 1)
        self.assertIn("delete --force s2", state.err)
        self.assertExit(self.oci("delete", "--force", "s2", timeout=15), 0)
        self.assertFalse(os.path.exists(self.entry("s2")))
        self.assertTrue(alive(pid), "the other container was touched")
        # The id is free again.
        self.write_cfg(args=["true"])
        self.create("s2")
        self.assertEqual(self.state("s2")["status"], "created")

    def test_entry_without_state_is_removed_by_delete_force(self):
        self.assertExit(self.oci("list"), 0)  # makes --root
        self.ids.append("e1")
        os.mkdir(self.entry("e1"), 0o700)
        self.write_cfg(args=["true"])
        again = self.oci("create", "--bundle", self.bundle, "e1")
        self.assertExit(again, 2)  # the usage code of a taken id, as before
        self.assertIn("exists already", again.err)
        self.assertIn("delete --force e1", again.err)
        self.assertExit(self.oci("delete", "e1"), 1)  # without --force: named, kept
        self.assertTrue(os.path.isdir(self.entry("e1")))
        self.assertExit(self.oci("delete", "--force", "e1"), 0)
        self.assertFalse(os.path.exists(self.entry("e1")))
        self.ids.remove("e1")
        self.create("e1")
        self.assertEqual(self.state("e1")["status"], "created")

    def junk_of(self, cid, junk, rename):
        os.mkdir(self.entry(junk), 0o700)
        with open(os.path.join(self.entry(cid), "state.json")) as f:
            rec = json.load(f)
        if rename:
            rec["id"] = junk
        with open(os.path.join(self.entry(junk), "state.json"), "w") as f:
            json.dump(rec, f)
        return rec

    def test_junk_holding_another_containers_pid_never_kills_it(self):
        pid = self.running("j1")
        for junk, rename in (("junk1", True), ("junk2", False)):
            rec = self.junk_of("j1", junk, rename)
            self.assertEqual(rec["pid"], pid)
            kill = self.oci("kill", junk, "KILL")
            self.assertExit(kill, 1)
            run = self.oci("delete", "--force", junk)
            self.assertExit(run, 0)
            time.sleep(0.2)
            self.assertTrue(alive(pid), "delete --force %s killed container j1's process %d\n%s"
                            % (junk, pid, run.describe()))
            self.assertFalse(os.path.exists(self.entry(junk)))
            self.assertEqual(self.state("j1")["status"], "running")
        # The positive control: the same delete of the container itself kills it.
        self.assertExit(self.oci("delete", "--force", "j1"), 0)
        self.assertEqual(wait_pid(pid), 128 + 9)
        self.ids.remove("j1")

    def test_pid_file_is_never_written_through_a_link(self):
        victim = os.path.join(self.dir, "victim")
        with open(victim, "w") as f:
            f.write("precious")
        pid_file = os.path.join(self.dir, "p1.pid")
        os.symlink(victim, pid_file + ".kern-tmp")
        self.write_cfg(args=["true"])
        self.create("p1", "--pid-file", pid_file)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious", "--pid-file wrote through the planted link")
        self.assertFalse(os.path.islink(pid_file))
        with open(pid_file) as f:
            self.assertEqual(int(f.read()), self.state("p1")["pid"])
        self.assertFalse(os.path.lexists(pid_file + ".kern-tmp"))
        # A link at the path itself: refused, nothing of the container left.
        linked = os.path.join(self.dir, "p2.pid")
        os.symlink(victim, linked)
        run = self.oci("create", "--bundle", self.bundle, "--pid-file", linked, "p2")
        self.assertExit(run, 1)
        self.assertIn("symbolic link", run.err)
        self.assertFalse(os.path.exists(self.entry("p2")))
        with open(victim) as f:
            self.assertEqual(f.read(), "precious")
        # The control: an ordinary open of the planted name does follow the link.
        os.symlink(victim, pid_file + ".control")
        with open(pid_file + ".control", "w") as f:
            f.write("through")
        with open(victim) as f:
            self.assertEqual(f.read(), "through")


if __name__ == "__main__":
    kerntest.main()
