// `kern logs [-f] [--tail N] [--timestamps] NAME`: a detached box's output from its log ring,
// stdout to stdout and stderr to stderr; -f then follows it live until the box exits.
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/detached/box_log.h"
#include "runtime/detached/wire.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace logs_verb {

std::string g_name;
bool g_follow = false, g_stamps = false;
long g_tail = -1;

struct Printer {
  bool line_start[3] = {true, true, true};
  Status print(LogStream stream, uint64_t time_ns, const std::string& data) {
    int fd = stream == LogStream::err ? STDERR_FILENO : STDOUT_FILENO;
    if (!g_stamps) return sys::write_all(fd, data, "output");
    int i = static_cast<int>(stream);
    return sys::write_all(fd, stamp_lines(data, rfc3339_ns(time_ns), &line_start[i]), "output");
  }
};

// Where a follower stands: every record below `seq` is printed, and `offset` bytes of output.
// Before the first read (`started` false) what the ring no longer holds is not a loss: the
// ring keeps the newest --log-size bytes by design.
struct Position {
  uint64_t seq = 0;
  uint64_t offset = 0;
  bool started = false;
};

// Prints the ring's records with pos.seq <= seq < below (the last --tail lines of them) and
// moves `pos` to `below`. What fell out of the ring before it was read is said on stderr: the
// output shows a gap there.
Status print_ring(const std::string& path, Position& pos, uint64_t below, long tail, Printer& out) {
  KERN_TRY_ASSIGN(std::vector<LogRecord> recs, read_log(path));
  LogResume r = resume_log(std::move(recs), pos.seq, pos.offset, below);
  if (pos.started && r.lost_bytes > 0)
    log::warning(std::to_string(r.lost_bytes) + " bytes of the log were overwritten before they were read");
  for (const auto& rec : tail_lines(std::move(r.records), tail)) KERN_TRY(out.print(rec.stream, rec.time_ns, rec.data));
  pos.seq = below;
  pos.offset = r.below_offset;
  pos.started = true;
  return {};
}

// -f on a running box: the ring up to the moment the supervisor added us, then the live
// output. A follower that fell behind is let go by the supervisor: it asks again and takes
// what it missed from the ring. Returns once the box has exited.
Status follow(const std::string& rt, const std::string& path, Printer& out) {
  Position pos;
  long tail = g_tail;
  for (;;) {
    auto fd = ask_box(rt, g_name, "follow");
    if (!fd) break;  // the box has ended: its ring is complete
    std::string buf;
    KERN_TRY_ASSIGN(std::optional<WireFrame> sync, read_frame(fd->get(), buf));
    if (!sync || sync->type != WireType::sync) break;
    KERN_TRY(print_ring(path, pos, sync->seq, tail, out));
    tail = -1;
    for (;;) {
      KERN_TRY_ASSIGN(std::optional<WireFrame> f, read_frame(fd->get(), buf));
      if (!f) break;
      if (f->type == WireType::exit) return {};
      if (f->type != WireType::out && f->type != WireType::err) continue;
      KERN_TRY(out.print(f->type == WireType::err ? LogStream::err : LogStream::out, f->time_ns, f->payload));
      pos.seq = f->seq;
      pos.offset += f->payload.size();
    }
  }
  return print_ring(path, pos, UINT64_MAX, tail, out);
}

Result<int> run_logs() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_name));
  if (!rec.detached)
    return fail(Error(ErrorKind::config, 0, "the box \"" + g_name + "\" runs in the foreground: it has no log")
                    .with_hint("its output goes to the terminal that started it; kern box -d keeps a log"));
  std::string path = detached_log_path(rt, g_name);
  Printer out;
  // A reader that closes the pipe (`kern logs -f NAME | head`) ends the command quietly, as
  // the end of its output: EPIPE instead of a SIGPIPE death.
  ::signal(SIGPIPE, SIG_IGN);
  Position start;
  Status done = g_follow && !record_exited(rec) ? follow(rt, path, out)
                                                : print_ring(path, start, UINT64_MAX, g_tail, out);
  if (!done && done.error().sys_errno() == EPIPE) return 0;
  if (!done) return fail(std::move(done).error());
  return 0;
}

void register_logs(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("logs", "print a detached box's output");
  c->add_option("name", g_name, "box name")->required();
  c->add_flag("-f,--follow", g_follow, "keep printing until the box exits");
  c->add_option("-n,--tail", g_tail, "only the last N lines");
  c->add_flag("-t,--timestamps", g_stamps, "prefix each line with its time (RFC 3339, UTC)");
  c->callback([&ctx] { ctx.action = run_logs; });
}

const VerbRegistration reg{23, "logs", &register_logs};

}  // namespace logs_verb
}  // namespace
}  // namespace kern::cli
