// A supervisor of kern's own (a detached box's, a pod's): forked twice into a session of its own
// (nobody's session leader, no child of the caller's), so that it outlives the command that
// starts it; the command waits for its word on a pipe.
#pragma once

#include <functional>
#include <string>

#include "runtime/sys/error.h"

namespace kern::sys {

// Runs `body(ready_fd)` in the forked supervisor (it must not return) and waits for what it
// writes on ready_fd: "R" is success; "F" and an encoded Error (say_failed) is that error; the
// pipe closing with neither is an error saying `ended`.
Status start_session_child(const std::function<void(int ready_fd)>& body, const std::string& ended);

// What a supervisor writes on its ready pipe when it cannot start.
void say_failed(int ready_fd, const Error& e);

}  // namespace kern::sys
