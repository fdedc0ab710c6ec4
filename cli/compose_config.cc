// The model as `docker compose config` prints it (compose_config.h).
#include "cli/compose_config.h"

#include <algorithm>

namespace kern::compose {
namespace config_impl {

Node strings(const std::vector<std::string>& list) {
  Node n = Node::seq();
  for (const auto& s : list) n.items.push_back(Node::string(s));
  return n;
}

Node pairs(const std::vector<std::pair<std::string, std::string>>& list) {
  Node n = Node::map();
  for (const auto& [k, v] : list) n.set(k, Node::string(v));
  return n;
}

// A port number as a number, a range as a string.
Node port_value(const std::string& p) {
  return p.find('-') == std::string::npos ? Node::plain(p) : Node::string(p);
}

Node boolean(bool b) { return Node::plain(b ? "true" : "false"); }

}  // namespace config_impl

Node service_node(const Service& s) {
  using namespace config_impl;
  Node n = Node::map();
  auto text = [&](const char* key, const std::string& v) {
    if (!v.empty()) n.set(key, Node::string(v));
  };
  if (!s.cap_add.empty()) n.set("cap_add", strings(s.cap_add));
  if (!s.cap_drop.empty()) n.set("cap_drop", strings(s.cap_drop));
  if (s.command) n.set("command", strings(*s.command));
  text("container_name", s.container_name);
  if (!s.cpus.empty()) n.set("cpus", Node::plain(s.cpus));
  if (!s.depends_on.empty()) {
    Node d = Node::map();
    for (const auto& dep : s.depends_on) {
      Node c = Node::map();
      c.set("condition", Node::string(dep.condition));
      if (dep.restart) c.set("restart", boolean(true));
      c.set("required", boolean(dep.required));
      d.set(dep.service, c);
    }
    n.set("depends_on", d);
  }
  if (s.entrypoint) n.set("entrypoint", strings(*s.entrypoint));
  if (!s.environment.empty()) n.set("environment", pairs(s.environment));
  if (!s.expose.empty()) n.set("expose", strings(s.expose));
  if (!s.extra_hosts.empty()) n.set("extra_hosts", strings(s.extra_hosts));
  if (s.healthcheck) {
    const Healthcheck& h = *s.healthcheck;
    Node hn = Node::map();
    if (h.disable) hn.set("disable", boolean(true));
    if (!h.test.empty()) hn.set("test", strings(h.test));
    if (!h.interval.empty()) hn.set("interval", Node::string(h.interval));
    if (!h.timeout.empty()) hn.set("timeout", Node::string(h.timeout));
    if (!h.start_period.empty()) hn.set("start_period", Node::string(h.start_period));
    if (h.retries) hn.set("retries", Node::plain(std::to_string(*h.retries)));
    n.set("healthcheck", hn);
  }
  text("hostname", s.hostname);
  text("image", s.image);
  if (s.init) n.set("init", boolean(true));
  if (!s.labels.empty()) n.set("labels", pairs(s.labels));
  text("mem_limit", s.memory);
  if (!s.pids.empty()) n.set("pids_limit", Node::plain(s.pids));
  if (!s.ports.empty()) {
    Node ps = Node::seq();
    for (const auto& p : s.ports) {
      Node pn = Node::map();
      pn.set("mode", Node::string("ingress"));
      if (!p.host_ip.empty()) pn.set("host_ip", Node::string(p.host_ip));
      pn.set("target", port_value(p.target));
      if (!p.published.empty()) pn.set("published", Node::string(p.published));
      pn.set("protocol", Node::string(p.protocol));
      ps.items.push_back(pn);
    }
    n.set("ports", ps);
  }
  if (!s.profiles.empty()) n.set("profiles", strings(s.profiles));
  if (s.read_only) n.set("read_only", boolean(true));
  text("restart", s.restart);
  if (!s.secrets.empty()) {
    Node ss = Node::seq();
    for (const auto& r : s.secrets) {
      Node rn = Node::map();
      rn.set("source", Node::string(r.source));
      rn.set("target", Node::string("/run/secrets/" + r.target));
      ss.items.push_back(rn);
    }
    n.set("secrets", ss);
  }
  text("stop_grace_period", s.stop_grace_period);
  text("stop_signal", s.stop_signal);
  if (!s.sysctls.empty()) n.set("sysctls", pairs(s.sysctls));
  if (!s.tmpfs.empty()) n.set("tmpfs", strings(s.tmpfs));
  if (!s.ulimits.empty()) {
    Node u = Node::map();
    for (const auto& [k, v] : s.ulimits) {
      size_t c = v.find(':');
      if (c == std::string::npos) {
        u.set(k, Node::plain(v));
      } else {
        Node sh = Node::map();
        sh.set("soft", Node::plain(v.substr(0, c)));
        sh.set("hard", Node::plain(v.substr(c + 1)));
        u.set(k, sh);
      }
    }
    n.set("ulimits", u);
  }
  text("user", s.user);
  if (!s.volumes.empty()) {
    Node vs = Node::seq();
    for (const auto& v : s.volumes) {
      Node vn = Node::map();
      vn.set("type", Node::string(v.type));
      if (!v.source.empty()) vn.set("source", Node::string(v.source));
      vn.set("target", Node::string(v.target));
      if (v.read_only) vn.set("read_only", boolean(true));
      vs.items.push_back(vn);
    }
    n.set("volumes", vs);
  }
  text("working_dir", s.working_dir);
  if (s.has_build) n.set("build", Node::string("(not carried out by kern)"));
  std::stable_sort(n.entries.begin(), n.entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return n;
}

Node project_node(const Project& p) {
  Node root = Node::map();
  root.set("name", Node::string(p.name));
  std::vector<const Service*> sorted;
  for (const auto& s : p.services) sorted.push_back(&s);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Service* a, const Service* b) { return a->name < b->name; });
  Node services = Node::map();
  for (const Service* s : sorted) services.set(s->name, service_node(*s));
  root.set("services", services);
  if (!p.volumes.empty()) {
    Node vols = Node::map();
    for (const auto& v : p.volumes) {
      Node vn = Node::map();
      vn.set("name", Node::string(v.name));
      if (v.external) vn.set("external", config_impl::boolean(true));
      if (!v.labels.empty()) vn.set("labels", config_impl::pairs(v.labels));
      vols.set(v.key, vn);
    }
    root.set("volumes", vols);
  }
  if (!p.secrets.empty()) {
    Node secs = Node::map();
    for (const auto& s : p.secrets) {
      Node sn = Node::map();
      sn.set("name", Node::string(p.name + "_" + s.key));
      if (!s.file.empty()) sn.set("file", Node::string(s.file));
      if (!s.environment.empty()) sn.set("environment", Node::string(s.environment));
      if (s.external) sn.set("external", config_impl::boolean(true));
      secs.set(s.key, sn);
    }
    root.set("secrets", secs);
  }
  return root;
}

}  // namespace kern::compose
