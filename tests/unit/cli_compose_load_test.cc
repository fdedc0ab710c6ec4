// load_project: files, .env, interpolation, merge keys, -f merge, extends, profiles, the short
// and long syntaxes, warnings with key paths, type errors, and check_one_pod.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/compose_model.h"
#include "tests/unit/cli_compose_fixture.h"

namespace kern::compose {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

bool has(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

class ComposeLoad : public ComposeDir {};

TEST_F(ComposeLoad, DefaultFileOverrideAndProjectNameFromTheDirectory) {
  write("My Proj!/compose.yaml", "services:\n  web:\n    image: busybox\n");
  write("My Proj!/compose.override.yaml", "services:\n  web:\n    user: \"1000\"\n");
  LoadOptions o;
  o.project_directory = dir_ + "/My Proj!";
  auto p = load_project(o, {});
  ASSERT_TRUE(p.has_value()) << p.error().what();
  EXPECT_EQ(p->name, "myproj");
  EXPECT_EQ(p->working_dir, dir_ + "/My Proj!");
  ASSERT_EQ(p->files.size(), 2u);
  EXPECT_EQ(p->services[0].user, "1000");
  EXPECT_EQ(normalize_project_name("_Web-App_1"), "web-app_1");
}

TEST_F(ComposeLoad, ComposeFileNamesTheFilesWithoutF) {
  write("one.yaml", "services:\n  a:\n    image: busybox\n");
  write("two.yaml", "services:\n  b:\n    image: busybox\n");
  auto p = load({}, {}, {{"COMPOSE_FILE", dir_ + "/one.yaml:" + dir_ + "/two.yaml"}});
  ASSERT_TRUE(p.has_value()) << p.error().what();
  EXPECT_EQ(p->services.size(), 2u);
  EXPECT_EQ(p->files, (std::vector<std::string>{dir_ + "/one.yaml", dir_ + "/two.yaml"}));
}

TEST_F(ComposeLoad, NoComposeFileIsAnError) {
  LoadOptions o;
  o.project_directory = dir_;
  auto p = load_project(o, {});
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().what().find("no compose file"), std::string::npos);
}

TEST_F(ComposeLoad, ProjectNameOrder) {
  write("compose.yaml", "name: FromFile\nservices:\n  a:\n    image: busybox\n");
  EXPECT_EQ(load()->name, "fromfile");
  EXPECT_EQ(load({"compose.yaml"}, {}, {{"COMPOSE_PROJECT_NAME", "FromEnv"}})->name, "fromenv");
  LoadOptions o;
  o.project_name = "flag";
  EXPECT_EQ(load({"compose.yaml"}, o, {{"COMPOSE_PROJECT_NAME", "FromEnv"}})->name, "flag");
}

TEST_F(ComposeLoad, DotEnvFeedsInterpolationAndTheProcessEnvironmentWins) {
  write(".env", "TAG=1.0\nPORT=80\n# c\nQUOTED=\"a b\"\n");
  write("compose.yaml",
        "services:\n  web:\n    image: busybox:${TAG}\n    ports: [\"${PORT}:80\"]\n"
        "    environment:\n      Q: $QUOTED\n      LIT: $$HOME\n      KEY_${TAG}: x\n");
  auto p = load({"compose.yaml"}, {}, {{"PORT", "8080"}});
  ASSERT_TRUE(p.has_value()) << p.error().what();
  const Service& s = p->services[0];
  EXPECT_EQ(s.image, "busybox:1.0");
  EXPECT_EQ(s.ports[0].published, "8080");
  EXPECT_EQ(s.environment, (Env{{"Q", "a b"}, {"LIT", "$HOME"}, {"KEY_${TAG}", "x"}}));  // keys are not interpolated
}

TEST_F(ComposeLoad, EnvFileOptionReplacesDotEnv) {
  write(".env", "TAG=dot\n");
  write("other.env", "TAG=other\n");
  write("compose.yaml", "services:\n  web:\n    image: busybox:${TAG}\n");
  LoadOptions o;
  o.env_file = dir_ + "/other.env";
  EXPECT_EQ(load({"compose.yaml"}, o)->services[0].image, "busybox:other");
}

TEST_F(ComposeLoad, InterpolationErrorsNameFileLineAndPath) {
  std::string e = load_error("services:\n  web:\n    image: ${IMAGE:?set IMAGE}\n");
  EXPECT_NE(e.find("compose.yaml:3: services.web.image: required variable IMAGE is missing a value: set IMAGE"),
            std::string::npos)
      << e;
}

TEST_F(ComposeLoad, AnchorsAndMergeKeys) {
  Service s = one(
      "x-base: &base\n  image: busybox\n  restart: always\n  user: \"1\"\n"
      "x-more: &more\n  user: \"2\"\n  working_dir: /w\n  hostname: first\n"
      "x-env: &env\n  A: '1'\n  B: '2'\n"
      "services:\n  web:\n    <<: [*base, *more]\n    hostname: own\n"
      "    environment:\n      <<: *env\n      B: three\n    command: &cmd [\"echo\", \"hi\"]\n"
      "    entrypoint: *cmd\n");
  EXPECT_EQ(s.image, "busybox");
  EXPECT_EQ(s.restart, "always");
  EXPECT_EQ(s.user, "1");  // of two merged mappings the first wins
  EXPECT_EQ(s.working_dir, "/w");
  EXPECT_EQ(s.hostname, "own");  // an explicit key wins over a merged one
  EXPECT_EQ(s.environment, (Env{{"A", "1"}, {"B", "three"}}));
  EXPECT_EQ(*s.command, (std::vector<std::string>{"echo", "hi"}));
  EXPECT_EQ(*s.entrypoint, *s.command);
}

TEST_F(ComposeLoad, AliasesOfAliasesCannotExpandWithoutBound) {
  std::string y = "x-0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i)
    y += "x-" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + [&] {
      std::string items;
      for (int j = 0; j < 10; ++j) items += (j ? ", *a" : "*a") + std::to_string(i - 1);
      return items;
    }() + "]\n";
  std::string e = load_error(y + "services:\n  web:\n    image: busybox\n");
  EXPECT_NE(e.find("values once aliases are expanded"), std::string::npos) << e;
}

TEST_F(ComposeLoad, AMergeKeyTakesMappingsOnly) {
  std::string e = load_error("services:\n  web:\n    <<: [1]\n    image: busybox\n");
  EXPECT_NE(e.find("merge key"), std::string::npos) << e;
}

TEST_F(ComposeLoad, SeveralFilesMergeAsComposeDoes) {
  write("compose.yaml",
        "services:\n  web:\n    image: busybox\n    command: [a, b]\n"
        "    environment: [A=1, B=2]\n    labels: {l1: x}\n    ports: ['8080:80', '9000:90']\n"
        "    expose: ['1', '2']\n    volumes: ['./a:/data', 'v:/v']\n    cap_add: [NET_ADMIN]\n"
        "    healthcheck: {test: [CMD, a], interval: 5s}\n"
        "volumes:\n  v: {}\n");
  write("over.yaml",
        "services:\n  web:\n    image: busybox:2\n    command: [c]\n"
        "    environment: {B: '3', C: '4'}\n    labels: [l2=y]\n    ports: ['8080:80', '7000:70']\n"
        "    expose: ['2', '3']\n    volumes: ['./b:/data:ro']\n    cap_add: [SYS_TIME]\n"
        "    healthcheck: {test: [CMD, b]}\n  db:\n    image: busybox\n");
  auto p = load({"compose.yaml", "over.yaml"});
  ASSERT_TRUE(p.has_value()) << p.error().what();
  ASSERT_EQ(p->services.size(), 2u);
  const Service& s = p->services[0];
  EXPECT_EQ(s.image, "busybox:2");
  EXPECT_EQ(*s.command, std::vector<std::string>{"c"});  // replaced, not appended
  EXPECT_EQ(s.environment, (Env{{"A", "1"}, {"B", "3"}, {"C", "4"}}));
  EXPECT_EQ(s.labels, (Env{{"l1", "x"}, {"l2", "y"}}));
  ASSERT_EQ(s.ports.size(), 3u);  // 8080:80 once
  EXPECT_EQ(s.expose, (std::vector<std::string>{"1", "2", "3"}));
  ASSERT_EQ(s.volumes.size(), 2u);  // /data replaced by target
  EXPECT_EQ(s.volumes[0].source, dir_ + "/b");
  EXPECT_TRUE(s.volumes[0].read_only);
  EXPECT_EQ(s.cap_add, (std::vector<std::string>{"NET_ADMIN", "SYS_TIME"}));
  EXPECT_EQ(s.healthcheck->test, (std::vector<std::string>{"CMD", "b"}));
  EXPECT_EQ(s.healthcheck->interval, "5s");
}

TEST_F(ComposeLoad, ExtendsInTheSameFileAndAnother) {
  write("lib/common.yaml",
        "services:\n  base:\n    image: busybox\n    env_file: base.env\n    volumes: ['./data:/data']\n"
        "    environment: {FROM: base, KEEP: k}\n");
  write("lib/base.env", "BASE_ENV=1\n");
  write("compose.yaml",
        "services:\n  mid:\n    extends: {file: lib/common.yaml, service: base}\n    environment: {FROM: mid}\n"
        "  top:\n    extends: mid\n    user: nobody\n    environment: {FROM: top}\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  const Service* top = p->find("top");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->image, "busybox");
  EXPECT_EQ(top->user, "nobody");
  EXPECT_EQ(top->environment, (Env{{"BASE_ENV", "1"}, {"FROM", "top"}, {"KEEP", "k"}}));
  ASSERT_EQ(top->volumes.size(), 1u);
  EXPECT_EQ(top->volumes[0].source, dir_ + "/lib/data");  // relative to the file it was written in
  EXPECT_TRUE(p->warnings.empty());
}

TEST_F(ComposeLoad, ExtendsCyclesAreRefused) {
  std::string e = load_error("services:\n  a:\n    image: busybox\n    extends: b\n  b:\n    extends: a\n");
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  e = load_error("services:\n  a:\n    extends: missing\n");
  EXPECT_NE(e.find("no service \"missing\""), std::string::npos) << e;
}

TEST_F(ComposeLoad, ProfilesChooseTheActiveServices) {
  write("compose.yaml",
        "services:\n  web:\n    image: busybox\n  debug:\n    image: busybox\n    profiles: [debug]\n"
        "  tools:\n    image: busybox\n    profiles: [tools, ops]\n");
  auto names = [](const Project& p) {
    std::vector<std::string> n;
    for (const auto& s : p.services) n.push_back(s.name);
    return n;
  };
  auto p = load();
  EXPECT_EQ(names(*p), std::vector<std::string>{"web"});
  ASSERT_EQ(p->inactive.size(), 2u);
  EXPECT_EQ(p->inactive[0].name, "debug");
  LoadOptions o;
  o.profiles = {"ops"};
  EXPECT_EQ(names(*load({"compose.yaml"}, o)), (std::vector<std::string>{"web", "tools"}));
  EXPECT_EQ(names(*load({"compose.yaml"}, {}, {{"COMPOSE_PROFILES", "debug,ops"}})),
            (std::vector<std::string>{"web", "debug", "tools"}));
  o.profiles = {"*"};
  EXPECT_EQ(load({"compose.yaml"}, o)->services.size(), 3u);
}

TEST_F(ComposeLoad, ShortAndLongPorts) {
  Service s = one(
      "services:\n  web:\n    image: busybox\n    ports:\n      - \"8080:80\"\n      - 127.0.0.1:5353:53/udp\n"
      "      - \"90\"\n      - 91\n      - 8000-8001:180-181\n      - \"[::1]:7000:70\"\n"
      "      - {target: 443, published: 8443, host_ip: 0.0.0.0, protocol: tcp, mode: host}\n");
  ASSERT_EQ(s.ports.size(), 7u);
  auto same = [](const PortSpec& p, const char* ip, const char* pub, const char* t, const char* proto) {
    return p.host_ip == ip && p.published == pub && p.target == t && p.protocol == proto;
  };
  EXPECT_TRUE(same(s.ports[0], "", "8080", "80", "tcp"));
  EXPECT_TRUE(same(s.ports[1], "127.0.0.1", "5353", "53", "udp"));
  EXPECT_TRUE(same(s.ports[2], "", "", "90", "tcp"));
  EXPECT_TRUE(same(s.ports[3], "", "", "91", "tcp"));
  EXPECT_TRUE(same(s.ports[4], "", "8000-8001", "180-181", "tcp"));
  EXPECT_TRUE(same(s.ports[5], "::1", "7000", "70", "tcp"));
  EXPECT_TRUE(same(s.ports[6], "0.0.0.0", "8443", "443", "tcp"));
}

TEST_F(ComposeLoad, ShortAndLongVolumes) {
  write("compose.yaml",
        "services:\n  web:\n    image: busybox\n    volumes:\n      - ./data:/data:ro\n      - ../up:/up\n"
        "      - ~/cfg:/cfg\n      - /abs:/abs:rw\n      - logs:/logs\n      - /anon\n      - ext:/ext\n"
        "      - {type: bind, source: ./src, target: /src, read_only: true}\n"
        "      - {type: volume, source: logs, target: /l2}\n      - {type: tmpfs, target: /t}\n"
        "volumes:\n  logs: {}\n  ext: {external: true, name: shared}\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  const auto& v = p->services[0].volumes;
  ASSERT_EQ(v.size(), 10u);
  auto is = [](const VolumeMount& m, const std::string& type, const std::string& src, const char* dst, bool ro) {
    return m.type == type && m.source == src && m.target == dst && m.read_only == ro;
  };
  std::string parent = dir_.substr(0, dir_.rfind('/'));
  EXPECT_TRUE(is(v[0], "bind", dir_ + "/data", "/data", true));
  EXPECT_TRUE(is(v[1], "bind", (parent.empty() ? "" : parent) + "/up", "/up", false));
  EXPECT_TRUE(is(v[2], "bind", "/home/u/cfg", "/cfg", false));
  EXPECT_TRUE(is(v[3], "bind", "/abs", "/abs", false));
  EXPECT_TRUE(is(v[4], "volume", p->name + "_logs", "/logs", false));
  EXPECT_TRUE(is(v[5], "volume", "", "/anon", false));
  EXPECT_TRUE(is(v[6], "volume", "shared", "/ext", false));
  EXPECT_TRUE(is(v[7], "bind", dir_ + "/src", "/src", true));
  EXPECT_TRUE(is(v[8], "volume", p->name + "_logs", "/l2", false));
  EXPECT_TRUE(is(v[9], "tmpfs", "", "/t", false));
  ASSERT_EQ(p->volumes.size(), 2u);
  EXPECT_TRUE(p->volumes[1].external);
}

TEST_F(ComposeLoad, AVolumeMustBeDeclared) {
  std::string e = load_error("services:\n  web:\n    image: busybox\n    volumes: ['data:/data']\n");
  EXPECT_NE(e.find("services.web.volumes[0]: service \"web\" refers to undefined volume \"data\""), std::string::npos) << e;
}

TEST_F(ComposeLoad, EnvironmentEnvFileAndBareKeys) {
  write("a.env", "A=from_file\nB=from_file\nBARE\n");
  write("compose.yaml",
        "services:\n  web:\n    image: busybox\n    env_file: [a.env, {path: missing.env, required: false}]\n"
        "    environment:\n      - B=from_env\n      - HOST_VAR\n      - UNSET_VAR\n      - EMPTY=\n");
  auto p = load({"compose.yaml"}, {}, {{"HOST_VAR", "h"}, {"BARE", "b"}});
  ASSERT_TRUE(p.has_value()) << p.error().what();
  EXPECT_EQ(p->services[0].environment,
            (Env{{"A", "from_file"}, {"B", "from_env"}, {"BARE", "b"}, {"HOST_VAR", "h"}, {"EMPTY", ""}}));
  std::string e = load_error("services:\n  web:\n    image: busybox\n    env_file: nope.env\n");
  EXPECT_NE(e.find("services.web.env_file: env file \"" + dir_ + "/nope.env\" not found"), std::string::npos) << e;
}

TEST_F(ComposeLoad, CommandsDependsOnHealthcheck) {
  Service s = one(
      "services:\n  web:\n    image: busybox\n    command: sh -c 'echo \"hi there\"'\n    entrypoint: ''\n"
      "    depends_on:\n      db: {condition: service_healthy, restart: true}\n      cache: {condition: service_started, required: false}\n"
      "    healthcheck:\n      test: curl -f http://localhost/\n      interval: 1m30s\n      retries: 3\n"
      "  db:\n    image: busybox\n    depends_on: [cache]\n    healthcheck: {disable: true}\n"
      "  cache:\n    image: busybox\n    healthcheck: {test: [NONE]}\n");
  EXPECT_EQ(*s.command, (std::vector<std::string>{"sh", "-c", "echo \"hi there\""}));
  EXPECT_TRUE(s.entrypoint && s.entrypoint->empty());
  ASSERT_EQ(s.depends_on.size(), 2u);
  EXPECT_EQ(s.depends_on[0].condition, "service_healthy");
  EXPECT_TRUE(s.depends_on[0].restart);
  EXPECT_FALSE(s.depends_on[1].required);
  EXPECT_EQ(s.healthcheck->test, (std::vector<std::string>{"CMD-SHELL", "curl -f http://localhost/"}));
  EXPECT_EQ(s.healthcheck->retries, 3);
  auto p = load();
  EXPECT_TRUE(p->find("db")->healthcheck->disable);
  EXPECT_TRUE(p->find("cache")->healthcheck->disable);
  EXPECT_EQ(p->find("db")->depends_on[0].service, "cache");
  std::string e = load_error("services:\n  web:\n    image: busybox\n    depends_on: [nosuch]\n");
  EXPECT_NE(e.find("depends on undefined service \"nosuch\""), std::string::npos) << e;
}

TEST_F(ComposeLoad, LimitsUlimitsSysctlsHostsLabelsSecrets) {
  write("s.txt", "pw");
  Service s = one(
      "services:\n  web:\n    image: busybox\n    mem_limit: 64m\n    cpus: 0.5\n    pids_limit: 10\n"
      "    deploy: {resources: {limits: {memory: 128m, pids: 20}}}\n"
      "    ulimits: {nofile: {soft: 1024, hard: 2048}, nproc: 64}\n"
      "    sysctls: [net.core.somaxconn=1024]\n    extra_hosts: ['db:10.0.0.2', 'cache=10.0.0.3']\n"
      "    labels: [a=b, c]\n    secrets: [pw, {source: pw, target: /run/secrets/other}]\n"
      "    read_only: true\n    init: true\n    cap_drop: [ALL]\n    stop_grace_period: 1m30s\n"
      "secrets:\n  pw: {file: ./s.txt}\n");
  EXPECT_EQ(s.memory, "128m");
  EXPECT_EQ(s.cpus, "0.5");
  EXPECT_EQ(s.pids, "20");
  EXPECT_EQ(s.ulimits, (Env{{"nofile", "1024:2048"}, {"nproc", "64"}}));
  EXPECT_EQ(s.sysctls, (Env{{"net.core.somaxconn", "1024"}}));
  EXPECT_EQ(s.extra_hosts, (std::vector<std::string>{"db:10.0.0.2", "cache:10.0.0.3"}));
  EXPECT_EQ(s.labels, (Env{{"a", "b"}, {"c", ""}}));
  ASSERT_EQ(s.secrets.size(), 2u);
  EXPECT_EQ(s.secrets[1].target, "other");
  EXPECT_TRUE(s.read_only && s.init);
  std::string e = load_error("services:\n  web:\n    image: busybox\n    secrets: [nope]\n");
  EXPECT_NE(e.find("undefined secret \"nope\""), std::string::npos) << e;
}

TEST_F(ComposeLoad, UnknownKeysAreWarningsWithTheirPaths) {
  std::vector<std::string> w;
  write("compose.yaml",
        "version: '3.8'\nx-top: {a: 1}\nconfigs: {}\nnetworks:\n  front: {}\n"
        "services:\n  web:\n    image: busybox\n    privileged: true\n    x-note: ignored\n    networks: [front]\n"
        "    deploy: {replicas: 2, resources: {limits: {cpus: '1'}, reservations: {memory: 1m}}}\n"
        "    build: .\n"
        "volumes:\n  v: {driver: local}\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  w = p->warnings;
  EXPECT_TRUE(has(w, "version: obsolete, ignored"));
  EXPECT_TRUE(has(w, "configs: not supported by kern, ignored"));
  EXPECT_TRUE(has(w, "networks: kern runs a stack in one shared network namespace, ignored"));
  EXPECT_TRUE(has(w, "services.web.privileged: not supported by kern, ignored"));
  EXPECT_TRUE(has(w, "services.web.networks: kern runs a stack in one shared network namespace, ignored"));
  EXPECT_TRUE(has(w, "services.web.deploy.replicas: not supported by kern, ignored"));
  EXPECT_TRUE(has(w, "services.web.deploy.resources.reservations: not supported by kern, ignored"));
  EXPECT_TRUE(has(w, "volumes.v.driver: not supported by kern, ignored"));
  EXPECT_EQ(w.size(), 8u);
  EXPECT_EQ(p->networks, std::vector<std::string>{"front"});
  EXPECT_TRUE(p->services[0].has_build);
  EXPECT_EQ(p->services[0].cpus, "1");
}

TEST_F(ComposeLoad, TypeErrorsNameFileAndPath) {
  std::string e = load_error("services:\n  web:\n    image: busybox\n    ports: 5\n");
  EXPECT_NE(e.find(dir_ + "/compose.yaml:4: services.web.ports: must be a list, not a number"), std::string::npos) << e;
  e = load_error("services:\n  web:\n    image: [busybox]\n");
  EXPECT_NE(e.find("services.web.image: must be a string or a number, not a list"), std::string::npos) << e;
  e = load_error("services:\n  web:\n    image: busybox\n    read_only: maybe\n");
  EXPECT_NE(e.find("services.web.read_only: must be a boolean"), std::string::npos) << e;
  e = load_error("services:\n  web:\n    image: busybox\n    ports: ['80:80:80:80']\n");
  EXPECT_NE(e.find("services.web.ports[0]: invalid port"), std::string::npos) << e;
  e = load_error("services:\n  web:\n    image: busybox\n    restart: sometimes\n");
  EXPECT_NE(e.find("services.web.restart"), std::string::npos) << e;
  e = load_error("services:\n  web:\n    user: x\n");
  EXPECT_NE(e.find("neither an image nor a build"), std::string::npos) << e;
  e = load_error("services: [a]\n");
  EXPECT_NE(e.find("services: must be a mapping"), std::string::npos) << e;
  e = load_error("services:\n  web: {image: busybox\n");
  EXPECT_NE(e.find(dir_ + "/compose.yaml:"), std::string::npos) << e;
}

TEST_F(ComposeLoad, OnePodRefusesTwoListenersOnOnePort) {
  write("compose.yaml",
        "services:\n  a:\n    image: busybox\n    ports: ['8080:80']\n    expose: ['80']\n"
        "  b:\n    image: busybox\n    expose: ['80/udp', '81']\n");
  auto p = load();
  ASSERT_TRUE(p.has_value()) << p.error().what();
  EXPECT_TRUE(check_one_pod(*p).has_value());

  write("compose.yaml", "services:\n  a:\n    image: busybox\n    ports: ['8080:80']\n  b:\n    image: busybox\n    expose: ['80']\n");
  auto s = check_one_pod(*load());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().what().find("services \"a\" and \"b\" both listen on container port 80/tcp"), std::string::npos)
      << s.error().what();

  write("compose.yaml",
        "services:\n  a:\n    image: busybox\n    ports: ['9000-9001:90-91']\n  b:\n    image: busybox\n    ports: ['9001:100']\n");
  s = check_one_pod(*load());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().what().find("both publish host port 9001/tcp"), std::string::npos) << s.error().what();

  // One host port on two addresses is two sockets; on an address and all addresses it is one.
  write("compose.yaml", "services:\n  a:\n    image: busybox\n    ports: ['127.0.0.1:80:80']\n"
                        "  b:\n    image: busybox\n    ports: ['127.0.0.2:80:81']\n");
  EXPECT_TRUE(check_one_pod(*load()).has_value());
  write("compose.yaml", "services:\n  a:\n    image: busybox\n    ports: ['127.0.0.1:80:80']\n"
                        "  b:\n    image: busybox\n    ports: ['80:81']\n");
  EXPECT_FALSE(check_one_pod(*load()).has_value());
}

}  // namespace
}  // namespace kern::compose

namespace kern::compose {
namespace {

class ComposeBuild : public ComposeDir {};

TEST_F(ComposeBuild, BuildKeyGivesKernBuildItsContextArgsAndAName) {
  write("compose.yaml",
        "name: shop\n"
        "services:\n"
        "  web:\n"
        "    build:\n"
        "      context: ./app\n"
        "      dockerfile: Dockerfile.dev\n"
        "      target: runtime\n"
        "      args:\n"
        "        VERSION: \"2\"\n"
        "        FROM_ENV:\n"
        "  db:\n"
        "    image: busybox\n"
        "    build: ./db\n");
  auto p = load({"compose.yaml"}, {}, {{"FROM_ENV", "e"}});
  ASSERT_TRUE(p.has_value()) << p.error().what();
  const Service* web = p->find("web");
  ASSERT_NE(web, nullptr);
  ASSERT_TRUE(web->build.has_value());
  EXPECT_EQ(web->image, "shop-web");  // no image: named after the project and the service
  EXPECT_EQ(web->build->context, dir_ + "/app");
  EXPECT_EQ(web->build->dockerfile, "Dockerfile.dev");
  EXPECT_EQ(web->build->target, "runtime");
  EXPECT_EQ(web->build->args,
            (std::vector<std::pair<std::string, std::string>>{{"VERSION", "2"}, {"FROM_ENV", "e"}}));
  const Service* db = p->find("db");
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->image, "busybox");  // an image: the built one is tagged so
  EXPECT_EQ(db->build->context, dir_ + "/db");
  EXPECT_TRUE(p->warnings.empty());
}

}  // namespace
}  // namespace kern::compose
