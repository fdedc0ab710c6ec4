// The config-only Dockerfile instructions (cli/build_config.h) applied to an image's config
// document as Docker applies them: each instruction parsed from its Dockerfile text, the config
// and the history text checked whole.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/build_config.h"
#include "oci/build/dockerfile.h"

namespace kern::cli {
namespace {

using json = nlohmann::json;
using Args = std::map<std::string, std::string>;

class BuildConfigTest : public ::testing::Test {
 protected:
  // Parses `text` as line 7 of a Dockerfile and applies it to image_; the history text.
  Result<std::string> apply(const std::string& text, const Args& args = {}) {
    auto in = oci::build::parse_instruction(text, 7, '\\');
    if (!in) return fail(in.error());  // refused by the parser already
    return apply_config_instruction(image_, *in, args, '\\');
  }
  // Applies `text`, which must succeed; its history text.
  std::string ok(const std::string& text, const Args& args = {}) {
    auto r = apply(text, args);
    EXPECT_TRUE(r) << text << ": " << r.error().what();
    return r ? *r : "(failed)";
  }
  // Applies `text`, which must fail as a usage error and leave the config as it was; its message.
  std::string bad(const std::string& text, const Args& args = {}) {
    json before = image_;
    auto r = apply(text, args);
    EXPECT_FALSE(r) << text << " -> " << (r ? *r : "");
    if (r) return "";
    EXPECT_EQ(r.error().kind(), ErrorKind::usage) << r.error().what();
    EXPECT_EQ(image_["config"], before["config"]) << text;
    return r.error().what();
  }
  const json& config() { return image_["config"]; }

  json image_ = json{{"architecture", "amd64"}, {"os", "linux"}, {"config", json::object()}};
};

TEST_F(BuildConfigTest, EnvPairsAndTheLegacyForm) {
  EXPECT_EQ(ok("ENV A=1 B=\"two words\" C=three\\ words"), "ENV A=1 B=two words C=three words");
  EXPECT_EQ(ok("ENV NAME some value here"), "ENV NAME=some value here");
  EXPECT_EQ(config()["Env"], (json{"A=1", "B=two words", "C=three words", "NAME=some value here"}));
}

TEST_F(BuildConfigTest, EnvReplacesInPlace) {
  image_["config"]["Env"] = {"PATH=/usr/bin:/bin", "A=0", "Z=z"};
  ok("ENV A=1 NEW=n");
  EXPECT_EQ(config()["Env"], (json{"PATH=/usr/bin:/bin", "A=1", "Z=z", "NEW=n"}));
}

TEST_F(BuildConfigTest, EnvExpandsEarlierEnvAndArgs) {
  ok("ENV BASE=/opt");
  EXPECT_EQ(ok("ENV BIN=$BASE/bin LIB=${BASE}/lib ESC=\\$BASE"), "ENV BIN=/opt/bin LIB=/opt/lib ESC=$BASE");
  // An ARG in scope.
  EXPECT_EQ(ok("ENV FROMARG=${VERSION}", {{"VERSION", "1.2"}}), "ENV FROMARG=1.2");
  // An ENV of the same name wins over the ARG.
  EXPECT_EQ(ok("ENV SEEN=$BASE", {{"BASE", "/from-arg"}}), "ENV SEEN=/opt");
  // Each pair sees the values from before the instruction.
  EXPECT_EQ(ok("ENV BASE=/new OLD=$BASE"), "ENV BASE=/new OLD=/opt");
  EXPECT_EQ(env_value(image_, "BASE"), "/new");
  EXPECT_EQ(env_value(image_, "OLD"), "/opt");
  EXPECT_EQ(env_value(image_, "UNSET_NAME"), std::nullopt);
  // Unset: empty; a default applies.
  EXPECT_EQ(ok("ENV E=[$NOPE] D=${NOPE:-dflt}"), "ENV E=[] D=dflt");
}

TEST_F(BuildConfigTest, EnvWithoutValueIsRefused) {
  std::string err = bad("ENV A=1 B");
  EXPECT_NE(err.find("\"B\""), std::string::npos) << err;
  EXPECT_EQ(config().find("Env"), config().end());
}

TEST_F(BuildConfigTest, EnvHelpers) {
  json img = json::object();
  EXPECT_EQ(env_value(img, "A"), std::nullopt);
  set_env(img, "A", "1");
  set_env(img, "AB", "2");
  set_env(img, "A", "3");
  EXPECT_EQ(img["config"]["Env"], (json{"A=3", "AB=2"}));
  EXPECT_EQ(env_value(img, "A"), "3");
  EXPECT_EQ(env_value(img, "AB"), "2");
  EXPECT_EQ(env_value(img, "ABC"), std::nullopt);
  set_env(img, "EMPTY", "");
  EXPECT_EQ(env_value(img, "EMPTY"), "");
  Args args{{"A", "from-arg"}, {"ONLYARG", "x"}};
  oci::build::Lookup look = build_lookup(img, args);
  EXPECT_EQ(look("A"), "3");
  EXPECT_EQ(look("ONLYARG"), "x");
  EXPECT_EQ(look("NEITHER"), std::nullopt);
}

TEST_F(BuildConfigTest, Labels) {
  EXPECT_EQ(ok("LABEL a=b \"c d\"=\"e f\" version=$V", {{"V", "2"}}), "LABEL a=b c d=e f version=2");
  ok("LABEL a=replaced");
  EXPECT_EQ(config()["Labels"], (json{{"a", "replaced"}, {"c d", "e f"}, {"version", "2"}}));
  EXPECT_EQ(config().find("Env"), config().end());
}

TEST_F(BuildConfigTest, WorkdirJoins) {
  EXPECT_EQ(join_workdir("/x", "a"), "/x/a");
  EXPECT_EQ(join_workdir("/x/y", "../z"), "/x/z");
  EXPECT_EQ(join_workdir("/x", "/abs/./b/"), "/abs/b");
  EXPECT_EQ(join_workdir("", "a"), "/a");
  EXPECT_EQ(join_workdir("/", "../.."), "/");
  EXPECT_EQ(join_workdir("/x", ""), "/x");
  EXPECT_EQ(ok("WORKDIR /x"), "WORKDIR /x");
  EXPECT_EQ(ok("WORKDIR a"), "WORKDIR /x/a");
  EXPECT_EQ(ok("WORKDIR ../b//c/."), "WORKDIR /x/b/c");
  EXPECT_EQ(config()["WorkingDir"], "/x/b/c");
  ok("ENV D=/srv");
  EXPECT_EQ(ok("WORKDIR $D/app"), "WORKDIR /srv/app");
  EXPECT_EQ(ok("WORKDIR /my dir"), "WORKDIR /my dir");
}

TEST_F(BuildConfigTest, UserAndStopsignal) {
  EXPECT_EQ(ok("USER app:staff"), "USER app:staff");
  EXPECT_EQ(config()["User"], "app:staff");
  EXPECT_EQ(ok("USER ${U}", {{"U", "1000"}}), "USER 1000");
  EXPECT_EQ(config()["User"], "1000");
  EXPECT_EQ(ok("STOPSIGNAL SIGQUIT"), "STOPSIGNAL SIGQUIT");
  EXPECT_EQ(config()["StopSignal"], "SIGQUIT");
}

TEST_F(BuildConfigTest, CmdAndEntrypointForms) {
  EXPECT_EQ(build_shell(image_), (std::vector<std::string>{"/bin/sh", "-c"}));
  EXPECT_EQ(ok("CMD echo \"hi there\""), "CMD [\"/bin/sh\",\"-c\",\"echo \\\"hi there\\\"\"]");
  EXPECT_EQ(config()["Cmd"], (json{"/bin/sh", "-c", "echo \"hi there\""}));
  EXPECT_EQ(ok("CMD [\"/bin/app\", \"--flag\"]"), "CMD [\"/bin/app\",\"--flag\"]");
  EXPECT_EQ(config()["Cmd"], (json{"/bin/app", "--flag"}));
  // SHELL changes the shell form.
  EXPECT_EQ(ok("SHELL [\"/bin/bash\", \"-lc\"]"), "SHELL [\"/bin/bash\",\"-lc\"]");
  EXPECT_EQ(config()["Shell"], (json{"/bin/bash", "-lc"}));
  EXPECT_EQ(build_shell(image_), (std::vector<std::string>{"/bin/bash", "-lc"}));
  ok("ENTRYPOINT exec app");
  EXPECT_EQ(config()["Entrypoint"], (json{"/bin/bash", "-lc", "exec app"}));
  bad("SHELL /bin/bash -c");
}

TEST_F(BuildConfigTest, EntrypointDropsTheInheritedCmd) {
  image_["config"]["Cmd"] = {"/bin/sh"};
  EXPECT_EQ(ok("ENTRYPOINT [\"/entry\"]"), "ENTRYPOINT [\"/entry\"]");
  EXPECT_EQ(config()["Entrypoint"], json{"/entry"});
  EXPECT_EQ(config().find("Cmd"), config().end());
  // A CMD after it stays.
  ok("CMD [\"serve\"]");
  EXPECT_EQ(config()["Cmd"], json{"serve"});
  EXPECT_EQ(config()["Entrypoint"], json{"/entry"});
}

TEST_F(BuildConfigTest, Expose) {
  EXPECT_EQ(ok("EXPOSE 80 443/tcp 53/udp $P", {{"P", "8080"}}), "EXPOSE 80/tcp 443/tcp 53/udp 8080/tcp");
  EXPECT_EQ(config()["ExposedPorts"],
            (json{{"80/tcp", json::object()}, {"443/tcp", json::object()}, {"53/udp", json::object()},
                  {"8080/tcp", json::object()}}));
  for (const char* b : {"EXPOSE http", "EXPOSE 80/xyz", "EXPOSE /tcp", "EXPOSE"}) {
    std::string err = bad(b);
    EXPECT_NE(err.find("EXPOSE"), std::string::npos) << err;
  }
  std::string err = bad("EXPOSE 80 8o");
  EXPECT_NE(err.find("8o"), std::string::npos) << err;
  EXPECT_NE(err.find("Dockerfile line 7"), std::string::npos) << err;
  EXPECT_EQ(config()["ExposedPorts"].size(), 4u);
}

TEST_F(BuildConfigTest, Volumes) {
  EXPECT_EQ(ok("VOLUME /data /cache"), "VOLUME /data /cache");
  EXPECT_EQ(ok("VOLUME [\"/a b\", \"/c\"]"), "VOLUME /a b /c");
  EXPECT_EQ(config()["Volumes"], (json{{"/data", json::object()}, {"/cache", json::object()},
                                       {"/a b", json::object()}, {"/c", json::object()}}));
}

TEST_F(BuildConfigTest, HealthcheckNone) {
  EXPECT_EQ(ok("HEALTHCHECK NONE"), "HEALTHCHECK NONE");
  EXPECT_EQ(config()["Healthcheck"], (json{{"Test", {"NONE"}}}));
  bad("HEALTHCHECK --interval=5s NONE");
}

TEST_F(BuildConfigTest, HealthcheckExecFormWithDurations) {
  ok("HEALTHCHECK --interval=30s --timeout=5s --start-period=1m30s --retries=3 CMD [\"curl\", \"-f\", \"http://localhost/\"]");
  EXPECT_EQ(config()["Healthcheck"], (json{{"Test", {"CMD", "curl", "-f", "http://localhost/"}},
                                          {"Interval", 30000000000LL},
                                          {"Timeout", 5000000000LL},
                                          {"StartPeriod", 90000000000LL},
                                          {"Retries", 3}}));
}

TEST_F(BuildConfigTest, HealthcheckShellForm) {
  EXPECT_EQ(ok("HEALTHCHECK --interval=500ms CMD curl -f http://localhost/ || exit 1"),
            "HEALTHCHECK CMD curl -f http://localhost/ || exit 1");
  EXPECT_EQ(config()["Healthcheck"],
            (json{{"Test", {"CMD-SHELL", "curl -f http://localhost/ || exit 1"}}, {"Interval", 500000000LL}}));
  // A later HEALTHCHECK replaces it whole.
  ok("HEALTHCHECK CMD true");
  EXPECT_EQ(config()["Healthcheck"], (json{{"Test", {"CMD-SHELL", "true"}}}));
}

TEST_F(BuildConfigTest, HealthcheckStartInterval) {
  auto r = apply("HEALTHCHECK --start-interval=2s CMD true");
  ASSERT_TRUE(r) << r.error().what();
  auto it = config()["Healthcheck"].find("StartInterval");
  ASSERT_NE(it, config()["Healthcheck"].end()) << config()["Healthcheck"].dump();
  EXPECT_EQ(*it, 2000000000LL);
}

TEST_F(BuildConfigTest, HealthcheckErrors) {
  std::string err = bad("HEALTHCHECK --interval=abc CMD true");
  EXPECT_NE(err.find("--interval=abc"), std::string::npos) << err;
  EXPECT_NE(err.find("Dockerfile line 7"), std::string::npos) << err;
  err = bad("HEALTHCHECK --timeout=5parsecs CMD true");
  EXPECT_NE(err.find("--timeout=5parsecs"), std::string::npos) << err;
  err = bad("HEALTHCHECK --retries=many CMD true");
  EXPECT_NE(err.find("--retries=many"), std::string::npos) << err;
  err = bad("HEALTHCHECK --bogus=1 CMD true");
  EXPECT_NE(err.find("--bogus"), std::string::npos) << err;
  bad("HEALTHCHECK CMD");
  bad("HEALTHCHECK RUN true");
  EXPECT_EQ(config().find("Healthcheck"), config().end());
}

TEST_F(BuildConfigTest, Onbuild) {
  EXPECT_EQ(ok("ONBUILD RUN echo hi"), "ONBUILD RUN echo hi");
  EXPECT_EQ(ok("ONBUILD COPY . /app/"), "ONBUILD COPY . /app/");
  EXPECT_EQ(config()["OnBuild"], (json{"RUN echo hi", "COPY . /app/"}));
  for (const char* b : {"ONBUILD FROM alpine", "ONBUILD from alpine", "ONBUILD ONBUILD RUN x", "ONBUILD MAINTAINER me"}) {
    std::string err = bad(b);
    EXPECT_NE(err.find("ONBUILD"), std::string::npos) << err;
  }
  EXPECT_EQ(config()["OnBuild"].size(), 2u);
  // The refusal of apply_config_instruction itself, for an instruction that did not come
  // through the parser (kern commit --change).
  oci::build::Instruction in;
  in.keyword = "ONBUILD";
  in.text = "FROM alpine";
  in.args = {"FROM alpine"};
  in.line = 3;
  auto r = apply_config_instruction(image_, in, {}, '\\');
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::usage);
  EXPECT_NE(r.error().what().find("FROM"), std::string::npos) << r.error().what();
  EXPECT_NE(r.error().what().find("Dockerfile line 3"), std::string::npos) << r.error().what();
  EXPECT_EQ(config()["OnBuild"].size(), 2u);
}

TEST_F(BuildConfigTest, Maintainer) {
  EXPECT_EQ(ok("MAINTAINER Jane Doe <jane@example.com>"), "MAINTAINER Jane Doe <jane@example.com>");
  EXPECT_EQ(image_["author"], "Jane Doe <jane@example.com>");
}

TEST_F(BuildConfigTest, WhichInstructionsAreConfigOnly) {
  for (const char* k : {"ENV", "LABEL", "WORKDIR", "USER", "CMD", "ENTRYPOINT", "EXPOSE", "VOLUME", "STOPSIGNAL",
                        "HEALTHCHECK", "SHELL", "ONBUILD", "MAINTAINER"})
    EXPECT_TRUE(config_instruction(k)) << k;
  for (const char* k : {"RUN", "COPY", "ADD", "FROM", "ARG", "env", ""}) EXPECT_FALSE(config_instruction(k)) << k;
}

TEST_F(BuildConfigTest, FlagsAreRefusedWhereNoneExist) {
  for (const char* b : {"ENV --x=1 A=1", "CMD --x=1 true", "USER --x=1 app", "EXPOSE --x=1 80"}) bad(b);
}

TEST_F(BuildConfigTest, MissingConfigObjectIsMade) {
  image_ = json{{"architecture", "amd64"}};
  ok("USER nobody");
  EXPECT_EQ(image_["config"], (json{{"User", "nobody"}}));
}

}  // namespace
}  // namespace kern::cli
