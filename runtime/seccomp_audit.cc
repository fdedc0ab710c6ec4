// allowlist-audit's listener; see seccomp_audit.h. Launcher side (its own thread).
#include "runtime/seccomp_audit.h"

#include <linux/seccomp.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/seccomp_filter.h"
#include "runtime/sys/fdio.h"

namespace kern {
namespace {

std::string command_from_proc(pid_t pid) {
  auto text = sys::read_file(AT_FDCWD, "/proc/" + std::to_string(pid) + "/comm", 256);
  if (!text) return "";
  std::string s = *text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

void AuditTally::record(long nr, pid_t pid, const std::function<std::string(pid_t)>& command_of) {
  auto it = index_.find(nr);
  if (it != index_.end()) {
    ++calls_[it->second].count;
    return;
  }
  AuditedCall c;
  c.nr = nr;
  const char* n = syscall_name(nr);
  c.name = n != nullptr ? n : "syscall_" + std::to_string(nr);
  c.count = 1;
  c.first_pid = pid;
  c.first_command = command_of ? command_of(pid) : "";
  index_[nr] = calls_.size();
  calls_.push_back(std::move(c));
}

std::vector<AuditedCall> AuditTally::calls() const { return calls_; }

std::string audit_record(const std::string& box_name, const AuditedCall& c) {
  nlohmann::json j = {
      {"event", "seccomp_audit"},
      {"name", box_name},
      {"syscall", c.name},
      {"nr", c.nr},
      {"count", c.count},
      {"first_pid", c.first_pid},
      {"first_command", c.first_command},
  };
  // comm is the box's to choose: bytes that are not UTF-8 are replaced, never thrown on.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string audit_summary(const std::vector<AuditedCall>& calls) {
  if (calls.empty()) return "KERN_SECCOMP=allowlist-audit: no system call outside the allowlist was made";
  std::string s = "KERN_SECCOMP=allowlist-audit: " + std::to_string(calls.size()) +
                  (calls.size() == 1 ? " system call" : " system calls") +
                  " outside the allowlist ran (the allowlist would answer ENOSYS):";
  for (size_t i = 0; i < calls.size(); ++i) {
    const AuditedCall& c = calls[i];
    s += (i ? ", " : " ") + c.name + " x" + std::to_string(c.count);
    if (!c.first_command.empty()) s += " (first by " + c.first_command + ")";
  }
  return s;
}

Result<std::unique_ptr<SeccompAuditor>> SeccompAuditor::start(UniqueFd listener) {
  std::unique_ptr<SeccompAuditor> a(new SeccompAuditor());
  a->listener_ = std::move(listener);
  a->thread_ = std::thread([p = a.get()] { p->run(); });
  return a;
}

SeccompAuditor::~SeccompAuditor() {
  if (thread_.joinable()) (void)finish();
}

std::vector<AuditedCall> SeccompAuditor::finish() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  return tally_.calls();
}

void SeccompAuditor::run() {
  struct seccomp_notif_sizes sizes {};
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) return;
  // The kernel's structures may be larger than this header's; buffers of its size.
  std::vector<unsigned char> req_buf(std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)));
  std::vector<unsigned char> resp_buf(std::max<size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp)));
  auto* req = reinterpret_cast<seccomp_notif*>(req_buf.data());
  auto* resp = reinterpret_cast<seccomp_notif_resp*>(resp_buf.data());
  for (;;) {
    struct pollfd p {listener_.get(), POLLIN, 0};
    int n = ::poll(&p, 1, 50);
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) {
      if (stopping_) return;
      continue;
    }
    if (!(p.revents & POLLIN)) return;  // POLLHUP: no process of the box is under the filter
    std::memset(req_buf.data(), 0, req_buf.size());
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;  // ENOENT: the caller died meanwhile
      return;
    }
    tally_.record(req->data.nr, static_cast<pid_t>(req->pid), command_from_proc);
    std::memset(resp_buf.data(), 0, resp_buf.size());
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    // ENOENT: the caller was killed before the answer; nothing to do.
    (void)::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, resp);
  }
}

}  // namespace kern
