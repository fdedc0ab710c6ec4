// Which process of a running box stands for its namespaces when kern joins it from outside
// (kern exec, kern oci exec, kern oci ps): host side, any verb.
//
// Box init is non-dumpable (runtime/box/child_main.cc) and never execs, so its memory belongs to the host's
// user namespace: /proc/INIT/ns/* and setns through its pidfd need CAP_SYS_PTRACE there, which
// only root has. Its first child, the workload, has exec'd inside the box: its memory belongs to
// the box's user namespace, which kern's user owns, so kern may join through it whether or not
// it is dumpable. Every process the workload could reach, it already shares the box with.
#pragma once

#include <sys/types.h>

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

}  // namespace kern
