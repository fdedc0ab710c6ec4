// `kern generate systemd`'s unit text; see systemd_unit.h.
#include "cli/systemd_unit.h"

#include <cstdio>

namespace kern::cli {

std::string systemd_word(const std::string& word) {
  std::string out = "\"";
  for (unsigned char c : word) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '%') {
      out += "%%";
    } else if (c == '$') {
      out += "$$";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

std::string command(const std::string& kern, const std::vector<std::string>& words) {
  std::string line = systemd_word(kern);
  for (const auto& w : words) line += " " + systemd_word(w);
  return line;
}

// The create words without argv[0], with the name given when the box's was generated.
std::vector<std::string> box_words(const UnitInput& in) {
  std::vector<std::string> w;
  size_t verb = 1;
  while (verb < in.create_argv.size() && in.create_argv[verb] != "box") ++verb;
  if (verb >= in.create_argv.size()) return {"box", "-d", in.name};
  bool named = verb + 1 < in.create_argv.size() && in.create_argv[verb + 1] == in.name;
  for (size_t i = verb; i < in.create_argv.size() && in.create_argv[i] != "--"; ++i) {
    const std::string& a = in.create_argv[i];
    named |= a == "--name" || a.rfind("--name=", 0) == 0;
  }
  w.assign(in.create_argv.begin() + static_cast<long>(verb), in.create_argv.end());
  if (!named) w.insert(w.begin() + 1, in.name);
  return w;
}

}  // namespace

std::string systemd_unit(const UnitInput& in) {
  std::string u;
  u += "# kern-" + in.name + ".service: the kern box " + in.name + ", made by kern generate systemd.\n";
  u += "# Install it in ~/.config/systemd/user/, then: systemctl --user enable --now kern-" + in.name + ".service\n";
  u += "# (and loginctl enable-linger for a start at boot without a login).\n";
  u += "[Unit]\n";
  u += "Description=kern box " + in.name + "\n";
  u += "Wants=network-online.target\n";
  u += "After=network-online.target\n\n";
  u += "[Service]\n";
  u += "Type=oneshot\n";
  u += "RemainAfterExit=yes\n";
  // An exited record of the name (a box that ended since the last start) is removed first.
  u += "ExecStartPre=-" + command(in.kern_path, {"rm", "-f", in.name}) + "\n";
  u += "ExecStart=" + command(in.kern_path, box_words(in)) + "\n";
  u += "ExecStop=" + command(in.kern_path, {"stop", "-t", std::to_string(in.stop_timeout_s), in.name}) + "\n";
  u += "TimeoutStopSec=" + std::to_string(in.stop_timeout_s + 10) + "\n\n";
  u += "[Install]\n";
  u += "WantedBy=default.target\n";
  return u;
}

}  // namespace kern::cli
