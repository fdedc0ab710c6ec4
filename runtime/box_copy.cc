// kern cp's join; see box_copy.h. The host side, except for copy_joiner_main, which runs in the
// joiner and never returns.
#include "runtime/box_copy.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "runtime/box_join.h"
#include "runtime/channel.h"
#include "runtime/exit_status.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

struct CopyJoinArgs {
  pid_t kern_pid = 0;
  int join_pidfd = -1;
  unsigned long long namespaces = 0;
  int stream = -1;      // the joiner's end of the stream
  int verdict = -1;     // into the box: one byte 'C' from kern once its side succeeded
  int channel = -1;     // the joiner's word on a failure
  int devnull = -1;     // its stdio
  const CopySide* side = nullptr;
};

// "outer: inner: message", without the errno (which travels in its own field).
std::string flat_message(const Error& e) {
  std::string text = e.message();
  for (const auto& frame : e.context()) text = frame + ": " + text;
  return text;
}

// kern's end, or a signal meant for kern cp (the terminal's SIGINT reaches its whole process
// group): the joiner's side then fails at its next read or write of the pipes, whose other ends
// were kern's alone, and undoes what it wrote before it exits; the alarm ends a side that does not
// get there within 10 s (a file system of the box's that hangs).
void on_kern_gone(int) { ::alarm(10); }

[[noreturn]] void copy_joiner_main(const CopyJoinArgs& j) {
  struct sigaction sa = {};
  sa.sa_handler = on_kern_gone;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT})
    if (::sigaction(sig, &sa, nullptr) != 0) _exit(125);
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != j.kern_pid) _exit(125);
  for (int fd = 0; fd <= 2; ++fd)
    if (::dup2(j.devnull, fd) != fd) _exit(125);
  int keep[] = {j.join_pidfd, j.stream, j.verdict, j.channel};
  const char* what = "";
  if (int r = enter_box_raw(j.join_pidfd, j.namespaces, keep, sizeof keep / sizeof keep[0], &what); r != 0) {
    send_setup_failed(j.channel, ErrorKind::setup, r, what, "");
    _exit(125);
  }
  ::close(j.join_pidfd);
  std::function<bool()> peer_done = [&j] {
    char c = 0;
    ssize_t n;
    do n = ::read(j.verdict, &c, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 && c == 'C';
  };
  Status s = (*j.side)(j.stream, peer_done);
  if (!s) {
    const Error& e = s.error();
    send_setup_failed(j.channel, e.kind(), e.sys_errno(), flat_message(e).c_str(), "");
    _exit(1);
  }
  _exit(0);
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Result<BoxCopyOutcome> run_box_copy(const ExecTarget& target, CopyDirection direction, const CopySide& in_box,
                                    const CopySide& on_host) {
  bool into = direction == CopyDirection::into_box;
  UniqueFd stream_w, verdict_w, chan_w;
  KERN_TRY_ASSIGN(UniqueFd stream_r, sys::make_pipe(O_CLOEXEC, &stream_w));
  KERN_TRY_ASSIGN(UniqueFd verdict_r, sys::make_pipe(O_CLOEXEC, &verdict_w));
  KERN_TRY_ASSIGN(UniqueFd chan_r, sys::make_pipe(O_CLOEXEC, &chan_w));
  KERN_TRY_ASSIGN(UniqueFd devnull, sys::open_at(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
  UniqueFd& box_end = into ? stream_r : stream_w;
  UniqueFd& host_end = into ? stream_w : stream_r;

  CopyJoinArgs j;
  j.kern_pid = ::getpid();
  j.join_pidfd = target.join_pidfd.get();
  j.namespaces = target.lockdown.namespaces & (CLONE_NEWUSER | CLONE_NEWNS);
  j.stream = box_end.get();
  j.verdict = verdict_r.get();
  j.channel = chan_w.get();
  j.devnull = devnull.get();
  j.side = &in_box;
  // A side whose reader has gone gets EPIPE from write(2), and says so, rather than dying of it.
  ::signal(SIGPIPE, SIG_IGN);
  KERN_TRY_ASSIGN(pid_t joiner, start_box_joiner(target));
  if (joiner == 0) copy_joiner_main(j);
  box_end.reset();
  verdict_r.reset();
  chan_w.reset();
  devnull.reset();

  bool waited = false;
  int status = 0;
  auto wait_joiner = [&] {
    if (!waited) status = wait_child(joiner);
    waited = true;
    return status;
  };
  std::function<bool()> joiner_done = [&] { return exit_code_from_wait_status(wait_joiner()) == 0; };
  std::function<bool()> never = [] { return true; };
  BoxCopyOutcome out;
  out.host = on_host(host_end.get(), into ? never : joiner_done);
  host_end.reset();
  if (out.host && into) (void)sys::write_all_raw(verdict_w.get(), "C", 1);
  verdict_w.reset();
  wait_joiner();

  ChannelReader reader(chan_r.get());
  for (;;) {
    auto m = reader.next();
    if (!m) {
      out.box = std::move(m).error();
      break;
    }
    if (!*m) break;
    if ((*m)->type == ChannelMsgType::setup_failed && (*m)->error) {
      out.box = std::move(*(*m)->error);
      break;
    }
  }
  int code = exit_code_from_wait_status(status);
  if (!out.box && code != 0)
    out.box = Error(ErrorKind::setup, 0, "kern cp's joiner ended without a word (" + std::to_string(code) + ")");
  return out;
}

}  // namespace kern
