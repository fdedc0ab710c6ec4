// send_all_raw (runtime/sys/fdio.h): a peer that has closed its end is EPIPE for the sender, never
// a SIGPIPE that kills it. kern wait, kill and attach talk to a box's supervisor, which closes its
// socket when the box ends: with write(2) a wait that raced the end died of SIGPIPE (exit -13).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/sys/fdio.h"

namespace kern::sys {
namespace {

// In a child with SIGPIPE at its default action, `put` on a socket whose peer is closed; the
// child exits with the errno it got, or dies of the signal.
template <class Put>
int child_status(Put put) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) _exit(100);
    ::close(sv[1]);
    _exit(put(sv[0]) == EPIPE ? 0 : 101);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(SendAll, AClosedPeerIsEpipeNotSigpipe) {
  int status = child_status([](int s) { return send_all_raw(s, "wait\n", 5); });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

// The discriminant: write(2) on the same socket is the SIGPIPE death send_all avoids.
TEST(SendAll, WriteOnTheSameSocketDiesOfSigpipe) {
  int status = child_status([](int s) { return write_all_raw(s, "wait\n", 5); });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) << "status " << status;
}

TEST(SendAll, AStatusNamesTheSocket) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ::close(sv[1]);
  Status s = send_all(sv[0], "wait\n", "the box's socket");
  ::close(sv[0]);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().sys_errno(), EPIPE);
  EXPECT_NE(std::string(s.error().what()).find("the box's socket"), std::string::npos);
}

}  // namespace
}  // namespace kern::sys
