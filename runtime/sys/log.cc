// kern's stderr lines; see log.h for the contract they follow.
#include "runtime/sys/log.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "runtime/sys/fdio.h"

namespace kern::log {
namespace {

int quiet_state = -1;  // -1: not decided yet, read KERN_QUIET on first use
int output_fd = STDERR_FILENO;

// The start of `text` cut at `max` bytes or less, never inside a UTF-8 sequence.
std::string_view cut(std::string_view text, size_t max) {
  if (text.size() <= max) return text;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xc0) == 0x80) --n;
  return text.substr(0, n);
}

// A line past this many bytes holds a value that was not quoted (quoted() bounds those): its
// start and end are kept, which hold what failed and the errno.
constexpr size_t kLineBytes = 4096;

void line(std::string_view prefix, std::string_view message) {
  std::string out;
  out.reserve(prefix.size() + message.size() + 8);
  out += "kern: ";
  out += prefix;
  std::string text = sanitize(message);
  if (text.size() > kLineBytes) {
    std::string_view tail = std::string_view(text).substr(text.size() - 1024);
    while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xc0) == 0x80) tail.remove_prefix(1);
    text = std::string(cut(text, kLineBytes - 1024)) + "... (" + std::to_string(text.size()) + " bytes) ..." +
           std::string(tail);
  }
  out += text;
  out += '\n';
  (void)sys::write_all_raw(output_fd, out.data(), out.size());
}

}  // namespace

void set_output_fd(int fd) { output_fd = fd; }

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
void warning_unsilenced(std::string_view message) { line("warning: ", message); }
void note(std::string_view message) {
  if (!quiet()) line("note: ", message);
}

void error(const Error& e) {
  error(e.what());
  std::string h = e.hint();
  if (!h.empty()) hint(h);
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0 when the byte there does not start one.
size_t utf8_length(std::string_view text, size_t i, uint32_t* cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = b(i);
  size_t n;
  uint32_t v, min;
  if (c >= 0xc2 && c <= 0xdf) n = 2, v = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, v = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

void escape_byte(std::string& out, unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

}  // namespace

std::string quoted(std::string_view text) {
  if (text.size() <= kQuotedBytes) return "\"" + sanitize(text) + "\"";
  return "\"" + sanitize(cut(text, kQuotedBytes)) + "...\" (" + std::to_string(text.size()) + " bytes)";
}

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    if (static_cast<unsigned char>(text[i]) < 0x80) ++i;
    else if (size_t n = utf8_length(text, i, &cp)) i += n;
    else return false;
  }
  return true;
}

std::string sanitize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      // C0 controls and DEL; a tab cannot move the cursor anywhere harmful and stays.
      if ((c < 0x20 && c != '\t') || c == 0x7f) escape_byte(out, c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t n = utf8_length(text, i, &cp);
    if (n == 0) {
      // Not UTF-8: a lone 0x9b is CSI on terminals that read 8-bit controls.
      escape_byte(out, c);
      ++i;
      continue;
    }
    // C1 controls (U+0080..U+009F) written as UTF-8 are escaped byte by byte too.
    if (cp <= 0x9f) {
      for (size_t k = 0; k < n; ++k) escape_byte(out, static_cast<unsigned char>(text[i + k]));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string sanitize_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i <= text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string_view::npos) {
      out += sanitize(text.substr(i));
      break;
    }
    out += sanitize(text.substr(i, e - i));
    out += '\n';
    i = e + 1;
  }
  return out;
}

}  // namespace kern::log
