// `kern cp`'s way into a running box: one side of the copy runs in a joiner inside the box, the
// other in kern on the host, the two joined by a pipe that carries the tar stream
// (oci/tar_copy.h). Two processes take part:
//   kern cp (host side): finds and checks the box as kern exec does (find_exec_target), clones
//     the joiner, runs its own side, tells the joiner whether that side succeeded, waits;
//   the joiner (child of kern cp, host pid namespace): ends with kern cp (PR_SET_PDEATHSIG, after
//     undoing what it wrote: box_copy.cc says how), goes in as kern exec's joiner does (start_box_joiner, enter_box_raw: non-dumpable, only its own
//     fds, stdio on /dev/null), but into the box's user and mount namespaces only: its root and
//     working directory are then the box's "/", so every path and symlink it follows resolves in
//     the box. It runs its side and exits; it never execs and runs nothing of the box's.
// As kern exec's, the joiner is cloned into the box's cgroup: copying bytes into or out of the
// box is the box's work, under its memory and pids caps (a frozen box holds the copy until kern
// unpause).
#pragma once

#include <functional>
#include <optional>

#include "runtime/box_exec.h"
#include "runtime/sys/error.h"

namespace kern {

enum class CopyDirection { into_box, out_of_box };

// One side of a copy: `fd` is its end of the stream; `peer_done`, asked by the side that reads
// the stream once it ended, says whether the other side succeeded (so that a stream cut short by
// a failure is undone, not kept).
using CopySide = std::function<Status(int fd, const std::function<bool()>& peer_done)>;

struct BoxCopyOutcome {
  Status host;               // kern's side
  std::optional<Error> box;  // the joiner's, as it reported it
};

// Runs `in_box` in a joiner and `on_host` here, and waits for the joiner. An Error is a failure to
// start the joiner; the two sides' own results are in the outcome.
Result<BoxCopyOutcome> run_box_copy(const ExecTarget& target, CopyDirection direction, const CopySide& in_box,
                                    const CopySide& on_host);

}  // namespace kern
