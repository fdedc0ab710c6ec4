// kern's stderr lines; see log.h for the contract they follow.
#include "runtime/sys/log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "runtime/sys/fdio.h"

namespace kern::log {
namespace {

int quiet_state = -1;  // -1: not decided yet, read KERN_QUIET on first use

void line(std::string_view prefix, std::string_view message) {
  std::string out;
  out.reserve(prefix.size() + message.size() + 8);
  out += "kern: ";
  out += prefix;
  out += sanitize(message);
  out += '\n';
  (void)sys::write_all_raw(STDERR_FILENO, out.data(), out.size());
}

}  // namespace

bool quiet() {
  if (quiet_state < 0) {
    const char* v = std::getenv("KERN_QUIET");
    quiet_state = (v != nullptr && *v != '\0') ? 1 : 0;
  }
  return quiet_state == 1;
}

void set_quiet(bool q) { quiet_state = q ? 1 : 0; }

void error(std::string_view message) { line("error: ", message); }
void hint(std::string_view message) { line("hint: ", message); }
void warning(std::string_view message) {
  if (!quiet()) line("warning: ", message);
}
void note(std::string_view message) {
  if (!quiet()) line("note: ", message);
}

void error(const Error& e) {
  error(e.what());
  std::string h = e.hint();
  if (!h.empty()) hint(h);
}

std::string sanitize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace kern::log
