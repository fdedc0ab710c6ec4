// poll(2) over a persistent epoll set; see poll_set.h. Supervisor process only.
#include "runtime/kernel/poll_set.h"

#include <poll.h>
#include <sys/epoll.h>

#include <cerrno>

namespace kern::kernel {
namespace {

uint32_t to_epoll(short events) {
  uint32_t e = 0;
  if (events & POLLIN) e |= EPOLLIN;
  if (events & POLLOUT) e |= EPOLLOUT;
  if (events & POLLPRI) e |= EPOLLPRI;
  return e;  // EPOLLERR and EPOLLHUP are always reported, as poll's POLLERR and POLLHUP
}

short from_epoll(uint32_t e) {
  short r = 0;
  if (e & EPOLLIN) r |= POLLIN;
  if (e & EPOLLOUT) r |= POLLOUT;
  if (e & EPOLLPRI) r |= POLLPRI;
  if (e & EPOLLERR) r |= POLLERR;
  if (e & EPOLLHUP) r |= POLLHUP;
  return r;
}

}  // namespace

Result<PollSet> PollSet::create() {
  PollSet s;
  s.ep_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!s.ep_) return fail_errno("epoll_create1");
  return s;
}

size_t PollSet::add(uint64_t key, int fd, short events) {
  want_.push_back({key, fd, events, 0});
  return want_.size() - 1;
}

void PollSet::sync() {
  auto wanted = [&](const Have& h) {
    for (const auto& w : want_)
      if (w.key == h.key) return w.fd == h.fd;
    return false;
  };
  // What is no longer wanted goes first: the number a key let go of may be another key's now.
  for (size_t i = 0; i < have_.size();) {
    if (wanted(have_[i])) {
      ++i;
      continue;
    }
    // A closed fd is out of the set already (EBADF, ENOENT): nothing to undo.
    if (!have_[i].fixed) (void)::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, have_[i].fd, nullptr);
    have_[i] = have_.back();
    have_.pop_back();
  }
  for (const auto& w : want_) {
    if (w.fd < 0) continue;
    Have* h = nullptr;
    for (auto& x : have_)
      if (x.key == w.key) h = &x;
    struct epoll_event ev = {};
    ev.events = to_epoll(w.events);
    ev.data.u64 = w.key;
    if (h) {
      if (h->events != w.events && !h->fixed) (void)::epoll_ctl(ep_.get(), EPOLL_CTL_MOD, w.fd, &ev);
      h->events = w.events;
      continue;
    }
    short fixed = 0;
    if (::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, w.fd, &ev) != 0) {
      // A regular file or /dev/null (EPERM): poll calls it readable and writable at once. A
      // bad fd: poll's POLLNVAL.
      fixed = errno == EPERM ? static_cast<short>(POLLIN | POLLOUT) : static_cast<short>(POLLNVAL);
    }
    have_.push_back({w.key, w.fd, w.events, fixed});
  }
  any_fixed_ = false;
  for (const auto& h : have_) any_fixed_ |= h.fixed != 0;
}

int PollSet::wait(int timeout_ms) {
  // Most rounds want what the last one did: then there is nothing to compare key by key.
  bool same = want_.size() == last_.size();
  for (size_t i = 0; same && i < want_.size(); ++i)
    same = want_[i].key == last_[i].key && want_[i].fd == last_[i].fd && want_[i].events == last_[i].events;
  if (!same) {
    sync();
    last_ = want_;
  }
  int ready = 0;
  for (auto& w : want_) {
    w.revents = 0;
    if (w.fd < 0 || !any_fixed_) continue;
    for (const auto& h : have_) {
      if (h.key != w.key || !h.fixed) continue;
      w.revents = h.fixed == POLLNVAL ? static_cast<short>(POLLNVAL)
                                      : static_cast<short>(h.fixed & (w.events | POLLERR | POLLHUP));
      if (w.revents) ++ready;
    }
  }
  struct epoll_event evs[128];
  int n = ::epoll_wait(ep_.get(), evs, 128, ready ? 0 : timeout_ms);
  if (n < 0) return -1;
  for (int i = 0; i < n; ++i) {
    for (auto& w : want_) {
      if (w.key != evs[i].data.u64 || w.fd < 0) continue;
      if (!w.revents) ++ready;
      w.revents |= from_epoll(evs[i].events);
    }
  }
  return ready;
}

}  // namespace kern::kernel
