#!/usr/bin/env python3
"""Builds test and demo images from files on this machine, with the standard library only.

Nothing here downloads anything and no binary archive is committed: the layers are made at run
time, by default around Debian's busybox-static (/bin/busybox).

    build_images.py busybox-archive OUT.tar [--tag busybox:latest]    docker-archive (docker save)
    build_images.py busybox-layout DIR [--tag latest]                 OCI image layout
    build_images.py layered-layout DIR [--tag latest]                 3 layers, whiteouts, opaque dir
    build_images.py multiarch-layout DIR [--tag latest]               an index with amd64 + arm64

Used by tests/support/make_busybox_image.sh (the README's default image) and by the image
integration tests, which import these helpers.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import platform
import posixpath
import subprocess
import sys
import tarfile
import time

BUSYBOX = os.environ.get("KERN_BUSYBOX", "/bin/busybox")
MTIME = 1700000000
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"


def host_arch():
    m = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(m, m)


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Layer:
    """A layer tar built in memory. Entries: ("dir"|"file"|"symlink"|"hardlink", name, ...)."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buf, mode="w", format=tarfile.PAX_FORMAT)

    def _info(self, name, kind, mode):
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.mode = mode
        ti.mtime = MTIME
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    def dir(self, name, mode=0o755):
        self.tar.addfile(self._info(name, tarfile.DIRTYPE, mode))
        return self

    def file(self, name, data=b"", mode=0o644):
        if isinstance(data, str):
            data = data.encode()
        ti = self._info(name, tarfile.REGTYPE, mode)
        ti.size = len(data)
        self.tar.addfile(ti, io.BytesIO(data))
        return self

    def symlink(self, name, target):
        ti = self._info(name, tarfile.SYMTYPE, 0o777)
        ti.linkname = target
        self.tar.addfile(ti)
        return self

    def hardlink(self, name, target):
        ti = self._info(name, tarfile.LNKTYPE, 0o755)
        ti.linkname = target
        self.tar.addfile(ti)
        return self

    def bytes(self):
        self.tar.close()
        return self.buf.getvalue()


def busybox_applets():
    out = subprocess.run([BUSYBOX, "--list-full"], check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def busybox_layer():
    """A small root file system: /bin/busybox plus one symlink per applet, at the place
    `busybox --list-full` names."""
    with open(BUSYBOX, "rb") as f:
        bb = f.read()
    layer = Layer()
    for d in ["bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "root", "home", "var", "proc", "sys", "dev"]:
        layer.dir(d)
    layer.dir("tmp", 0o1777)
    layer.file("bin/busybox", bb, 0o755)
    layer.file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
    layer.file("etc/group", "root:x:0:\nnobody:x:65534:\n")
    layer.file("etc/hostname", "busybox\n")
    seen = {"bin/busybox"}
    for path in busybox_applets():
        path = path.lstrip("/")
        if path in seen:
            continue
        seen.add(path)
        # Relative to the link's own directory: sbin/x -> ../bin/busybox, usr/bin/x ->
        # ../../bin/busybox, linuxrc (at the root) -> bin/busybox.
        layer.symlink(path, posixpath.relpath("bin/busybox", posixpath.dirname(path) or "."))
    return layer.bytes()


def image_config(diff_ids, cmd=None, env=None, entrypoint=None, workdir="", arch=None, healthcheck=None,
                 history=None):
    """history: the config's history entries (buildah commits no step on a base image whose
    history names fewer layers than it has: history=one_history_per_layer(n))."""
    cfg = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(MTIME)),
        "architecture": arch or host_arch(),
        "os": "linux",
        "config": {
            "Env": env or ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],
            "Cmd": cmd if cmd is not None else ["/bin/sh"],
            "WorkingDir": workdir,
        },
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }
    if entrypoint:
        cfg["config"]["Entrypoint"] = entrypoint
    if healthcheck is not None:
        cfg["config"]["Healthcheck"] = healthcheck  # Docker's: Test, Interval (ns), Retries, ...
    if history is not None:
        cfg["history"] = history
    return json.dumps(cfg, sort_keys=True).encode()


def one_history_per_layer(n, by="build_images.py"):
    """n history entries, each of a layer (none empty_layer), as an image's history."""
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(MTIME))
    return [{"created": created, "created_by": "%s layer %d" % (by, i + 1)} for i in range(n)]


def write_docker_archive(out_path, layers, repo_tags, **cfg_kw):
    """docker save format: manifest.json, <config hex>.json, <id>/layer.tar (uncompressed)."""
    diff_ids = [sha256(l) for l in layers]
    cfg = image_config(diff_ids, **cfg_kw)
    cfg_name = hashlib.sha256(cfg).hexdigest() + ".json"
    with tarfile.open(out_path, "w", format=tarfile.PAX_FORMAT) as tar:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = MTIME
            tar.addfile(ti, io.BytesIO(data))
        layer_names = []
        for l in layers:
            lid = hashlib.sha256(l).hexdigest()
            add(lid + "/layer.tar", l)
            layer_names.append(lid + "/layer.tar")
        add(cfg_name, cfg)
        manifest = [{"Config": cfg_name, "RepoTags": repo_tags, "Layers": layer_names}]
        add("manifest.json", json.dumps(manifest).encode())
    return sha256(cfg)


class Layout:
    """An OCI image layout directory."""

    def __init__(self, path):
        self.path = path
        os.makedirs(os.path.join(path, "blobs", "sha256"), exist_ok=True)
        with open(os.path.join(path, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": "1.0.0"}, f)
        self.index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": []}

    def blob(self, data):
        d = sha256(data)
        with open(os.path.join(self.path, "blobs", "sha256", d[7:]), "wb") as f:
            f.write(data)
        return {"digest": d, "size": len(data)}

    def image(self, layers, gzip_layers=True, arch=None, **cfg_kw):
        """Adds an image manifest; returns its descriptor (not yet in index.json)."""
        diff_ids = [sha256(l) for l in layers]
        descs = []
        for l in layers:
            data = gzip.compress(l, mtime=0) if gzip_layers else l
            descs.append(dict(mediaType=LAYER_GZIP if gzip_layers else LAYER_TAR, **self.blob(data)))
        cfg = dict(mediaType=OCI_CONFIG, **self.blob(image_config(diff_ids, arch=arch, **cfg_kw)))
        manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": cfg, "layers": descs}
        return dict(mediaType=OCI_MANIFEST, **self.blob(json.dumps(manifest).encode()))

    def tag(self, desc, tag):
        entry = dict(desc)
        entry["annotations"] = {"org.opencontainers.image.ref.name": tag}
        self.index["manifests"].append(entry)

    def save(self):
        with open(os.path.join(self.path, "index.json"), "w") as f:
            json.dump(self.index, f)


def layered_layers():
    """Three layers: base busybox; a layer adding files; a layer with whiteouts and an opaque dir."""
    base = busybox_layer()
    l2 = (Layer().dir("data").file("data/keep", "keep\n").file("data/gone", "gone\n")
          .dir("data/opaque").file("data/opaque/old", "old\n").file("etc/motd", "layer2\n").bytes())
    l3 = (Layer().dir("data").file("data/.wh.gone").dir("data/opaque").file("data/opaque/.wh..wh..opq")
          .file("data/opaque/new", "new\n").file("etc/motd", "layer3\n").bytes())
    return [base, l2, l3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["busybox-archive", "busybox-layout", "layered-layout", "multiarch-layout"])
    ap.add_argument("out")
    ap.add_argument("--tag", default=None)
    a = ap.parse_args()
    if a.kind == "busybox-archive":
        write_docker_archive(a.out, [busybox_layer()], [a.tag or "busybox:latest"])
    elif a.kind == "busybox-layout":
        lay = Layout(a.out)
        lay.tag(lay.image([busybox_layer()]), a.tag or "latest")
        lay.save()
    elif a.kind == "layered-layout":
        lay = Layout(a.out)
        lay.tag(lay.image(layered_layers()), a.tag or "latest")
        lay.save()
    else:
        lay = Layout(a.out)
        base = busybox_layer()
        amd = lay.image([base, Layer().file("etc/arch", "amd64\n").bytes()], arch="amd64")
        arm = lay.image([base, Layer().file("etc/arch", "arm64\n").bytes()], arch="arm64")
        amd["platform"] = {"architecture": "amd64", "os": "linux"}
        arm["platform"] = {"architecture": "arm64", "os": "linux"}
        idx = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [arm, amd]}
        desc = dict(mediaType=OCI_INDEX, **lay.blob(json.dumps(idx).encode()))
        lay.tag(desc, a.tag or "latest")
        lay.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
