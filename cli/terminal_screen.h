// The full screen of `kern top` on a terminal, drawn with a handful of plain ANSI (ECMA-48 and
// xterm) sequences rather than ncurses: the alternate screen (CSI ?1049h/l), the cursor hidden
// and shown (CSI ?25l/h), home (CSI H), erase to the end of the line and of the screen (CSI K,
// CSI J). Every terminal emulator and console of the last decades knows these, so kern needs
// neither a terminfo database (minimal and edge images often have none) nor another library: it
// stays one binary with Debian's usual dependencies.
//
// A TerminalScreen puts the terminal in that state and takes it back on every way out: its
// destructor (a return, `q`, an error), and SIGINT, SIGTERM and SIGHUP, which only set a flag
// here (the wait returns, the destructor runs). SIGWINCH asks for a redraw at the new size.
#pragma once

#include <termios.h>

#include <chrono>
#include <string>

namespace kern::cli {

class TerminalScreen {
 public:
  // Takes the terminal of `in` (keys) and `out` (the screen): keys one at a time without echo,
  // the alternate screen, no cursor. Installs the signal handlers.
  TerminalScreen(int in, int out);
  ~TerminalScreen();
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;

  // Draws `lines` (newline-separated) from the top left, each cut to the width and the whole
  // to the height of the terminal; the rest of the screen is erased.
  void draw(const std::string& lines);

  enum class Wake { elapsed, quit, resized };
  // Waits up to `d` for a key or a signal: quit on `q`, `Q`, Ctrl-C or a terminating signal;
  // resized on SIGWINCH; elapsed when the time is up.
  Wake wait(std::chrono::milliseconds d);

  // The terminating signal that ended the view, 0 when none did (`q`, Ctrl-C count as none).
  int signal() const;

 private:
  int in_, out_;
  bool have_termios_ = false;
  struct termios saved_ {};
  struct sigaction old_[4] {};
};

}  // namespace kern::cli
