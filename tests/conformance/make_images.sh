#!/bin/bash
# make_images.sh DIR: write the two root file systems runc's integration suite unpacks,
# busybox-ARCH.tar.xz and debian-ARCH.tar.xz, into DIR without a network.
#
# The suite's get-images.sh downloads Docker's glibc busybox image and a Debian "slim" tree and
# skips the download when the file is already there; these stand-ins are made here instead:
#   busybox  Debian's busybox-static (/bin/busybox), one link per applet in /bin, and the
#            passwd/group files, directories and modes the Docker image has.
#   debian   the files the host's dpkg says belong to a short list of installed Debian packages
#            (libc, ldconfig, dash, bash, grep, coreutils and their libraries), laid out
#            merged-/usr as Debian is. Only hooks.bats uses it (sh, ldconfig, grep).
# ARCH is Go's name for the machine (amd64, arm64), as get-images.sh names the files.
set -euo pipefail

out=${1:?usage: make_images.sh DIR}
mkdir -p "$out"
case $(uname -m) in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
i?86) arch=386 ;;
*) arch=$(uname -m) ;;
esac
busybox=${KERN_BUSYBOX:-/bin/busybox}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_busybox() {
	local r=$work/busybox
	# No proc or sys: the busybox root file system runc's suite downloads has neither (the
	# runtime makes the mount points), and mask.bats's symlink tests rely on that.
	mkdir -p "$r"/{bin,dev,etc,home,root,tmp,usr/sbin,var/spool/mail,var/www}
	chmod 1777 "$r/tmp"
	chmod 0700 "$r/root"
	cp "$busybox" "$r/bin/busybox"
	local applet
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || ln -f "$r/bin/busybox" "$r/bin/$applet"
	done
	cat >"$r/etc/passwd" <<-'P'
		root:x:0:0:root:/root:/bin/sh
		daemon:x:1:1:daemon:/usr/sbin:/bin/false
		bin:x:2:2:bin:/bin:/bin/false
		sys:x:3:3:sys:/dev:/bin/false
		sync:x:4:100:sync:/bin:/bin/sync
		mail:x:8:8:mail:/var/spool/mail:/bin/false
		www-data:x:33:33:www-data:/var/www:/bin/false
		operator:x:37:37:Operator:/var:/bin/false
		nobody:x:65534:65534:nobody:/home:/bin/false
	P
	cat >"$r/etc/group" <<-'G'
		root:x:0:
		daemon:x:1:
		bin:x:2:
		sys:x:3:
		adm:x:4:
		tty:x:5:
		disk:x:6:
		lp:x:7:
		mail:x:8:
		kmem:x:9:
		wheel:x:10:root
		cdrom:x:11:
		dialout:x:18:
		floppy:x:19:
		video:x:28:
		audio:x:29:
		tape:x:32:
		www-data:x:33:
		operator:x:37:
		utmp:x:43:
		plugdev:x:46:
		staff:x:50:
		lock:x:54:
		netdev:x:82:
		users:x:100:
		nogroup:x:65534:
	G
	echo "127.0.0.1 localhost" >"$r/etc/hosts"
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cJf "$out/busybox-$arch.tar.xz.tmp" .
	mv "$out/busybox-$arch.tar.xz.tmp" "$out/busybox-$arch.tar.xz"
}

make_debian() {
	local r=$work/debian d pkg f
	: >"$work/debian.list"
	mkdir -p "$r"/usr/{bin,sbin,lib,lib64} "$r"/{dev,proc,sys,tmp,root,etc,var,run,home}
	chmod 1777 "$r/tmp"
	for d in bin sbin lib lib64; do ln -s "usr/$d" "$r/$d"; done
	for pkg in base-files base-passwd libc6 libc-bin dash bash libtinfo6 grep libpcre2-8-0 \
		coreutils libacl1 libattr1 libgmp10 libselinux1; do
		# A host with foreign architectures added needs the native one named.
		dpkg-query -W "$pkg:$(dpkg --print-architecture)" >/dev/null 2>&1 &&
			pkg=$pkg:$(dpkg --print-architecture)
		dpkg-query -W "$pkg" >/dev/null 2>&1 || {
			echo "make_images.sh: Debian package $pkg is not installed on this host" >&2
			exit 1
		}
		while IFS= read -r f; do
			# Files and links only: tar makes the directories on the way.
			if [ -L "$f" ] || [ -f "$f" ]; then echo "${f#/}"; fi
		done < <(dpkg -L "$pkg") >>"$work/debian.list"
	done
	tar -C / --no-recursion -cf - -T "$work/debian.list" | tar -C "$r" --keep-directory-symlink -xf -
	[ -e "$r/bin/sh" ] || ln -s dash "$r/usr/bin/sh"
	cp /usr/share/base-passwd/passwd.master "$r/etc/passwd"
	cp /usr/share/base-passwd/group.master "$r/etc/group"
	# /etc/ld.so.cache is made by ldconfig in the container, as the hooks test expects.
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cJf "$out/debian-$arch.tar.xz.tmp" .
	mv "$out/debian-$arch.tar.xz.tmp" "$out/debian-$arch.tar.xz"
}

[ -s "$out/busybox-$arch.tar.xz" ] || make_busybox
[ -s "$out/debian-$arch.tar.xz" ] || make_debian
echo "BUSYBOX_IMAGE=$out/busybox-$arch.tar.xz"
echo "DEBIAN_IMAGE=$out/debian-$arch.tar.xz"
