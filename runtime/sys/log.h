// kern's own lines on stderr. Any process before clone; the child reports through the channel.
//
// The contract (kern-box(1)): a fatal line starts "kern: error: ", may be followed by one
// "kern: hint: " line; non-fatal lines start "kern: warning: " or "kern: note: " and are
// silenced by KERN_QUIET. Nothing of kern's ever goes to stdout. Text that came from a file or
// the command line is passed through sanitize() so that terminal escape sequences in it are
// never written to the user's terminal.
#pragma once

#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::log {

void error(std::string_view message);
void hint(std::string_view message);
void warning(std::string_view message);
void note(std::string_view message);
// A "kern: warning: " line that KERN_QUIET and -q do not silence: for a box that runs with less
// protection than kern's default (KERN_SECCOMP=denylist or allowlist-audit), which must never
// start without a word.
void warning_unsilenced(std::string_view message);
// Prints an Error as "kern: error: ..." plus its hint.
void error(const Error& e);

// Whether notes and warnings are silenced (KERN_QUIET set, or set_quiet(true)).
bool quiet();
void set_quiet(bool q);
// Where kern's lines go (default stderr): a detached box's supervisor keeps them on the
// caller's stderr while the box is cloned with its own stderr in that slot.
void set_output_fd(int fd);

// The one escaping of untrusted text for kern's output: every byte of a C0 control but tab
// (ESC, CR, BEL, ...), DEL, a C1 control (U+0080..U+009F, e.g. U+009B, CSI) and every byte that
// is not part of well-formed UTF-8 becomes "\xNN", so such text cannot drive the terminal.
// Printable UTF-8 passes unchanged; the result is itself printable, so escaping twice changes
// nothing.
std::string sanitize(std::string_view text);
// sanitize() for multi-line output (--show-config, --plan): each line escaped, the '\n' kept.
std::string sanitize_lines(std::string_view text);
// sanitize(text) between double quotes, as kern's messages name a value the user gave. A value
// longer than kQuotedBytes is cut there (at a character boundary) and marked with an ellipsis and
// its length: `"aaaa..." (131072 bytes)`, so that a 128 KiB argument is not echoed back whole.
inline constexpr size_t kQuotedBytes = 200;
std::string quoted(std::string_view text);
// Whether `text` is well-formed UTF-8 (RFC 3629), as JSON strings must be.
bool valid_utf8(std::string_view text);

}  // namespace kern::log
