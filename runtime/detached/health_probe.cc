// Health probes run by a detached box's supervisor; see health_probe.h.
#include "runtime/detached/health_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "runtime/box_timeout.h"
#include "runtime/timing.h"

namespace kern {

HealthProbe::HealthProbe(HealthConfig config, std::string box_name, std::string kern_exe)
    : config_(std::move(config)), name_(std::move(box_name)), exe_(std::move(kern_exe)) {
  timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
}

HealthProbe::~HealthProbe() { box_gone(); }

void HealthProbe::box_started() {
  state_ = HealthState{};
  box_start_ns_ = monotonic_ns();
  running_box_ = true;
  if (timer_) arm_timer(timer_.get(), config_.interval_ms);
}

void HealthProbe::box_gone() {
  running_box_ = false;
  if (timer_) arm_timer(timer_.get(), 0);
  if (probe_ > 0) {
    ::kill(probe_, SIGKILL);
    while (::waitpid(probe_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  probe_ = -1;
  probe_pidfd_.reset();
  probe_out_.reset();
}

std::vector<int> HealthProbe::fds() const {
  return {timer_ ? timer_.get() : -1, probe_out_ ? probe_out_.get() : -1, probe_pidfd_ ? probe_pidfd_.get() : -1};
}

void HealthProbe::start_probe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;
  UniqueFd r(p[0]), w(p[1]);
  std::vector<std::string> words = {"kern", "exec", name_, "--"};
  words.insert(words.end(), config_.test.begin(), config_.test.end());
  std::vector<char*> argv;
  for (auto& s : words) argv.push_back(s.data());
  argv.push_back(nullptr);
  probe_start_unix_ = ::time(nullptr);
  output_.clear();
  pid_t pid = ::fork();
  if (pid < 0) return;
  if (pid == 0) {
    // The supervisor blocks the signals it forwards; the probe (kern exec) must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::dup2(null, STDIN_FILENO);
    ::dup2(w.get(), STDOUT_FILENO);
    ::dup2(w.get(), STDERR_FILENO);
    ::execv(exe_.c_str(), argv.data());
    _exit(127);
  }
  probe_ = pid;
  probe_pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  ::fcntl(r.get(), F_SETFL, O_NONBLOCK);
  probe_out_ = std::move(r);
  if (timer_) arm_timer(timer_.get(), config_.timeout_ms);
}

void HealthProbe::drain_output() {
  if (!probe_out_) return;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(probe_out_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) probe_out_.reset();
      return;
    }
    if (output_.size() < kHealthOutputMax) output_.append(buf, static_cast<size_t>(n));
  }
}

bool HealthProbe::finish_probe(bool timed_out) {
  if (timed_out) ::kill(probe_, SIGKILL);
  int status = 0;
  while (::waitpid(probe_, &status, 0) < 0 && errno == EINTR) {
  }
  drain_output();
  probe_ = -1;
  probe_pidfd_.reset();
  probe_out_.reset();
  HealthResult r;
  r.start_unix = probe_start_unix_;
  r.exit_code = timed_out ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.output = output_;
  bool changed = record_probe(state_, config_, std::move(r), (monotonic_ns() - box_start_ns_) / 1000000);
  if (running_box_ && timer_) arm_timer(timer_.get(), config_.interval_ms);
  return changed;
}

bool HealthProbe::on_ready() {
  if (!running_box_) return false;
  struct pollfd q[3];
  std::vector<int> f = fds();
  for (int i = 0; i < 3; ++i) q[i] = {f[static_cast<size_t>(i)], POLLIN, 0};
  if (::poll(q, 3, 0) <= 0) return false;
  if (q[1].revents) drain_output();
  if (q[2].revents) return finish_probe(false);
  if (q[0].revents) {
    uint64_t ticks;
    (void)!::read(timer_.get(), &ticks, sizeof ticks);
    if (probe_ > 0) return finish_probe(true);
    start_probe();
  }
  return false;
}

}  // namespace kern
