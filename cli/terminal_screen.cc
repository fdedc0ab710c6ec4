// The full screen of kern top; see terminal_screen.h.
#include "cli/terminal_screen.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/sys/fdio.h"
#include "runtime/timing.h"

namespace kern::cli {
// A named namespace: cli/CMakeLists.txt compiles the verb files as one unit.
namespace terminal_screen_impl {

constexpr int kSignals[4] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
volatile sig_atomic_t g_quit_signal = 0;
volatile sig_atomic_t g_resized = 0;

void on_signal(int sig) {
  if (sig == SIGWINCH) g_resized = 1;
  else g_quit_signal = sig;
}

// `s` cut to `cols` characters (UTF-8 code points; the screen's edge says a line goes on).
std::string cut(const std::string& s, size_t cols) {
  size_t kept = 0, i = 0;
  for (; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) {
      if (kept == cols) break;
      ++kept;
    }
  return s.substr(0, i);
}

void put(int fd, const std::string& s) { (void)sys::write_all(fd, s, "the terminal"); }

}  // namespace terminal_screen_impl

TerminalScreen::TerminalScreen(int in, int out) : in_(in), out_(out) {
  namespace impl = terminal_screen_impl;
  impl::g_quit_signal = 0;
  impl::g_resized = 0;
  struct sigaction sa {};
  sa.sa_handler = impl::on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: the wait's poll returns at once
  for (int i = 0; i < 4; ++i) ::sigaction(impl::kSignals[i], &sa, &old_[i]);
  if (::tcgetattr(in_, &saved_) == 0) {
    have_termios_ = true;
    struct termios raw = saved_;
    // Keys as they are typed, unseen; ISIG stays, so Ctrl-C is a SIGINT the handler sees.
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    ::tcsetattr(in_, TCSANOW, &raw);
  }
  impl::put(out_, "\033[?1049h\033[?25l\033[H\033[2J");
}

TerminalScreen::~TerminalScreen() {
  namespace impl = terminal_screen_impl;
  if (have_termios_) ::tcsetattr(in_, TCSANOW, &saved_);
  // The cursor back, then the main screen as it was: the last thing written.
  impl::put(out_, "\033[?25h\033[?1049l");
  for (int i = 0; i < 4; ++i) ::sigaction(impl::kSignals[i], &old_[i], nullptr);
}

void TerminalScreen::draw(const std::string& lines) {
  struct winsize ws {};
  size_t cols = 80, rows = 24;
  if (::ioctl(out_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    cols = ws.ws_col;
    rows = ws.ws_row;
  }
  std::string frame = "\033[H";
  size_t at = 0, n = 0;
  while (at < lines.size() && n < rows) {
    size_t nl = lines.find('\n', at);
    std::string line = lines.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    frame += terminal_screen_impl::cut(line, cols) + "\033[K";
    if (++n < rows) frame += "\r\n";
    at = nl == std::string::npos ? lines.size() : nl + 1;
  }
  frame += "\033[J";
  terminal_screen_impl::put(out_, frame);
}

TerminalScreen::Wake TerminalScreen::wait(std::chrono::milliseconds d) {
  namespace impl = terminal_screen_impl;
  const uint64_t end = monotonic_ns() + static_cast<uint64_t>(d.count()) * 1000000;
  for (;;) {
    if (impl::g_quit_signal) return Wake::quit;
    if (impl::g_resized) {
      impl::g_resized = 0;
      return Wake::resized;
    }
    uint64_t now = monotonic_ns();
    if (now >= end) return Wake::elapsed;
    struct pollfd p = {in_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>((end - now) / 1000000) + 1);
    if (r < 0 && errno != EINTR) return Wake::quit;
    if (r > 0) {
      if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) return Wake::quit;
      char c[64];
      ssize_t got = ::read(in_, c, sizeof c);
      if (got <= 0) return Wake::quit;
      for (ssize_t i = 0; i < got; ++i)
        if (c[i] == 'q' || c[i] == 'Q' || c[i] == 3) return Wake::quit;
    }
  }
}

int TerminalScreen::signal() const {
  int s = terminal_screen_impl::g_quit_signal;
  return s == SIGINT ? 0 : s;
}

}  // namespace kern::cli
