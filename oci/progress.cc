// The progress observer and the stderr display; see progress.h.
#include "oci/progress.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <vector>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::oci::progress {
namespace {

Observer* g_current = nullptr;

double now() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string short_id(const std::string& id) {
  size_t colon = id.find(':');
  return colon == std::string::npos ? id.substr(0, 12) : id.substr(0, colon + 1 + 12);
}

std::string past(std::string_view phase) {
  if (phase == "downloading") return "downloaded";
  if (phase == "unpacking") return "unpacked";
  if (phase == "writing") return "written";
  if (phase == "uploading") return "uploaded";
  if (phase == "mounting") return "mounted";
  if (phase == "exists") return "Layer already exists";
  return std::string(phase) + " done";
}

class Display final : public Observer {
 public:
  explicit Display(bool tty) : tty_(tty) {}
  ~Display() override {
    std::lock_guard<std::mutex> l(mu_);
    if (tty_) redraw(true);
  }

  void start(const std::string& id, std::string_view phase, int64_t total, bool last) override {
    std::lock_guard<std::mutex> l(mu_);
    Line* line = find(id);
    if (line == nullptr) {
      lines_.push_back(Line{id});
      line = &lines_.back();
      line->first_t0 = now();
    } else if (line->finished) {
      line->earlier += past(line->phase) + ", ";
    }
    line->phase = std::string(phase);
    line->total = total;
    line->done = 0;
    line->last = last;
    line->finished = false;
    line->t0 = now();
    if (tty_) redraw(true);
  }

  void update(const std::string& id, int64_t done) override {
    std::lock_guard<std::mutex> l(mu_);
    Line* line = find(id);
    if (line == nullptr) return;
    line->done = done;
    if (tty_) redraw(false);
  }

  void finish(const std::string& id) override {
    std::lock_guard<std::mutex> l(mu_);
    Line* line = find(id);
    if (line == nullptr || line->finished) return;
    line->finished = true;
    line->t1 = now();
    if (line->total >= 0 && line->done < line->total) line->done = line->total;
    if (tty_) {
      redraw(true);
    } else if (line->last) {
      write(format_line(line->id, line->earlier + past(line->phase), line->done, line->total,
                        line->t1 - line->first_t0, true) +
            "\n");
    }
  }

  void source(const std::string& text) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!tty_) {
      write(log::sanitize(text) + "\n");
      return;
    }
    Line line{""};
    line.text = log::sanitize(text);
    lines_.push_back(std::move(line));
    redraw(true);
  }

 private:
  struct Line {
    std::string id;
    std::string phase;
    int64_t done = 0, total = -1;
    bool last = false, finished = false;
    double t0 = 0, t1 = 0;
    double first_t0 = 0;   // when the layer's first phase started
    std::string earlier;   // "downloaded, " once an earlier phase finished
    std::string text;  // a fixed line (source()), when set
  };

  Line* find(const std::string& id) {
    for (auto& l : lines_)
      if (l.text.empty() && l.id == id) return &l;
    return nullptr;
  }

  static void write(const std::string& s) { (void)sys::write_all(STDERR_FILENO, s, "stderr"); }

  // Moves up over the lines drawn last time and draws every line again, each cleared to its
  // end; at most ten times a second unless `force`.
  void redraw(bool force) {
    double t = now();
    if (!force && t - last_draw_ < 0.1) return;
    last_draw_ = t;
    std::string out;
    if (drawn_ > 0) out += "\x1b[" + std::to_string(drawn_) + "A";
    for (const auto& l : lines_) {
      out += "\r";
      if (!l.text.empty()) out += l.text;
      else if (l.finished) out += format_line(l.id, l.earlier + past(l.phase), l.done, l.total, l.t1 - l.first_t0, true);
      else out += format_line(l.id, l.phase, l.done, l.total, t - l.t0, false);
      out += "\x1b[K\n";
    }
    drawn_ = lines_.size();
    write(out);
  }

  bool tty_;
  std::mutex mu_;
  std::vector<Line> lines_;
  size_t drawn_ = 0;
  double last_draw_ = 0;
};

}  // namespace

Observer* current() { return g_current; }

Scope::Scope(Observer* o) : previous_(g_current) { g_current = o; }
Scope::~Scope() { g_current = previous_; }

std::unique_ptr<Observer> stderr_display(Mode mode) {
  if (mode == Mode::none) return nullptr;
  bool tty = ::isatty(STDERR_FILENO);
  if (!tty && mode == Mode::terminal_only) return nullptr;
  return std::make_unique<Display>(tty);
}

std::string format_bytes(int64_t n) {
  char buf[32];
  if (n < 1024) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(n));
  else if (n < (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", n / 1024.0);
  else if (n < (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", n / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", n / 1073741824.0);
  return buf;
}

std::string format_line(const std::string& id, std::string_view phase, int64_t done, int64_t total,
                        double seconds, bool finished) {
  std::string rate = seconds > 0 && done > 0 ? format_bytes(static_cast<int64_t>(done / seconds)) + "/s" : std::string("-");
  std::string out = short_id(id) + "  ";
  if (finished) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f s", seconds);
    return out + std::string(phase) + "  " + format_bytes(done) + " in " + t + " (" + rate + ")";
  }
  out += std::string(phase) + "  " + format_bytes(done);
  if (total >= 0) out += " / " + format_bytes(total);
  return out + "  " + rate;
}

}  // namespace kern::oci::progress
