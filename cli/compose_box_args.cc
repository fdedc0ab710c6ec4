// compose::Service into kern box's words (compose_box_args.h).
#include "cli/compose_box_args.h"

#include <algorithm>

#include "cli/compose_config.h"
#include "cli/compose_text.h"
#include "oci/digest.h"

namespace kern::compose {

std::string box_name(const Project& project, const Service& service) {
  return service.container_name.empty() ? project.name + "-" + service.name + "-1" : service.container_name;
}

std::string stop_timeout_seconds(const std::string& grace) {
  std::optional<long long> ms = duration_ms(grace);
  if (!ms) return "";
  return std::to_string((*ms + 999) / 1000);
}

std::vector<std::string> pod_add_host_args(const Project& project) {
  std::vector<std::string> out;
  for (const auto& s : project.services)
    for (const auto& h : s.extra_hosts)
      if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  return out;
}

std::vector<std::string> box_args(const Project& project, const Service& s, std::vector<std::string>* warnings) {
  std::vector<std::string> a = {"-d", "--name", box_name(project, s), "--pod", project.name, "--network-alias", s.name};
  auto flag = [&a](const char* f, const std::string& v) {
    if (v.empty()) return;
    a.push_back(f);
    a.push_back(v);
  };
  auto warn = [&](const std::string& w) {
    if (warnings) warnings->push_back("services." + s.name + "." + w);
  };
  flag("--label", "com.docker.compose.project=" + project.name);
  flag("--label", "com.docker.compose.service=" + s.name);
  flag("--label", "com.docker.compose.config-hash=" + config_hash(s));
  for (const auto& [k, v] : s.labels) flag("--label", k + "=" + v);
  flag("--image", s.image);
  for (const auto& [k, v] : s.environment) flag("-e", k + "=" + v);
  for (const auto& v : s.volumes) {
    if (v.type == "tmpfs" || (v.type == "volume" && v.source.empty())) {
      if (v.type == "volume") warn("volumes: the anonymous volume " + v.target + " is a tmpfs under kern (not kept)");
      flag("--tmpfs", v.target);
      continue;
    }
    flag("-v", v.source + ":" + v.target + (v.read_only ? ":ro" : ""));
  }
  for (const auto& t : s.tmpfs) flag("--tmpfs", t);
  if (s.read_only) a.push_back("--read-only");
  if (s.init) a.push_back("--init");
  flag("-u", s.user);
  // A box maps only id 0 unless it maps a subordinate range (kern-box(1), -u): any other user
  // needs one.
  std::string user_id = s.user.substr(0, s.user.find(':'));
  if (!user_id.empty() && user_id != "0" && user_id != "root") a.push_back("--uid-range");
  flag("-w", s.working_dir);
  // One stack is one pod: its services share the pod's uts namespace and its /etc/hosts, which
  // the pod gets extra_hosts in (pod_add_host_args).
  if (!s.hostname.empty()) warn("hostname: the services of a stack share the pod's hostname (the project's name), ignored");
  for (const auto& c : s.cap_add) flag("--cap-add", c);
  for (const auto& c : s.cap_drop) flag("--cap-drop", c);
  for (const auto& [k, v] : s.ulimits) flag("--ulimit", k + "=" + v);
  for (const auto& [k, v] : s.sysctls) flag("--sysctl", k + "=" + v);
  flag("-m", s.memory);
  flag("--cpus", s.cpus);
  flag("--pids-limit", s.pids);
  flag("--restart", s.restart);
  flag("--stop-signal", s.stop_signal);
  flag("--stop-timeout", stop_timeout_seconds(s.stop_grace_period));
  if (s.healthcheck) {
    const Healthcheck& h = *s.healthcheck;
    if (h.disable) {
      a.push_back("--no-healthcheck");
    } else {
      if (!h.test.empty() && h.test[0] == "CMD-SHELL" && h.test.size() > 1) flag("--health-cmd", h.test[1]);
      if (!h.test.empty() && h.test[0] == "CMD")
        flag("--health-cmd", shell_join(std::vector<std::string>(h.test.begin() + 1, h.test.end())));
      flag("--health-interval", h.interval);
      flag("--health-timeout", h.timeout);
      if (h.retries) flag("--health-retries", std::to_string(*h.retries));
      flag("--health-start-period", h.start_period);
    }
  }
  for (const auto& ref : s.secrets) {
    for (const auto& sec : project.secrets) {
      if (sec.key != ref.source) continue;
      if (!sec.file.empty())
        flag("--secret", sec.file + ":" + ref.target);
      else
        warn("secrets: the secret \"" + sec.key +
             "\" comes from the environment or an external store, which kern "
             "does not carry out: the box does not get it");
    }
  }
  std::vector<std::string> words;
  if (s.entrypoint) {
    a.push_back("--entrypoint");
    a.push_back(s.entrypoint->empty() ? std::string() : s.entrypoint->front());
    if (s.entrypoint->size() > 1) words.assign(s.entrypoint->begin() + 1, s.entrypoint->end());
  }
  if (s.command) words.insert(words.end(), s.command->begin(), s.command->end());
  if (!words.empty() || (s.command && s.entrypoint)) {
    a.push_back("--");
    a.insert(a.end(), words.begin(), words.end());
  }
  return a;
}

std::vector<std::string> pod_publish_args(const Project& project) {
  std::vector<std::string> out;
  for (const auto& s : project.services)
    for (const auto& p : s.ports) {
      std::string v = p.published.empty() ? p.target : p.published + ":" + p.target;
      if (!p.host_ip.empty()) {
        std::string ip = p.host_ip.find(':') != std::string::npos ? "[" + p.host_ip + "]" : p.host_ip;
        v = ip + ":" + (p.published.empty() ? ":" + p.target : v);
      }
      out.push_back(v + "/" + p.protocol);
    }
  return out;
}

std::string config_hash(const Service& service) {
  std::string canonical = to_json(service_node(service));
  if (auto d = oci::sha256_of(canonical)) return std::string(oci::digest_hex(*d));
  // Without libcrypto: FNV-1a, 64 bits, still stable for the same model.
  unsigned long long h = 1469598103934665603ULL;
  for (unsigned char c : canonical) h = (h ^ c) * 1099511628211ULL;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", h);
  return buf;
}

}  // namespace kern::compose
