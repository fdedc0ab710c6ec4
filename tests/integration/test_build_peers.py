"""kern build against podman build (buildah), as the unprivileged user (issue 26): the same context
and multi-stage Dockerfile (ARG and ENV expansion, WORKDIR, COPY globs and .dockerignore, COPY
--from, --chmod and --chown, a RUN that deletes files and a directory of a lower layer, a symlink,
USER, LABEL, EXPOSE, CMD) built by both tools from the same busybox image, loaded into both.

- Both results run: kern's image in a kern box, and after `kern save` and `podman load` in
  `podman run --rm`; podman's image after `podman save` and `kern load` in a kern box. Each prints
  what the Dockerfile's CMD prints.
- The two images are compared: the config's Env, Cmd, Entrypoint, WorkingDir, User, Labels and
  ExposedPorts, and the root file system each flattens to (the layers of `kern save` and of
  `podman save` applied in order with their whiteouts: image_tree.py): paths, types, modes, owners,
  link targets and the sha256 of every file; times are not compared. What differs for a stated
  reason is asserted exactly (DIFFERENCES below), nothing else may differ.
- A heredoc RUN and COPY: built by both where podman's buildah reads heredocs (buildah 1.33 on);
  otherwise skipped by the name podman-heredoc with podman's own error.
- A RUN as root that deletes a file in a directory of another owner keeps that directory's owner
  (an expected failure: kern's layer gives the directory to root; see the test).

podman runs rootless as the test user with a storage of its own (vfs), runc as its runtime
(Debian's crun refuses this host's hybrid cgroups), cgroupfs and a file event log
(rootless_podman.py). podman build is given --network none (kern's RUN has no network by default)
and --format oci (buildah's default image format; the config fields compared are the same in
Docker's). Skip names: podman (not installed, or it cannot run a container here: the measured
error is the reason), podman-heredoc."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import build_peer_context  # noqa: E402
import image_tree  # noqa: E402
import kerntest  # noqa: E402
import rootless_podman  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

HEREDOC_DOCKERFILE = """FROM busybox:latest
ENV WHO=heredoc
RUN <<EOF
set -e
mkdir -p /made
echo "by a $WHO" > /made/by
EOF
COPY <<EOF /made/copied
copied for $WHO
EOF
CMD ["cat", "/made/by", "/made/copied"]
"""

# The labels buildah adds to every image it commits (its version); not in the Dockerfile.
PODMAN_OWN_LABELS = {"io.buildah.version"}

CONFIG_FIELDS = ("Env", "Cmd", "Entrypoint", "WorkingDir", "User", "Labels", "ExposedPorts")

CMD_OUTPUT = "hi from a release build\n"


def differences(kern_tree, podman_tree):
    """path -> (kern's entry, podman's) where they differ (None: not in that tree)."""
    return {p: (kern_tree.get(p), podman_tree.get(p)) for p in sorted(set(kern_tree) | set(podman_tree))
            if kern_tree.get(p) != podman_tree.get(p)}


class BuildPeersTest(DetachedCase):

    def setUp(self):
        super().setUp()
        missing = rootless_podman.missing_tools("runc")
        self.require("podman", not missing, "not installed: %s (apt-get install podman conmon uidmap "
                     "slirp4netns runc)" % " ".join(missing))
        self.work = tempfile.mkdtemp(prefix="build-peers-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        self.pm = rootless_podman.PodmanHome(os.path.join(self.work, "podman"), runtime="runc")
        self.addCleanup(self.pm.cleanup)
        # buildah commits no step on a base image whose history names fewer layers than it has.
        archive = os.path.join(self.work, "busybox.tar")
        build_images.write_docker_archive(archive, [build_images.busybox_layer()], ["busybox:latest"],
                                          history=build_images.one_history_per_layer(1))
        self.assertExit(self.kern("load", "-i", archive), 0)
        self.assertExit(self.pm.podman("load", "-i", archive, timeout=120), 0)
        # Whether podman can run a container here at all: its error is the skip's reason.
        probe = self.pm.podman("run", "--rm", "--network", "none", "busybox:latest", "echo", "podman-runs")
        self.require("podman", probe.rc == 0 and probe.out == "podman-runs\n",
                     "rootless podman (runc) cannot run a container here: exit %s\n%s" % (probe.rc, probe.err[-1500:]))

    def context(self, name, files=None):
        return build_peer_context.write(os.path.join(self.work, name), files)

    def build_both(self, ctx, tag, *args):
        """kern build and podman build of ctx; returns (kern's image archive, podman's)."""
        k = self.kern("build", "-t", "kern-peer/%s:kern" % tag, *args, ctx, timeout=300)
        self.assertExit(k, 0)
        p = self.pm.podman("build", "--network", "none", "--format", "oci", "-t", "kern-peer/%s:podman" % tag,
                           *args, ctx, timeout=300)
        self.assertExit(p, 0, "podman build")
        kern_tar = os.path.join(self.work, tag + "-kern.tar")
        self.assertExit(self.kern("save", "-o", kern_tar, "kern-peer/%s:kern" % tag), 0)
        podman_tar = os.path.join(self.work, tag + "-podman.tar")
        self.assertExit(self.pm.podman("save", "--format", "oci-archive", "-o", podman_tar,
                                       "kern-peer/%s:podman" % tag, timeout=120), 0)
        return kern_tar, podman_tar

    def test_the_same_dockerfile_gives_the_same_image(self):
        ctx = self.context("ctx")
        kern_tar, podman_tar = self.build_both(ctx, "app", "--build-arg", "GREETING=hi")

        # 1. Each tool's result runs in the other: kern's in a kern box and in podman, podman's
        # (saved as docker-archive) in a kern box. The image's USER is nobody: --uid-range.
        got = self.kern("box", "--image", "kern-peer/app:kern", "--uid-range", timeout=60)
        self.assertExit(got, 0)
        self.assertEqual(got.out, CMD_OUTPUT, got.describe())
        self.assertExit(self.pm.podman("load", "-i", kern_tar, timeout=120), 0)
        got = self.pm.podman("run", "--rm", "--network", "none", "kern-peer/app:kern")
        self.assertExit(got, 0, "podman run of kern's image")
        self.assertEqual(got.out, CMD_OUTPUT, got.describe())
        got = self.pm.podman("run", "--rm", "--network", "none", "kern-peer/app:kern", "sh", "-c", "id -u; pwd")
        self.assertEqual(got.out, "65534\n/app\n", got.describe())
        podman_docker = os.path.join(self.work, "app-podman-docker.tar")
        self.assertExit(self.pm.podman("save", "--format", "docker-archive", "-o", podman_docker,
                                       "kern-peer/app:podman", timeout=120), 0)
        self.assertExit(self.kern("load", "-i", podman_docker), 0)
        got = self.kern("box", "--image", "localhost/kern-peer/app:podman", "--uid-range", timeout=60)
        self.assertExit(got, 0)
        self.assertEqual(got.out, CMD_OUTPUT, got.describe())

        # 2. The configs.
        kern_config, kern_tree = image_tree.read_tree(kern_tar)
        podman_config, podman_tree = image_tree.read_tree(podman_tar)
        kc, pc = kern_config["config"], podman_config["config"]
        theirs = dict(pc.get("Labels") or {})
        self.assertEqual(set(theirs) - set(kc.get("Labels") or {}), PODMAN_OWN_LABELS, (kc, pc))
        for label in PODMAN_OWN_LABELS:
            del theirs[label]
        pc = dict(pc, Labels=theirs)
        # ENV of a variable the base image has: kern replaces it where it stands (Docker's
        # order), buildah removes it and appends it. The same set, in each tool's order.
        self.assertEqual(kc["Env"], ["PATH=/app/bin:/usr/sbin:/usr/bin:/sbin:/bin", "APP_HOME=/app", "MODE=release"])
        self.assertEqual(pc["Env"], ["APP_HOME=/app", "MODE=release", "PATH=/app/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
        for field in CONFIG_FIELDS:
            if field == "Env":
                continue
            self.assertEqual(kc.get(field), pc.get(field), "config %s: kern %r, podman %r" % (field, kc, pc))
        self.assertEqual(kc["Labels"], {"org.example.stage": "final", "org.example.mode": "release"})
        self.assertEqual(kc["ExposedPorts"], {"8080/tcp": {}})
        self.assertEqual((kc["User"], kc["WorkingDir"], kc["Cmd"], kc.get("Entrypoint")),
                         ("nobody", "/app", ["greet"], None))

        # 3. The file trees. The single difference: /run, the directory buildah makes in the
        # layer of a RUN whose image lacks it (the mount point of the /run/.containerenv and
        # /run/secrets it mounts into every RUN); kern mounts nothing there that is kept.
        diff = differences(kern_tree, podman_tree)
        self.assertEqual(diff, {"run": (None, image_tree.Entry("dir", 0o755, 0, 0, "", ""))},
                         json.dumps(diff, indent=1))
        # The controls: what the Dockerfile did is in the tree both agree on.
        present = set(kern_tree)
        self.assertEqual({"usr/bin/wget", "home", "bin/vi", "usr/bin/wc"} & present, {"bin/vi", "usr/bin/wc"})
        self.assertEqual(kern_tree["app/hello"].link, "/app/bin/greet")
        self.assertEqual(kern_tree["app/private"][:2], ("dir", 0o700))
        self.assertEqual(kern_tree["etc/app.conf"].mode, 0o640)
        self.assertEqual(kern_tree["srv/conf/extra.conf"][2:4], (65534, 65534))
        self.assertFalse([p for p in kern_tree if p.startswith("src") or "secret" in p or p.endswith(".tmp")])

    def test_heredocs(self):
        ctx = self.context("heredoc", {"Dockerfile": HEREDOC_DOCKERFILE})
        k = self.kern("build", "-t", "kern-peer/heredoc:kern", ctx, timeout=300)
        self.assertExit(k, 0)
        got = self.kern("box", "--image", "kern-peer/heredoc:kern", timeout=60)
        self.assertEqual(got.out, "by a heredoc\ncopied for heredoc\n", got.describe())
        p = self.pm.podman("build", "--network", "none", "--format", "oci", "-t", "kern-peer/heredoc:podman", ctx,
                           timeout=300)
        version = self.pm.podman("version", "--format", "{{.Client.Version}}").out.strip()
        # buildah before 1.33 reads `RUN <<EOF` as a shell command and the heredoc's lines as
        # instructions ("Unknown instruction: SET").
        self.require("podman-heredoc", p.rc == 0, "podman %s (its buildah) does not read heredocs: exit %s: %s"
                     % (version, p.rc, (p.err.strip().splitlines() or [""])[-1][:300]))
        kern_tar, podman_tar = os.path.join(self.work, "hk.tar"), os.path.join(self.work, "hp.tar")
        self.assertExit(self.kern("save", "-o", kern_tar, "kern-peer/heredoc:kern"), 0)
        self.assertExit(self.pm.podman("save", "--format", "oci-archive", "-o", podman_tar,
                                       "kern-peer/heredoc:podman", timeout=120), 0)
        _, kern_tree = image_tree.read_tree(kern_tar)
        _, podman_tree = image_tree.read_tree(podman_tar)
        diff = differences(kern_tree, podman_tree)
        self.assertEqual(diff, {"run": (None, image_tree.Entry("dir", 0o755, 0, 0, "", ""))},
                         json.dumps(diff, indent=1))

    def test_a_root_run_keeps_the_owner_of_a_directory_it_changes(self):
        """A RUN as root deletes a file in a directory COPY --chown gave to nobody. buildah's layer
        keeps the directory nobody's, as Docker's does; so does kern's: the single-id box sees
        the directory as its root's, and the layer takes its owner from the image's records."""
        ctx = self.context("owner", {
            "Dockerfile": "FROM busybox:latest\nCOPY --chown=nobody:nobody conf/ /srv/conf/\n"
                          "RUN rm /srv/conf/drop.conf\n",
            "conf/keep.conf": "k\n",
            "conf/drop.conf": "d\n",
        })
        kern_tar, podman_tar = self.build_both(ctx, "owner")
        _, kern_tree = image_tree.read_tree(kern_tar)
        _, podman_tree = image_tree.read_tree(podman_tar)
        self.assertEqual(podman_tree["srv/conf"][2:4], (65534, 65534), "the control: buildah keeps the owner")
        self.assertEqual(differences(kern_tree, podman_tree),
                         {"run": (None, image_tree.Entry("dir", 0o755, 0, 0, "", ""))})


if __name__ == "__main__":
    kerntest.main()
