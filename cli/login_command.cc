// `kern login [-u USER] [--password-stdin] [--tls-verify=false] [--cert-dir DIR] REGISTRY`:
// check credentials against a registry and store them (0600, see oci/auth.h). The password is
// never taken from the command line: from stdin with --password-stdin, else asked on the
// terminal without echo. `--logout` forgets them (as `kern logout REGISTRY` does).
#include <termios.h>
#include <unistd.h>

#include "cli/tls_flags.h"
#include "cli/verb.h"
#include "oci/auth.h"
#include "oci/reference.h"
#include "oci/registries_conf.h"
#include "oci/registry_client.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace login_verb {

std::string g_registry, g_user;
bool g_password_stdin = false;
bool g_logout = false;
TlsFlags g_tls;

Result<std::string> read_line(int fd, bool echo) {
  struct termios old {};
  bool tty = ::isatty(fd) && ::tcgetattr(fd, &old) == 0;
  if (tty && !echo) {
    struct termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  std::string line;
  char c;
  for (;;) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    if (line.size() > 4096) break;
    line += c;
  }
  if (tty && !echo) {
    ::tcsetattr(fd, TCSAFLUSH, &old);
    (void)sys::write_all(STDERR_FILENO, "\n", "stderr");
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

Result<int> run_login() {
  KERN_TRY_ASSIGN(std::string registry, oci::registry_host_arg(g_registry));
  KERN_TRY_ASSIGN(oci::TlsRequest tls, tls_request(g_tls));
  if (g_logout) {
    KERN_TRY_ASSIGN(bool had, oci::remove_credentials(registry));
    if (!had) log::note("no stored credentials for " + registry);
    return 0;
  }
  oci::Credentials creds;
  creds.user = g_user;
  bool tty = ::isatty(STDIN_FILENO);
  if (creds.user.empty()) {
    if (!tty) return fail(ErrorKind::usage, 0, "give the user name with -u USER");
    KERN_TRY(sys::write_all(STDERR_FILENO, "Username: ", "stderr"));
    KERN_TRY_ASSIGN(creds.user, read_line(STDIN_FILENO, true));
  }
  if (g_password_stdin) {
    KERN_TRY_ASSIGN(creds.password, read_line(STDIN_FILENO, true));
  } else if (tty) {
    KERN_TRY(sys::write_all(STDERR_FILENO, "Password: ", "stderr"));
    KERN_TRY_ASSIGN(creds.password, read_line(STDIN_FILENO, false));
  } else {
    return fail(ErrorKind::usage, 0, "pass the password on stdin with --password-stdin");
  }
  if (creds.user.empty() || creds.password.empty()) return fail(ErrorKind::usage, 0, "empty user name or password");
  oci::Reference ref;
  ref.registry = registry;
  KERN_TRY_ASSIGN(oci::RegistriesConf conf, oci::load_registries_conf());
  oci::ClientOptions copts;
  KERN_TRY_ASSIGN(copts.tls, oci::tls_settings_for(registry, tls, oci::registry_insecure(conf, registry)));
  KERN_TRY_ASSIGN(auto client, oci::RegistryClient::create(ref, std::move(copts)));
  client->set_credentials(creds);
  KERN_TRY(client->check_login());
  KERN_TRY(oci::store_credentials(registry, creds));
  KERN_TRY(sys::write_all(STDOUT_FILENO, "Login Succeeded\n", "stdout"));
  return 0;
}

void register_login(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("login", "store credentials for a registry");
  c->add_option("REGISTRY", g_registry, "registry host, e.g. localhost:5000")->required();
  c->add_option("-u,--username", g_user, "user name");
  c->add_flag("--password-stdin", g_password_stdin, "read the password from stdin");
  c->add_flag("--logout", g_logout, "forget the stored credentials instead");
  add_tls_flags(c, g_tls);
  c->callback([&ctx] { ctx.action = run_login; });
}

const VerbRegistration reg{47, "login", &register_login};

}  // namespace login_verb
}  // namespace
}  // namespace kern::cli
