// The compiled-seccomp cache; see seccomp_cache.h.
#include "runtime/bundle/seccomp_cache.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "runtime/sys/fdio.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {
namespace {

constexpr std::string_view kMagic = "kern seccomp cache 1\n";
// The kernel's limit, plus the ENOSYS rule compile_seccomp may put in front.
constexpr uint64_t kMaxInsns = BPF_MAXINSNS + 8;

void put_field(std::string& out, std::string_view v) {
  out += std::to_string(v.size());
  out += ':';
  out += v;
  out += ';';
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

bool get_u64(std::string_view& in, uint64_t* v) {
  if (in.size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(8);
  return true;
}

// FNV-1a: only names the file; the entry itself is compared in full.
std::string file_name(std::string_view key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* hex = "0123456789abcdef";
  std::string name(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) name[static_cast<size_t>(i)] = hex[h & 0xf];
  return name;
}

// This kern's identity: a new binary (an upgrade, a rebuild) never reuses an older one's program.
Result<std::string> self_identity() {
  struct stat st;
  if (::stat("/proc/self/exe", &st) != 0) return fail_errno("stat /proc/self/exe");
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

std::string encode(std::string_view key, const CompiledSeccomp& c) {
  std::string out(kMagic);
  put_u64(out, key.size());
  out += key;
  out += static_cast<char>((c.log ? 1 : 0) | (c.spec_allow ? 2 : 0) | (c.notify ? 4 : 0));
  put_u64(out, c.program.size());
  for (const auto& f : c.program) {
    char b[sizeof f];
    std::memcpy(b, &f, sizeof f);
    out.append(b, sizeof b);
  }
  return out;
}

std::optional<CompiledSeccomp> decode(std::string_view in, std::string_view key) {
  if (in.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  in.remove_prefix(kMagic.size());
  uint64_t n = 0;
  if (!get_u64(in, &n) || n != key.size() || in.substr(0, n) != key) return std::nullopt;
  in.remove_prefix(n);
  if (in.empty()) return std::nullopt;
  auto flags = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  uint64_t insns = 0;
  if (flags > 7 || !get_u64(in, &insns) || insns == 0 || insns > kMaxInsns ||
      in.size() != insns * sizeof(struct sock_filter))
    return std::nullopt;
  CompiledSeccomp c;
  c.log = flags & 1;
  c.spec_allow = flags & 2;
  c.notify = flags & 4;
  c.program.resize(insns);
  std::memcpy(c.program.data(), in.data(), in.size());
  return c;
}

// The cache directory, opened: made 0700 when missing; refused unless it is a directory of ours
// that nobody else can write to.
std::optional<UniqueFd> open_cache_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return std::nullopt;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  UniqueFd d(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) return std::nullopt;
  return d;
}

std::optional<CompiledSeccomp> read_entry(int dirfd, const std::string& name, std::string_view key) {
  int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  UniqueFd f(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0 ||
      static_cast<uint64_t>(st.st_size) > key.size() + kMaxInsns * sizeof(struct sock_filter) + 64)
    return std::nullopt;
  auto text = sys::read_all(fd, static_cast<size_t>(st.st_size) + 1, name);
  if (!text) return std::nullopt;
  return decode(*text, key);
}

void write_entry(int dirfd, const std::string& name, std::string_view data) {
  std::string tmp = name + ".tmp-" + std::to_string(::getpid());
  int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  UniqueFd f(fd);
  bool ok = sys::write_all_raw(fd, data.data(), data.size()) == 0 && ::fsync(fd) == 0;
  f.reset();
  if (!ok || ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) ::unlinkat(dirfd, tmp.c_str(), 0);
}

}  // namespace

std::string seccomp_profile_text(const Seccomp& s) {
  std::string out;
  put_field(out, s.default_action);
  put_field(out, s.default_errno_ret ? std::to_string(*s.default_errno_ret) : "-");
  put_field(out, std::to_string(s.architectures.size()));
  for (const auto& a : s.architectures) put_field(out, a);
  put_field(out, std::to_string(s.flags.size()));
  for (const auto& f : s.flags) put_field(out, f);
  put_field(out, std::to_string(s.syscalls.size()));
  for (const auto& r : s.syscalls) {
    put_field(out, r.action);
    put_field(out, r.errno_ret ? std::to_string(*r.errno_ret) : "-");
    put_field(out, std::to_string(r.names.size()));
    for (const auto& n : r.names) put_field(out, n);
    put_field(out, std::to_string(r.args.size()));
    for (const auto& a : r.args) {
      put_field(out, std::to_string(a.index));
      put_field(out, std::to_string(a.value));
      put_field(out, std::to_string(a.value_two));
      put_field(out, a.op);
    }
  }
  return out;
}

std::string seccomp_cache_dir(const std::string& state_root) {
  // '@' is not allowed in a container id: the directory is never taken for a container's.
  return state_root + "/@seccomp-cache";
}

Result<CompiledSeccomp> compile_seccomp_cached(const Seccomp& s, const std::string& cache_dir, bool* hit) {
  if (hit) *hit = false;
  if (cache_dir.empty()) return compile_seccomp(s);
  auto self = self_identity();
  auto lib = seccomp_library_identity();
  if (!self || !lib) return compile_seccomp(s);
  std::string key = "kern " + *self + "\nlibseccomp " + *lib + "\n" + seccomp_profile_text(s);
  std::string name = file_name(key);
  auto dir = open_cache_dir(cache_dir);
  if (dir) {
    if (auto c = read_entry(dir->get(), name, key)) {
      if (hit) *hit = true;
      return std::move(*c);
    }
  }
  KERN_TRY_ASSIGN(CompiledSeccomp c, compile_seccomp(s));
  if (dir) write_entry(dir->get(), name, encode(key, c));
  return c;
}

}  // namespace kern::bundle
