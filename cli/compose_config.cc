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
Node port_value(const std::string& p) { return p.find('-') == std::string::npos ? Node::plain(p) : Node::string(p); }

Node boolean(bool b) { return Node::plain(b ? "true" : "false"); }

// Sets `key` of `n` to a string, a number, a list or a mapping, unless the value is empty.
void put(Node& n, const char* key, const std::string& v) {
  if (!v.empty()) n.set(key, Node::string(v));
}
void put_number(Node& n, const char* key, const std::string& v) {
  if (!v.empty()) n.set(key, Node::plain(v));
}
void put(Node& n, const char* key, const std::vector<std::string>& v) {
  if (!v.empty()) n.set(key, strings(v));
}
void put(Node& n, const char* key, const std::vector<std::pair<std::string, std::string>>& v) {
  if (!v.empty()) n.set(key, pairs(v));
}

}  // namespace config_impl

Node service_node(const Service& s) {
  using namespace config_impl;
  Node n = Node::map();
  put(n, "cap_add", s.cap_add);
  put(n, "cap_drop", s.cap_drop);
  if (s.command) n.set("command", strings(*s.command));
  put(n, "container_name", s.container_name);
  put_number(n, "cpus", s.cpus);
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
  put(n, "environment", s.environment);
  put(n, "expose", s.expose);
  put(n, "extra_hosts", s.extra_hosts);
  if (s.healthcheck) {
    const Healthcheck& h = *s.healthcheck;
    Node hn = Node::map();
    if (h.disable) hn.set("disable", boolean(true));
    put(hn, "test", h.test);
    put(hn, "interval", h.interval);
    put(hn, "timeout", h.timeout);
    put(hn, "start_period", h.start_period);
    if (h.retries) hn.set("retries", Node::plain(std::to_string(*h.retries)));
    n.set("healthcheck", hn);
  }
  put(n, "hostname", s.hostname);
  put(n, "image", s.image);
  if (s.init) n.set("init", boolean(true));
  put(n, "labels", s.labels);
  put(n, "mem_limit", s.memory);
  put_number(n, "pids_limit", s.pids);
  if (!s.ports.empty()) {
    Node ps = Node::seq();
    for (const auto& p : s.ports) {
      Node pn = Node::map();
      pn.set("mode", Node::string("ingress"));
      put(pn, "host_ip", p.host_ip);
      pn.set("target", port_value(p.target));
      put(pn, "published", p.published);
      pn.set("protocol", Node::string(p.protocol));
      ps.items.push_back(pn);
    }
    n.set("ports", ps);
  }
  put(n, "profiles", s.profiles);
  if (s.read_only) n.set("read_only", boolean(true));
  put(n, "restart", s.restart);
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
  put(n, "stop_grace_period", s.stop_grace_period);
  put(n, "stop_signal", s.stop_signal);
  put(n, "sysctls", s.sysctls);
  put(n, "tmpfs", s.tmpfs);
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
  put(n, "user", s.user);
  if (!s.volumes.empty()) {
    Node vs = Node::seq();
    for (const auto& v : s.volumes) {
      Node vn = Node::map();
      vn.set("type", Node::string(v.type));
      put(vn, "source", v.source);
      vn.set("target", Node::string(v.target));
      if (v.read_only) vn.set("read_only", boolean(true));
      vs.items.push_back(vn);
    }
    n.set("volumes", vs);
  }
  put(n, "working_dir", s.working_dir);
  if (s.build) {
    Node b = Node::map();
    b.set("context", Node::string(s.build->context));
    if (!s.build->dockerfile.empty()) b.set("dockerfile", Node::string(s.build->dockerfile));
    if (!s.build->target.empty()) b.set("target", Node::string(s.build->target));
    if (!s.build->args.empty()) {
      Node args = Node::map();
      for (const auto& [k, v] : s.build->args) args.set(k, Node::string(v));
      b.set("args", args);
    }
    n.set("build", b);
  }
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
      config_impl::put(vn, "labels", v.labels);
      vols.set(v.key, vn);
    }
    root.set("volumes", vols);
  }
  if (!p.secrets.empty()) {
    Node secs = Node::map();
    for (const auto& s : p.secrets) {
      Node sn = Node::map();
      sn.set("name", Node::string(p.name + "_" + s.key));
      config_impl::put(sn, "file", s.file);
      config_impl::put(sn, "environment", s.environment);
      if (s.external) sn.set("external", config_impl::boolean(true));
      secs.set(s.key, sn);
    }
    root.set("secrets", secs);
  }
  return root;
}

}  // namespace kern::compose
