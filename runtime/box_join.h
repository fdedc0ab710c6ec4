// Which process of a running box stands for its namespaces when kern joins it from outside
// (kern exec, kern cp, kern oci exec, kern oci ps): host side, any verb; and the first steps of
// the joiner, the child of kern that goes in (enter_box_raw).
//
// Box init is non-dumpable (runtime/box/child_main.cc) and never execs, so its memory belongs to the host's
// user namespace: /proc/INIT/ns/* and setns through its pidfd need CAP_SYS_PTRACE there, which
// only root has. Its first child, the workload, has exec'd inside the box: its memory belongs to
// the box's user namespace, which kern's user owns, so kern may join through it whether or not
// it is dumpable. Every process the workload could reach, it already shares the box with.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

// The first child of `pid` (/proc/PID/task/PID/children, readable without ptrace access), 0
// when it has none.
pid_t first_child_of(pid_t pid);

struct NamespaceHolder {
  pid_t pid = 0;
  UniqueFd pidfd;
};

// A pidfd of the process to join a box through: box init's first child, checked after it is
// opened to still be box init's child (a recycled pid is not), else box init itself.
Result<NamespaceHolder> open_namespace_holder(pid_t init_pid);

// The namespaces (CLONE_NEW* flags) process `pid` does not share with this one: what a setns
// to join it may name (joining one it shares, the user namespace above all, would fail). A
// link of the process's that cannot be read (a process that is not dumpable, to a caller
// without CAP_SYS_PTRACE) is an error: a join that left that namespace out would run the new
// process in the caller's.
Result<unsigned long long> namespaces_to_join(pid_t pid);

// The joiner's way in, kern exec's and kern cp's alike, in the child before anything of the box
// is touched: non-dumpable first, then every fd closed but stdio and the `n` in `keep` (sorted in
// place), the working directory "/", then setns through `pidfd` into `namespaces` (all at once:
// the user namespace first, so that the others are joined with its capabilities).
// Non-dumpable, because the box's processes share the joiner's uid there, and only the mark
// (whose mm belongs to the host's user namespace, where the box holds no capability) keeps them
// out of /proc/PID/{mem,exe,fd,cwd,root,environ} of a process that is kern; a child of the
// joiner inherits it until its execve. The caller's working directory is a directory of the host
// (joining the mount namespace moves it to the box's root; a container sharing the caller's
// mount namespace is not moved). 0, or the errno with the step that failed in *what. Allocates
// nothing.
int enter_box_raw(int pidfd, unsigned long long namespaces, int* keep, size_t n, const char** what) noexcept;

}  // namespace kern
