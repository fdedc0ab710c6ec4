"""An image archive read back: its config and the root file system its layers make, flattened in
Python (the layers applied in order, whiteouts and opaque whiteouts honoured), for comparing images
made by different tools. Reads docker-archive (`docker save`, `kern save`, `podman save`) and
oci-archive (`podman save --format oci-archive`) files, layers plain or gzip-compressed.

    config, tree = image_tree.read_archive(path)
    tree["etc/passwd"] == Entry("file", 0o644, 0, 0, "", "<sha256 hex>")

Times are left out of an Entry; a hard link is an entry of the file it names (its type "file", its
content the target's), since the flattened tree of one tool may hold as a link what the other
holds as a copy only across layers.
"""

import hashlib
import io
import json
import posixpath
import tarfile
from collections import namedtuple

Entry = namedtuple("Entry", "type mode uid gid link sha256")

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
KINDS = {tarfile.REGTYPE: "file", tarfile.AREGTYPE: "file", tarfile.DIRTYPE: "dir", tarfile.SYMTYPE: "symlink",
         tarfile.CHRTYPE: "char", tarfile.BLKTYPE: "block", tarfile.FIFOTYPE: "fifo"}


def _clean(name):
    name = posixpath.normpath("/" + name).lstrip("/")
    return "" if name == "." else name


def _members(outer, name):
    """The member called name of the outer tar, as bytes."""
    return outer.extractfile(outer.getmember(name)).read()


def read_archive(path):
    """(config, layers) of the only image in a docker-archive or oci-archive file: the config as
    parsed JSON, the layers as bytes (as stored: plain or gzip)."""
    with tarfile.open(path) as outer:
        names = set(outer.getnames())
        if "manifest.json" in names:
            manifest = json.loads(_members(outer, "manifest.json"))
            if len(manifest) != 1:
                raise ValueError("%s holds %d images, not one" % (path, len(manifest)))
            config = json.loads(_members(outer, manifest[0]["Config"]))
            layers = [_members(outer, l) for l in manifest[0]["Layers"]]
            return config, layers
        if "index.json" in names:
            def blob(digest):
                algo, hexd = digest.split(":", 1)
                return _members(outer, "blobs/%s/%s" % (algo, hexd))
            index = json.loads(_members(outer, "index.json"))
            if len(index["manifests"]) != 1:
                raise ValueError("%s indexes %d manifests, not one" % (path, len(index["manifests"])))
            manifest = json.loads(blob(index["manifests"][0]["digest"]))
            config = json.loads(blob(manifest["config"]["digest"]))
            return config, [blob(l["digest"]) for l in manifest["layers"]]
    raise ValueError("%s is neither a docker-archive (manifest.json) nor an oci-archive (index.json)" % path)


def flatten(layers):
    """The tree of the layers applied in order: path (relative, no leading ./) -> Entry."""
    tree = {}
    for raw in layers:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as t:
            members = t.getmembers()
            # Opaque whiteouts first: they empty the directory of what lower layers put there,
            # whatever the order of the layer's own entries.
            for m in members:
                name = _clean(m.name)
                if posixpath.basename(name) == OPAQUE:
                    d = posixpath.dirname(name)
                    for p in [p for p in tree if p.startswith(d + "/")]:
                        del tree[p]
            for m in members:
                name = _clean(m.name)
                base = posixpath.basename(name)
                if base == OPAQUE:
                    continue
                if base.startswith(WHITEOUT):
                    gone = posixpath.join(posixpath.dirname(name), base[len(WHITEOUT):])
                    for p in [p for p in tree if p == gone or p.startswith(gone + "/")]:
                        del tree[p]
                    continue
                if not name:
                    continue  # the root itself
                old = tree.get(name)
                if old is not None and (old.type != "dir" or not m.isdir()):
                    # A non-directory replaces what was there, and what was beneath it.
                    for p in [p for p in tree if p.startswith(name + "/")]:
                        del tree[p]
                if m.islnk():
                    target = tree[_clean(m.linkname)]
                    tree[name] = target
                    continue
                kind = KINDS.get(m.type)
                if kind is None:
                    raise ValueError("%s: tar entry type %r" % (name, m.type))
                digest = ""
                if kind == "file":
                    digest = hashlib.sha256(t.extractfile(m).read()).hexdigest()
                link = m.linkname if kind == "symlink" else ""
                if kind in ("char", "block"):
                    link = "%d:%d" % (m.devmajor, m.devminor)
                tree[name] = Entry(kind, m.mode & 0o7777, m.uid, m.gid, link, digest)
    return tree


def read_tree(path):
    """(config, flattened tree) of an image archive."""
    config, layers = read_archive(path)
    return config, flatten(layers)
