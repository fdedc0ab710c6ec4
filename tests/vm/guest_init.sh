#!/bin/busybox sh
# /init of the VM lane's guest (packed into the initramfs by build_guest.sh); PID 1.
#
# Sets up what the lane tests need and this host lacks, then runs the job as an unprivileged
# user:
#   - cgroup v2 as the only hierarchy (the kernel boots with cgroup_no_v1=all), all controllers
#     enabled down to /user.slice/user-UID.slice/user@UID.service, which is handed to UID the way
#     systemd delegates it (the directory and its cgroup.procs, cgroup.subtree_control and
#     cgroup.threads); the job runs in its leaf session.scope;
#   - two gpio-sim chips (labels kern-sim-a, kern-sim-b), an i2c-stub adapter (0x50) and the
#     two spidev nodes of kern_spi_loop's software SPI controller (chip selects 0 and 1,
#     modules/kern_spi_loop.c), their nodes group-owned by UID's group;
#   - a 32 MiB RAM disk (brd, /dev/ram0) with ext4 mounted at /mnt/kern-disk, owned by UID;
#   - the host's / (9p, read-only) under a tmpfs overlay as the root, the run directory (9p,
#     read-write) at /run/kern-vm; where the host's programs are of another architecture, the
#     initramfs's /userland (build_guest.sh) replaces its /usr/bin and /usr/sbin and adds its
#     libraries.
# The job is /run/kern-vm/job.sh; its exit status goes to /run/kern-vm/result and to the console
# as "KERN_VM_RESULT=N". 254: the guest could not be set up.
export PATH=/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mount -t devtmpfs devtmpfs /dev
exec </dev/null >/dev/console 2>&1

log() { echo "kern-vm-guest: $*"; }
halt_with() {
  [ -d /newroot/run/kern-vm ] && echo "$1" > /newroot/run/kern-vm/result
  echo "KERN_VM_RESULT=$1"
  sync
  poweroff -f
}
die() { log "setup failed: $*"; halt_with 254; }

uid=1000
for arg in $(cat /proc/cmdline); do
  case $arg in kernvm.uid=*) uid=${arg#kernvm.uid=} ;; esac
done

for m in $(cat /etc/modules); do
  opts=
  [ "$m" = i2c-stub ] && opts=chip_addr=0x50
  [ "$m" = brd ] && opts="rd_nr=1 rd_size=32768"
  insmod "/lib/modules/$m.ko" $opts 2>/tmp/insmod.log || grep -q 'File exists' /tmp/insmod.log || die "insmod $m: $(cat /tmp/insmod.log)"
done

# --- cgroup v2, delegated to uid ---
cg=/sys/fs/cgroup
mount -t cgroup2 -o nsdelegate cgroup2 $cg || die "mount cgroup2"
all="+memory +pids +cpu +cpuset +io"
rel=
for part in user.slice user-$uid.slice user@$uid.service; do
  echo "$all" > "$cg$rel/cgroup.subtree_control" || die "enable controllers in $cg$rel ($(cat $cg$rel/cgroup.controllers))"
  rel=$rel/$part
  mkdir -p "$cg$rel"
done
svc=$cg$rel
mkdir -p "$svc/session.scope"
echo "$all" > "$svc/cgroup.subtree_control" || die "enable controllers in $svc"
chown "$uid:$uid" "$svc" "$svc/cgroup.procs" "$svc/cgroup.subtree_control" "$svc/cgroup.threads"
chown -R "$uid:$uid" "$svc/session.scope"

# --- device simulators ---
mount -t configfs configfs /sys/kernel/config || die "mount configfs"
sim=/sys/kernel/config/gpio-sim/lane
mkdir "$sim" "$sim/bank0" "$sim/bank1" || die "gpio-sim configfs"
echo 8 > "$sim/bank0/num_lines"
echo kern-sim-a > "$sim/bank0/label"
echo 4 > "$sim/bank1/num_lines"
echo kern-sim-b > "$sim/bank1/label"
echo 1 > "$sim/live" || die "gpio-sim live"
chip_a=/dev/$(cat "$sim/bank0/chip_name")
chip_b=/dev/$(cat "$sim/bank1/chip_name")
i2c=
for c in /sys/class/i2c-dev/i2c-*; do
  grep -qi stub "$c/name" 2>/dev/null && i2c=/dev/${c##*/}
done
[ -n "$i2c" ] || die "no i2c-stub adapter"
spi0=
spi1=
for d in /sys/class/spidev/spidev*; do
  case $(readlink -f "$d") in
    */platform/kern_spi_loop/*.0) spi0=/dev/${d##*/} ;;
    */platform/kern_spi_loop/*.1) spi1=/dev/${d##*/} ;;
  esac
done
[ -n "$spi0" ] && [ -n "$spi1" ] || die "no spidev nodes on kern_spi_loop ($(ls /sys/class/spidev 2>&1))"
for n in $chip_a $chip_b $i2c $spi0 $spi1; do
  i=0
  while [ ! -e "$n" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  chown "0:$uid" "$n" && chmod 0660 "$n" || die "device node $n"
done

# --- the root: the host's / read-only under a tmpfs overlay ---
mkdir -p /mnt/host /mnt/rw /mnt/run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro kvm_root /mnt/host || die "9p kvm_root"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 kvm_run /mnt/run || die "9p kvm_run"
mount -t tmpfs -o mode=0755 tmpfs /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work /newroot || die "overlay root"
r=/newroot
mount --rbind /proc $r/proc
mount --rbind /sys $r/sys
mount --rbind /dev $r/dev
mount -t tmpfs -o mode=1777 tmpfs $r/tmp
mount -t tmpfs -o mode=0755 tmpfs $r/run
mkdir -p $r/run/kern-vm $r/run/user/$uid $r/run/kern-vm-boot
mount --bind /mnt/run $r/run/kern-vm
chown "$uid:$uid" $r/run/user/$uid
chmod 0700 $r/run/user/$uid
# Where a systemd PID 1 leaves its marker (/run/systemd/system): the job's systemd check makes
# the marker itself while it runs a user manager (this guest's PID 1 is not systemd), and removes it.
mkdir -p $r/run/systemd
chown "$uid:$uid" $r/run/systemd
# A guest of another architecture than the host's: its own programs over the host's, which it
# cannot run; kern's libraries are the host's multiarch ones.
if [ -d /userland ]; then
  for d in bin sbin; do
    mount -t tmpfs -o mode=0755 tmpfs $r/usr/$d || die "tmpfs on /usr/$d"
    cp -a /userland/usr/$d/. $r/usr/$d/ || die "user space into /usr/$d"
  done
  for a in $(/bin/busybox --list); do
    [ -e $r/usr/bin/$a ] || [ -e $r/usr/sbin/$a ] || ln -s busybox $r/usr/bin/$a
  done
  cp -af /userland/usr/lib/. $r/usr/lib/ || die "user space's libraries"
fi
# On arm64 the user space brings an AArch32 busybox (build_guest.sh) for the seccomp check.
armhf_busybox=
[ -x $r/usr/lib/kern-vm/busybox-armhf ] && armhf_busybox=/usr/lib/kern-vm/busybox-armhf
grep -q "^[^:]*:[^:]*:$uid:" $r/etc/passwd || echo "kernvm:x:$uid:$uid:kern vm lane:/tmp:/bin/sh" >> $r/etc/passwd
grep -q "^[^:]*:[^:]*:$uid:" $r/etc/group || echo "kernvm:x:$uid:" >> $r/etc/group

# --- AppArmor: a profile for kern box --apparmor (this host kind has no AppArmor of its own) ---
# It denies inet sockets and allows the rest: the box's answer to socket(AF_INET) tells whether the
# workload runs under it. The parser is the host's (package apparmor), run in the new root.
aa_state=unavailable
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ]; then
  echo "AppArmor is not enabled in the guest's kernel" > /mnt/run/apparmor.txt
elif [ ! -x $r/sbin/apparmor_parser ]; then
  echo "apparmor_parser is not installed on the host (Debian package apparmor)" > /mnt/run/apparmor.txt
else
  cat > $r/run/kern-vm-boot/kern-vm-test.aa <<'AA'
abi <abi/3.0>,
profile kern-vm-test flags=(attach_disconnected,mediate_deleted) {
  file,
  capability,
  network unix,
  network netlink,
  deny network inet,
  deny network inet6,
  mount,
  umount,
  pivot_root,
  signal,
  ptrace,
  unix,
}
AA
  if chroot $r /sbin/apparmor_parser -K -r /run/kern-vm-boot/kern-vm-test.aa >/tmp/aa.log 2>&1; then
    aa_state=loaded
    echo "kern-vm-test loaded" > /mnt/run/apparmor.txt
  else
    { echo "apparmor_parser failed:"; head -c 600 /tmp/aa.log; } > /mnt/run/apparmor.txt
  fi
fi

# --- a 32 MiB RAM disk with ext4 on it, the user's, for the io.max checks ---
disk=/dev/ram0
[ -b $disk ] || die "no $disk from brd"
chroot $r /usr/sbin/mkfs.ext4 -q -F -O ^has_journal $disk >/tmp/mkfs.log 2>&1 || die "mkfs.ext4 $disk: $(cat /tmp/mkfs.log)"
mkdir -p $r/mnt/kern-disk
mount -t ext4 $disk $r/mnt/kern-disk || die "mount $disk"
chown "$uid:$uid" $r/mnt/kern-disk

cat > $r/run/kern-vm/guest.env <<ENV
KERN_VM_KERNEL=$(uname -r)
KERN_VM_CGROUP=$svc
KERN_VM_GPIO_A=$chip_a
KERN_VM_GPIO_B=$chip_b
KERN_VM_I2C=$i2c
KERN_VM_I2C_ADDR=0x50
KERN_VM_SPI0=$spi0
KERN_VM_SPI1=$spi1
KERN_VM_DISK=$disk
KERN_VM_DISK_DIR=/mnt/kern-disk
KERN_VM_APPARMOR=$aa_state
KERN_VM_ARMHF_BUSYBOX=$armhf_busybox
ENV
log "ready after $(cut -d' ' -f1 /proc/uptime)s: kernel $(uname -r), uid $uid, cgroup $svc, gpio $chip_a $chip_b, i2c $i2c, spi $spi0 $spi1, disk $disk"

# switch_root, not chroot: a chrooted process may not create user namespaces, which is what
# every box does. Stage two runs as PID 1 in the new root with its own busybox.
cp /bin/busybox $r/run/kern-vm-boot/busybox
cat > $r/run/kern-vm-boot/stage2 <<STAGE2
b=/run/kern-vm-boot/busybox
exec </dev/null >/dev/console 2>&1
\$b sh -c 'echo \$\$ > $svc/session.scope/cgroup.procs || exit 253
  cd /tmp
  exec /usr/bin/setpriv --reuid=$uid --regid=$uid --init-groups --reset-env \
    /usr/bin/env HOME=/tmp XDG_RUNTIME_DIR=/run/user/$uid XDG_CACHE_HOME=/tmp/cache XDG_CONFIG_HOME=/tmp/config \
    \$(\$b cat /run/kern-vm/guest.env) /bin/bash /run/kern-vm/job.sh'
rc=\$?
echo \$rc > /run/kern-vm/result
\$b sync
echo "KERN_VM_RESULT=\$rc"
\$b umount /run/kern-vm
\$b poweroff -f
STAGE2
umount /mnt/run
exec switch_root $r /run/kern-vm-boot/busybox sh /run/kern-vm-boot/stage2
die "switch_root"
