// A compose service as kern box's words, the pod's -p values, the config hash, and the YAML of
// `kern compose config`.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/compose_box_args.h"
#include "cli/compose_command.h"
#include "cli/compose_config.h"
#include "tests/unit/cli_compose_fixture.h"

namespace kern::compose {
namespace {

class ComposeBox : public ComposeDir {};

TEST_F(ComposeBox, AFullService) {
  write("pw.txt", "x");
  write("compose.yaml",
        "name: shop\n"
        "services:\n  web:\n    image: busybox:latest\n    labels: {tier: front}\n"
        "    environment: {A: '1'}\n    volumes: ['./d:/d:ro', 'cache:/cache', '/anon', {type: tmpfs, target: /t}]\n"
        "    tmpfs: [/run/x]\n    read_only: true\n    init: true\n    user: '1000:1000'\n    working_dir: /d\n"
        "    hostname: web1\n    cap_add: [NET_BIND_SERVICE]\n    cap_drop: [ALL]\n    ulimits: {nofile: {soft: 10, hard: 20}}\n"
        "    sysctls: {net.ipv4.ip_unprivileged_port_start: '0'}\n    extra_hosts: ['db:10.0.0.2']\n"
        "    mem_limit: 64m\n    cpus: '0.5'\n    pids_limit: 32\n    restart: on-failure:3\n    stop_signal: SIGINT\n"
        "    stop_grace_period: 1m30s\n"
        "    healthcheck: {test: [CMD, wget, -q, 'http://localhost/?a=1&b'], interval: 5s, timeout: 2s, retries: 4, start_period: 1s}\n"
        "    secrets: [pw, env_pw]\n    entrypoint: [/bin/sh, -c]\n    command: ['echo $$A']\n    ports: ['8080:80']\n"
        "volumes:\n  cache: {}\n"
        "secrets:\n  pw: {file: pw.txt}\n  env_pw: {environment: PASSWORD}\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  std::vector<std::string> warnings;
  auto a = box_args(*p, p->services[0], &warnings);
  std::string hash = config_hash(p->services[0]);
  std::vector<std::string> want = {
      "-d", "--name", "shop-web-1", "--pod", "shop", "--network-alias", "web",
      "--label", "com.docker.compose.project=shop", "--label", "com.docker.compose.service=web",
      "--label", "com.docker.compose.config-hash=" + hash, "--label", "tier=front",
      "--image", "busybox:latest", "-e", "A=1",
      "-v", dir_ + "/d:/d:ro", "-v", "shop_cache:/cache", "--tmpfs", "/anon", "--tmpfs", "/t", "--tmpfs", "/run/x",
      "--read-only", "--init", "-u", "1000:1000", "--uid-range", "-w", "/d",
      "--cap-add", "NET_BIND_SERVICE", "--cap-drop", "ALL", "--ulimit", "nofile=10:20",
      "--sysctl", "net.ipv4.ip_unprivileged_port_start=0",
      "-m", "64m", "--cpus", "0.5", "--pids-limit", "32", "--restart", "on-failure:3",
      "--stop-signal", "SIGINT", "--stop-timeout", "90",
      "--health-cmd", "wget -q 'http://localhost/?a=1&b'", "--health-interval", "5s", "--health-timeout", "2s",
      "--health-retries", "4", "--health-start-period", "1s",
      "--secret", dir_ + "/pw.txt:pw", "--entrypoint", "/bin/sh", "--", "-c", "echo $A"};
  EXPECT_EQ(a, want);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("services.web.volumes: the anonymous volume /anon"), std::string::npos);
  EXPECT_NE(warnings[1].find("services.web.hostname: the services of a stack share the pod's hostname"), std::string::npos);
  EXPECT_NE(warnings[2].find("\"env_pw\" comes from the environment"), std::string::npos);
  EXPECT_EQ(pod_publish_args(*p), std::vector<std::string>{"8080:80/tcp"});
}

TEST_F(ComposeBox, ContainerNameShellHealthAndNoHealthcheck) {
  write("compose.yaml",
        "services:\n  a:\n    image: busybox\n    container_name: named\n    user: root\n    healthcheck: {test: 'nc -z localhost 80'}\n"
        "  b:\n    image: busybox\n    healthcheck: {disable: true}\n    command: []\n    entrypoint: ''\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  auto a = box_args(*p, p->services[0]);
  EXPECT_EQ(a[2], "named");
  EXPECT_EQ(std::count(a.begin(), a.end(), "--uid-range"), 0);  // root needs no subordinate range
  EXPECT_EQ(a.back(), "nc -z localhost 80");
  auto b = box_args(*p, p->services[1]);
  std::vector<std::string> tail(b.end() - 4, b.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"--no-healthcheck", "--entrypoint", "", "--"}));
}

TEST_F(ComposeBox, PublishArgsForEveryService) {
  write("compose.yaml",
        "services:\n  a:\n    image: busybox\n    ports: ['127.0.0.1:53:53/udp', '80']\n"
        "  b:\n    image: busybox\n    ports: ['[::1]:8443:443', {target: 90, host_ip: 127.0.0.1}]\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  EXPECT_EQ(pod_publish_args(*p),
            (std::vector<std::string>{"127.0.0.1:53:53/udp", "80/tcp", "[::1]:8443:443/tcp", "127.0.0.1::90/tcp"}));
}

TEST_F(ComposeBox, TheConfigHashFollowsTheModelNotTheSpelling) {
  write("a.yaml", "services:\n  w:\n    image: busybox\n    environment: [A=1]\n    command: echo hi\n");
  write("b.yaml", "services:\n  w:\n    environment: {A: '1'}\n    command: [echo, hi]\n    image: busybox\n");
  write("c.yaml", "services:\n  w:\n    image: busybox\n    environment: [A=2]\n    command: echo hi\n");
  std::string a = config_hash(load({"a.yaml"})->services[0]);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a, config_hash(load({"b.yaml"})->services[0]));
  EXPECT_NE(a, config_hash(load({"c.yaml"})->services[0]));
}

TEST_F(ComposeBox, ConfigOutputInTheShapeOfDockerCompose) {
  write("compose.yaml",
        "name: demo\nservices:\n  web:\n    image: busybox\n    command: echo \"hello world\"\n"
        "    environment: [MODE=prod, COUNT=3]\n    ports: ['8080:80']\n    volumes: ['./site:/site:ro', 'data:/data']\n"
        "    depends_on: [db]\n  db:\n    image: busybox\n    healthcheck: {test: 'true', interval: 2s}\n"
        "volumes:\n  data: {}\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  std::string want =
      "name: demo\n"
      "services:\n"
      "  db:\n"
      "    healthcheck:\n"
      "      test:\n"
      "        - CMD-SHELL\n"
      "        - \"true\"\n"
      "      interval: 2s\n"
      "    image: busybox\n"
      "  web:\n"
      "    command:\n"
      "      - echo\n"
      "      - hello world\n"
      "    depends_on:\n"
      "      db:\n"
      "        condition: service_started\n"
      "        required: true\n"
      "    environment:\n"
      "      MODE: prod\n"
      "      COUNT: \"3\"\n"
      "    image: busybox\n"
      "    ports:\n"
      "      - mode: ingress\n"
      "        target: 80\n"
      "        published: \"8080\"\n"
      "        protocol: tcp\n"
      "    volumes:\n"
      "      - type: bind\n"
      "        source: " + dir_ + "/site\n"
      "        target: /site\n"
      "        read_only: true\n"
      "      - type: volume\n"
      "        source: demo_data\n"
      "        target: /data\n"
      "volumes:\n"
      "  data:\n"
      "    name: demo_data\n";
  EXPECT_EQ(to_yaml(project_node(*p)), want);
  std::string json = to_json(project_node(*p));
  EXPECT_NE(json.find("\"published\": \"8080\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"target\": 80,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"required\": true"), std::string::npos) << json;
}

TEST(ComposeVerb, TheVerbAndItsConfigSubcommandAreRegistered) {
  bool verb = false;
  for (const auto& v : cli::verbs_for({"compose", "config"})) verb = verb || std::string(v.name) == "compose";
  EXPECT_TRUE(verb);
  bool config = false;
  for (const auto& s : cli::compose_subcommands()) config = config || std::string(s.name) == "config";
  EXPECT_TRUE(config);
}

}  // namespace
}  // namespace kern::compose
