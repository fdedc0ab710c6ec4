// CLI11 for the files of cli/: <CLI/CLI.hpp> without what <iostream> costs at every start.
//
// libstdc++ 12 gives every translation unit that includes <iostream> a static std::ios_base::Init
// object, and the first of them builds the eight standard streams before main (some 65 us of each
// start of kern on the 2-core development VM, measured against the same program without it).
// CLI11 includes <iostream> only to name std::cout and std::cerr, which it writes to from
// App::exit() (help, version and its own parse errors) and from its warnings about deprecated
// options (kern has none). So <iostream> is kept out here, the two streams are declared as
// <iostream> declares them, and whatever lets CLI11 print first calls standard_streams(), which
// constructs a std::ios_base::Init: the standard's own way to have the streams built when asked.
// With a standard library whose <iostream> has another guard, CLI11's include of it is a normal
// one and nothing changes but the start-up cost.
#pragma once

#include <istream>
#include <ostream>

#ifndef _GLIBCXX_IOSTREAM
#define _GLIBCXX_IOSTREAM 1
namespace std {
extern istream cin;
extern ostream cout;
extern ostream cerr;
extern ostream clog;
}  // namespace std
#endif

#include <CLI/CLI.hpp>

namespace kern::cli {

// Builds std::cin, std::cout, std::cerr and std::clog if nothing has yet; call it before any
// code that may write to them (CLI11's App::exit()).
inline void standard_streams() { static const std::ios_base::Init streams; }

}  // namespace kern::cli
