// `kern attach NAME`: connects the caller's stdio to a running detached box: its output (live;
// `kern logs` has the past), and the caller's input to the box's stdin (-i) or terminal (-it).
// Ctrl-P Ctrl-Q detaches and leaves the box running; the box's exit ends attach with its code.
#include <poll.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/detached/wire.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace attach_verb {

std::string g_name;
constexpr char kDetach1 = 0x10, kDetach2 = 0x11;  // ctrl-p ctrl-q, as Docker's default

class RawInput {
 public:
  RawInput() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    struct termios raw = saved_;
    ::cfmakeraw(&raw);
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawInput() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  struct termios saved_ {};
  bool active_ = false;
};

// Forwards input, holding back a ctrl-p until the next byte says whether it detaches.
struct DetachScanner {
  bool held = false;
  // Returns what to send; sets *detach when the sequence is complete.
  std::string feed(const char* data, size_t n, bool* detach) {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      char c = data[i];
      if (held) {
        held = false;
        if (c == kDetach2) {
          *detach = true;
          return out;
        }
        out += kDetach1;
      }
      if (c == kDetach1) held = true;
      else out += c;
    }
    return out;
  }
};

// The supervisor closed the connection without the exit frame: either it let this client go
// because its output was not read fast enough (the socket's buffer stayed full), or it died.
Error lost_connection(const std::string& rt) {
  auto rec = find_box(rt, g_name);
  if (rec && !record_exited(*rec) && connect_box(rt, g_name))
    return Error(ErrorKind::config, 0,
                 "the box \"" + g_name + "\" still runs, but this attach was let go: its output came faster than it was read")
        .with_hint("kern logs " + g_name + " has the output; kern attach " + g_name + " connects again");
  if (rec && record_exited(*rec))
    return Error(ErrorKind::config, 0,
                 "the box \"" + g_name + "\" exited (code " + std::to_string(rec->exit_code) +
                     ") after this attach was let go for reading its output too slowly");
  return Error(ErrorKind::config, 0, "the supervisor of box \"" + g_name + "\" ended without the box's exit code");
}

Result<int> run_attach() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_name));
  if (!rec.detached || record_exited(rec))
    return fail(ErrorKind::config, 0, "the box \"" + g_name + "\" is not a running detached box");
  KERN_TRY_ASSIGN(UniqueFd sock, ask_box(rt, g_name, "attach"));
  std::string buf;
  KERN_TRY_ASSIGN(std::optional<WireFrame> sync, read_frame(sock.get(), buf));
  if (!sync || sync->type != WireType::sync)
    return fail(ErrorKind::config, 0, "the box \"" + g_name + "\" ended before attach");
  RawInput raw;
  DetachScanner scan;
  bool stdin_open = true;
  for (;;) {
    // Frames already buffered first.
    for (;;) {
      KERN_TRY_ASSIGN(std::optional<WireFrame> f, take_frame(buf));
      if (!f) break;
      if (f->type == WireType::exit) return std::stoi(f->payload);
      if (f->type == WireType::out) KERN_TRY(sys::write_all(STDOUT_FILENO, f->payload, "stdout"));
      if (f->type == WireType::err) KERN_TRY(sys::write_all(STDERR_FILENO, f->payload, "stderr"));
    }
    struct pollfd p[2] = {{sock.get(), POLLIN, 0}, {stdin_open ? STDIN_FILENO : -1, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll");
    }
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      char in[4096];
      ssize_t n = ::read(STDIN_FILENO, in, sizeof in);
      if (n <= 0) {
        stdin_open = false;
      } else {
        bool detach = false;
        std::string out = scan.feed(in, static_cast<size_t>(n), &detach);
        if (!out.empty()) (void)sys::send_all_raw(sock.get(), out.data(), out.size());
        if (detach) return 0;
      }
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char tmp[65536];
      ssize_t n = ::read(sock.get(), tmp, sizeof tmp);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(lost_connection(rt));
      buf.append(tmp, static_cast<size_t>(n));
    }
  }
}

void register_attach(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("attach", "connect to a running detached box (detach: ctrl-p ctrl-q)");
  c->add_option("name", g_name, "box name")->required();
  c->callback([&ctx] { ctx.action = run_attach; });
}

const VerbRegistration reg{24, "attach", &register_attach};

}  // namespace attach_verb
}  // namespace
}  // namespace kern::cli
