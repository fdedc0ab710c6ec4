// poll(2)'s interface over an epoll set that persists between rounds (internal to the warm
// kernel's supervisor loop, supervisor_loop.cc). Supervisor process only.
//
// Each round the loop adds the fds it wants, as it would fill a pollfd array, and waits; only the
// differences from the last round become epoll_ctl calls, so a round with the same fds costs one
// epoll_wait instead of a poll that visits every fd twice. What wait() reports is what poll would
// have: the same revents bits, a negative fd ignored, a file epoll refuses (a regular file or
// /dev/null as serve's stdin or stdout) always ready as poll reports it.
//
// Each fd is added under a key naming who it is (the end socket, a client connection's serial
// number...). A key must not be given to a different file: a closed fd's number may come back as
// another file, and the key is what tells them apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::kernel {

class PollSet {
 public:
  static Result<PollSet> create();

  // Starts a new round's set.
  void clear() { want_.clear(); }
  // Adds an fd as a pollfd entry (POLLIN, POLLOUT, or 0 for POLLERR/POLLHUP only); returns the
  // index revents() takes.
  size_t add(uint64_t key, int fd, short events);
  // Waits as poll(2) on this round's set (timeout_ms -1: no timeout); returns as poll: the
  // number of ready entries, or -1 with errno set (EINTR...).
  int wait(int timeout_ms);
  short revents(size_t i) const { return want_[i].revents; }
  size_t size() const { return want_.size(); }

 private:
  struct Want {
    uint64_t key;
    int fd;
    short events, revents;
  };
  struct Have {
    uint64_t key;
    int fd;
    short events;
    short fixed;  // epoll refused the file: what poll reports for it at once (0: epoll watches it)
  };
  void sync();

  UniqueFd ep_;
  std::vector<Want> want_;
  std::vector<Want> last_;  // the set the last sync() made the epoll set
  std::vector<Have> have_;
  bool any_fixed_ = false;  // some Have is fixed: wait() looks them up
};

}  // namespace kern::kernel
