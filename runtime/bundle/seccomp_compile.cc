// compile_seccomp: config.json seccomp -> BPF through libseccomp (dlopen). Runs in the process
// that runs `kern oci create`, before clone.
#include "runtime/bundle/seccomp_compile.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <set>

#include "runtime/seccomp/programs.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

Result<uint32_t> seccomp_action_value(const std::string& action, const std::optional<uint32_t>& errno_ret,
                                      const std::string& path) {
  const uint32_t err = errno_ret.value_or(EPERM);
  if (action == "SCMP_ACT_ERRNO") return SCMP_ACT_ERRNO(err);
  if (action == "SCMP_ACT_TRACE") return SCMP_ACT_TRACE(err);
  if (errno_ret)
    return fail(ErrorKind::config, 0, path + ": an errno return is given but " + action + " takes none");
  if (action == "SCMP_ACT_KILL" || action == "SCMP_ACT_KILL_THREAD") return SCMP_ACT_KILL_THREAD;
  if (action == "SCMP_ACT_KILL_PROCESS") return SCMP_ACT_KILL_PROCESS;
  if (action == "SCMP_ACT_TRAP") return SCMP_ACT_TRAP;
  if (action == "SCMP_ACT_ALLOW") return SCMP_ACT_ALLOW;
  if (action == "SCMP_ACT_LOG") return SCMP_ACT_LOG;
  if (action == "SCMP_ACT_NOTIFY") return SCMP_ACT_NOTIFY;
  return fail(ErrorKind::config, 0, path + ": unknown action \"" + action + "\"");
}

namespace {

constexpr const char* kSoname = "libseccomp.so.2";

#define KERN_SECCOMP_FUNCTIONS(X)                  \
  X(init, seccomp_init)                            \
  X(release, seccomp_release)                      \
  X(arch_add, seccomp_arch_add)                    \
  X(arch_resolve_name, seccomp_arch_resolve_name)  \
  X(attr_set, seccomp_attr_set)                    \
  X(resolve_name, seccomp_syscall_resolve_name)    \
  X(rule_add_array, seccomp_rule_add_array)        \
  X(export_bpf, seccomp_export_bpf)

struct SeccompApi {
#define KERN_SECCOMP_FIELD(field, sym) decltype(&::sym) field = nullptr;
  KERN_SECCOMP_FUNCTIONS(KERN_SECCOMP_FIELD)
#undef KERN_SECCOMP_FIELD
  std::string file;  // the library's path as the dynamic loader found it
};

Result<SeccompApi> resolve() {
  void* h = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return fail(Error(ErrorKind::host_unsupported, 0, std::string("dlopen ") + kSoname + ": " + dlerror())
                    .with_hint("install the Debian package libseccomp2"));
  SeccompApi api;
#define KERN_SECCOMP_RESOLVE(field, sym)                                                       \
  api.field = reinterpret_cast<decltype(api.field)>(dlsym(h, #sym));                           \
  if (!api.field) return fail(ErrorKind::host_unsupported, 0, std::string(kSoname) + ": no symbol " #sym);
  KERN_SECCOMP_FUNCTIONS(KERN_SECCOMP_RESOLVE)
#undef KERN_SECCOMP_RESOLVE
  struct link_map* map = nullptr;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) api.file = map->l_name;
  return api;
}

Result<const SeccompApi*> seccomp_api() {
  static const Result<SeccompApi> loaded = resolve();
  if (!loaded) return fail(Error(loaded.error()));
  return &*loaded;
}

scmp_compare compare_op(const std::string& op) {
  if (op == "SCMP_CMP_NE") return SCMP_CMP_NE;
  if (op == "SCMP_CMP_LT") return SCMP_CMP_LT;
  if (op == "SCMP_CMP_LE") return SCMP_CMP_LE;
  if (op == "SCMP_CMP_EQ") return SCMP_CMP_EQ;
  if (op == "SCMP_CMP_GE") return SCMP_CMP_GE;
  if (op == "SCMP_CMP_GT") return SCMP_CMP_GT;
  return SCMP_CMP_MASKED_EQ;  // the parser admits no other name
}

struct Ctx {
  const SeccompApi* api;
  scmp_filter_ctx ctx;
  ~Ctx() {
    if (ctx) api->release(ctx);
  }
};

// libseccomp returns -errno.
Error lib_error(int rc, const std::string& what) { return Error(ErrorKind::setup, -rc, what); }

Status add_rule(const Ctx& c, uint32_t action, int nr, const SeccompRule& r, const std::string& path,
                const std::string& name) {
  std::vector<scmp_arg_cmp> conds;
  for (const auto& a : r.args)
    conds.push_back(scmp_arg_cmp{a.index, compare_op(a.op), a.value, a.value_two});
  std::set<unsigned> indexes;
  for (const auto& a : r.args) indexes.insert(a.index);
  auto add = [&](const scmp_arg_cmp* arr, unsigned n) -> Status {
    int rc = c.api->rule_add_array(c.ctx, action, nr, n, arr);
    if (rc < 0) return fail(lib_error(rc, path + ": seccomp_rule_add " + name));
    return {};
  };
  if (indexes.size() == conds.size()) return add(conds.data(), static_cast<unsigned>(conds.size()));
  for (const auto& cond : conds) KERN_TRY(add(&cond, 1));
  return {};
}

constexpr uint32_t kNativeArch = seccomp_programs::kTargetAuditArch;

// A system call of the native architecture whose number is above every number the
// configuration names answers ENOSYS rather than the default action: a program then falls back
// from a call newer than its profile (as C libraries do from clone3 to clone) instead of taking
// the default EPERM for a refusal. runc does the same. Put before libseccomp's program; any
// other architecture, the x32 numbers, and every number up to `last` go on to it unchanged.
void prepend_enosys_rule(std::vector<struct sock_filter>& prog, uint32_t last) {
  std::vector<struct sock_filter> stub;
  stub.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  size_t not_native = stub.size();
  stub.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 0, 0));
  stub.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
  size_t x32 = stub.size();
  stub.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 0));
#endif
  size_t known = stub.size();
  stub.push_back(BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, last, 0, 0));
  stub.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
  auto to_program = [&](size_t at) { return static_cast<uint8_t>(stub.size() - at - 1); };
  stub[not_native].jf = to_program(not_native);
#if defined(__x86_64__)
  stub[x32].jt = to_program(x32);
#endif
  stub[known].jf = to_program(known);
  prog.insert(prog.begin(), stub.begin(), stub.end());
}

Result<std::vector<struct sock_filter>> export_program(const Ctx& c) {
  UniqueFd fd(memfd_create("kern-seccomp", MFD_CLOEXEC));
  if (!fd) return fail_errno("memfd_create kern-seccomp");
  int rc = c.api->export_bpf(c.ctx, fd.get());
  if (rc < 0) return fail(lib_error(rc, "seccomp_export_bpf"));
  off_t size = lseek(fd.get(), 0, SEEK_END);
  if (size < 0) return fail_errno("lseek seccomp program");
  if (size % sizeof(struct sock_filter) != 0 || size / sizeof(struct sock_filter) > BPF_MAXINSNS)
    return fail(ErrorKind::setup, 0, "seccomp program: " + std::to_string(size) + " bytes is not a loadable program");
  std::vector<struct sock_filter> prog(size / sizeof(struct sock_filter));
  if (pread(fd.get(), prog.data(), size, 0) != size) return fail_errno("pread seccomp program");
  return prog;
}

}  // namespace

Result<CompiledSeccomp> compile_seccomp(const Seccomp& s) {
  const std::string base = "linux.seccomp";
  KERN_TRY_ASSIGN(uint32_t def, seccomp_action_value(s.default_action, s.default_errno_ret, base));
  // The workload makes calls of its own after it loads the filter (it hands the listener over
  // with sendmsg, closes it, goes on to execve): a default that sends every call to the agent,
  // or a notified sendmsg, would wait on an agent that has no listener yet.
  if (def == SCMP_ACT_NOTIFY)
    return fail(ErrorKind::config, 0, base + ".defaultAction: SCMP_ACT_NOTIFY is refused as the default action: "
                                             "kern's own calls before the execve would wait on the agent");
  CompiledSeccomp out;
  for (const auto& f : s.flags) {
    if (f == "SECCOMP_FILTER_FLAG_LOG") out.log = true;
    else if (f == "SECCOMP_FILTER_FLAG_SPEC_ALLOW") out.spec_allow = true;
    else if (f == "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")
      return fail(Error(ErrorKind::host_unsupported, 0, base + ".flags: " + f + " is not supported by kern"));
    // SECCOMP_FILTER_FLAG_TSYNC: the workload is single-threaded when the filter is loaded.
  }
  KERN_TRY_ASSIGN(const SeccompApi* api, seccomp_api());
  Ctx c{api, api->init(def)};
  if (!c.ctx) return fail(ErrorKind::setup, EINVAL, "seccomp_init");
  // kern sets no_new_privs itself, as process.noNewPrivileges says; libseccomp must not.
  int rc = api->attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (rc < 0) return fail(lib_error(rc, "seccomp_attr_set CTL_NNP"));
  bool native_listed = s.architectures.empty();
  for (size_t i = 0; i < s.architectures.size(); ++i) {
    std::string name = s.architectures[i].substr(10);  // "SCMP_ARCH_X86_64" -> "X86_64"
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    uint32_t arch = api->arch_resolve_name(name.c_str());
    std::string path = base + ".architectures[" + std::to_string(i) + "]";
    if (arch == 0) return fail(ErrorKind::config, 0, path + ": libseccomp does not know " + s.architectures[i]);
    if (arch == kNativeArch) native_listed = true;
    rc = api->arch_add(c.ctx, arch);
    if (rc < 0 && rc != -EEXIST) return fail(lib_error(rc, path + ": seccomp_arch_add"));
  }
  int last = -1;  // the highest native number the configuration names
  for (const auto& r : s.syscalls)
    for (const auto& name : r.names) last = std::max(last, api->resolve_name(name.c_str()));
  for (size_t i = 0; i < s.syscalls.size(); ++i) {
    const SeccompRule& r = s.syscalls[i];
    std::string path = base + ".syscalls[" + std::to_string(i) + "]";
    KERN_TRY_ASSIGN(uint32_t action, seccomp_action_value(r.action, r.errno_ret, path));
    if (action == def) continue;
    if (action == SCMP_ACT_NOTIFY) {
      out.notify = true;
      for (const char* own : {"write", "sendmsg"})
        if (std::find(r.names.begin(), r.names.end(), own) != r.names.end())
          return fail(Error(ErrorKind::config, 0, path + ": SCMP_ACT_NOTIFY on " + own + " is refused: the " +
                                                      "process calls it after loading the filter (to hand the listener " +
                                                      "over, or to report a failure) before the agent has the listener")
                          .with_hint("leave " + std::string(own) + " to another action"));
    }
    for (const auto& name : r.names) {
      int nr = api->resolve_name(name.c_str());
      if (nr == __NR_SCMP_ERROR) continue;
      KERN_TRY(add_rule(c, action, nr, r, path, name));
    }
  }
  KERN_TRY_ASSIGN(out.program, export_program(c));
  if (def != SCMP_ACT_ALLOW && native_listed && last >= 0) {
    prepend_enosys_rule(out.program, static_cast<uint32_t>(last));
    if (out.program.size() > BPF_MAXINSNS)
      return fail(ErrorKind::config, 0, base + ": the program is longer than the kernel loads (" +
                                            std::to_string(out.program.size()) + " instructions)");
  }
  return out;
}

Result<std::string> seccomp_library_identity() {
  KERN_TRY_ASSIGN(const SeccompApi* api, seccomp_api());
  struct stat st;
  if (api->file.empty() || ::stat(api->file.c_str(), &st) != 0)
    return fail(ErrorKind::setup, errno, std::string("stat ") + (api->file.empty() ? kSoname : api->file.c_str()));
  return api->file + " " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " +
         std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace kern::bundle
