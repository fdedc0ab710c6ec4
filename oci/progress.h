// Progress of pull, push, load and save, per layer: the code that moves bytes tells an observer; the
// verb installs one for its duration (Scope) and decides how it looks. A process-wide observer
// rather than a parameter, so the importer, the layer pipe and the exporter each need one call
// where the bytes move and no new signature. Observers are called from the layer pipe's
// producer thread too, so they lock. Any process, before clone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kern::oci::progress {

class Observer {
 public:
  virtual ~Observer() = default;
  // A layer (`id`, a digest) starts a phase ("downloading", "unpacking", "writing", "uploading",
  // "mounting", "exists": the registry has it already) of `total` bytes (-1: unknown). `last`
  // marks the phase that finishes the layer.
  virtual void start(const std::string& id, std::string_view phase, int64_t total, bool last) = 0;
  virtual void update(const std::string& id, int64_t done) = 0;
  virtual void finish(const std::string& id) = 0;
  // One line about where the bytes come from ("from mirror X"); shown with the layers.
  virtual void source(const std::string& text) = 0;
};

// The installed observer, or null.
Observer* current();

class Scope {
 public:
  explicit Scope(Observer* o);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Observer* previous_;
};

enum class Mode {
  none,           // -q
  terminal_only,  // a terminal stderr gets the live lines; otherwise nothing (kern box's pull)
  lines,          // a terminal gets live lines; otherwise one line per layer when it is done
};

// The stderr display: on a terminal one line per layer (phase, bytes done / total, rate),
// redrawn in place with ANSI cursor movement; otherwise, in Mode::lines, one plain line per
// layer as it completes. Null for Mode::none, or terminal_only without a terminal.
std::unique_ptr<Observer> stderr_display(Mode mode);

// The text of one layer's line (pure, for tests): in flight "sha256:0123456789ab  downloading
// 1.5 MiB / 4.0 MiB  2.0 MiB/s"; finished (`phase` then says what was done, "downloaded,
// unpacked") "sha256:0123456789ab  downloaded, unpacked  4.0 MiB in 2.0 s (2.0 MiB/s)".
std::string format_line(const std::string& id, std::string_view phase, int64_t done, int64_t total,
                        double seconds, bool finished);

// "512 B", "1.5 KiB", "3.2 MiB", "1.1 GiB".
std::string format_bytes(int64_t n);

}  // namespace kern::oci::progress
