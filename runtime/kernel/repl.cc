// REPL completion; see repl.h. Supervisor process only.
#include "runtime/kernel/repl.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime/sys/fdio.h"

namespace kern::kernel {
namespace {

constexpr size_t kPromptWindow = 4096;  // a prompt is looked for in the output's last bytes

}  // namespace

WaitKind classify_syscall_line(const std::string& text) {
  // "running", or "NR ARG0 ARG1 ... SP PC", or "-1 SP PC" (blocked, not in a syscall).
  if (text.rfind("running", 0) == 0) return WaitKind::running;
  char* end = nullptr;
  long nr = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str()) return WaitKind::unknown;
  if (nr < 0) return WaitKind::other;
  unsigned long long arg0 = std::strtoull(end, nullptr, 16);
  bool on_stdin = arg0 == 0;
  switch (nr) {
#ifdef SYS_read
    case SYS_read:
#endif
#ifdef SYS_readv
    case SYS_readv:
#endif
#ifdef SYS_pread64
    case SYS_pread64:
#endif
      return on_stdin ? WaitKind::stdin_read : WaitKind::other;
#ifdef SYS_poll
    case SYS_poll:
#endif
#ifdef SYS_select
    case SYS_select:
#endif
#ifdef SYS_ppoll
    case SYS_ppoll:
#endif
#ifdef SYS_pselect6
    case SYS_pselect6:
#endif
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait
    case SYS_epoll_pwait:
#endif
      return WaitKind::event_wait;
    default:
      return WaitKind::other;
  }
}

Result<ReplWatch> ReplWatch::create(const std::string& prompt) {
  ReplWatch w;
  if (!prompt.empty()) {
    // std::regex reports a bad pattern by exception; it stays inside this function.
    try {
      w.prompt_.emplace("(?:" + prompt + ")$", std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return fail(ErrorKind::usage, 0, "--prompt: bad regular expression: " + std::string(e.what()));
    }
  }
  return w;
}

void ReplWatch::start(pid_t repl_pid, int stdin_w) {
  pid_ = repl_pid;
  stdin_w_ = stdin_w;
}

bool ReplWatch::prompt_at_end(const std::string& s, size_t* pos) const {
  if (!prompt_) return false;
  size_t from = s.size() > kPromptWindow ? s.size() - kPromptWindow : 0;
  std::smatch m;
  auto begin = s.begin() + static_cast<std::ptrdiff_t>(from);
  if (!std::regex_search(begin, s.end(), m, *prompt_)) return false;
  if (pos) *pos = from + static_cast<size_t>(m.position(0));
  return true;
}

bool ReplWatch::idle(const std::string* out, const std::string* err) {
  if (pid_ <= 0 || stdin_w_ < 0) return false;
  int queued = 0;
  if (::ioctl(stdin_w_, FIONREAD, &queued) != 0 || queued != 0) return false;
  auto text = sys::read_file(AT_FDCWD, "/proc/" + std::to_string(pid_) + "/syscall", 512);
  WaitKind k = text ? classify_syscall_line(*text) : WaitKind::unknown;
  if (!prompt_) return k == WaitKind::stdin_read;
  if (k != WaitKind::stdin_read && k != WaitKind::event_wait) return false;
  if (!out) return true;  // before the first cell: waiting for input is enough
  return prompt_at_end(*out, nullptr) || (err && prompt_at_end(*err, nullptr));
}

uint64_t ReplWatch::next_check_ns() {
  uint64_t v = backoff_ns_;
  backoff_ns_ = backoff_ns_ * 2 > kMaxCheckNs ? kMaxCheckNs : backoff_ns_ * 2;
  return v;
}

void ReplWatch::strip_prompt(std::string& out, std::string& err) const {
  size_t pos = 0;
  if (prompt_at_end(out, &pos)) out.resize(pos);
  if (prompt_at_end(err, &pos)) err.resize(pos);
}

}  // namespace kern::kernel
