// The Dockerfile parser and variable expansion of `kern build` (oci/build/dockerfile.h).
#include <gtest/gtest.h>

#include <map>

#include "oci/build/dockerfile.h"

namespace kern::oci::build {
namespace {

using Words = std::vector<std::string>;

Dockerfile parse_ok(std::string_view text) {
  auto r = parse_dockerfile(text);
  EXPECT_TRUE(r) << (r ? "" : r.error().what());
  return r ? *r : Dockerfile{};
}

std::string parse_err(std::string_view text) {
  auto r = parse_dockerfile(text);
  EXPECT_FALSE(r);
  if (r) return "";
  EXPECT_EQ(r.error().kind(), ErrorKind::usage);
  return r.error().message();
}

Lookup vars(std::map<std::string, std::string> m) {
  return [m = std::move(m)](std::string_view name) -> std::optional<std::string> {
    auto it = m.find(std::string(name));
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

const Lookup kNone = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };

std::string ex(std::string_view w, const Lookup& l, char esc = '\\') {
  auto r = expand(w, l, esc);
  return r ? *r : "ERROR: " + r.error().message();
}

Words split(std::string_view w, const Lookup& l, bool expand_vars = true, char esc = '\\') {
  auto r = split_words(w, l, esc, expand_vars);
  return r ? *r : Words{"ERROR: " + r.error().message()};
}

TEST(OciDockerfile, MultiStageWithArgBeforeFrom) {
  auto df = parse_ok(
      "# syntax=docker/dockerfile:1\n"
      "ARG GO_VERSION=1.22\n"
      "FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} as Build\n"
      "WORKDIR /src\n"
      "COPY --from=build --chown=1000:1000 /out/app /usr/local/bin/\n"
      "from scratch AS final\n");
  EXPECT_EQ(df.syntax, "docker/dockerfile:1");
  EXPECT_EQ(df.escape, '\\');
  ASSERT_EQ(df.instructions.size(), 5u);
  const auto& arg = df.instructions[0];
  EXPECT_EQ(arg.keyword, "ARG");
  EXPECT_EQ(arg.line, 2);
  EXPECT_EQ(arg.args, Words{"GO_VERSION=1.22"});
  const auto& from = df.instructions[1];
  EXPECT_EQ(from.keyword, "FROM");
  EXPECT_EQ(from.line, 3);
  ASSERT_EQ(from.flags.size(), 1u);
  EXPECT_EQ(from.flags[0].name, "platform");
  EXPECT_EQ(from.flags[0].value, "$BUILDPLATFORM");
  EXPECT_TRUE(from.flags[0].has_value);
  EXPECT_EQ(from.args, (Words{"golang:${GO_VERSION}", "as", "Build"}));
  EXPECT_EQ(from.text, "golang:${GO_VERSION} as Build");
  EXPECT_EQ(from.source, "FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} as Build");
  EXPECT_EQ(df.instructions[2].args, Words{"/src"});
  const auto& copy = df.instructions[3];
  ASSERT_EQ(copy.flags.size(), 2u);
  EXPECT_EQ(copy.flags[0].name, "from");
  EXPECT_EQ(copy.flags[0].value, "build");
  EXPECT_EQ(copy.flags[1].name, "chown");
  EXPECT_EQ(copy.flags[1].value, "1000:1000");
  EXPECT_EQ(copy.args, (Words{"/out/app", "/usr/local/bin/"}));
  EXPECT_FALSE(copy.json);
  EXPECT_EQ(df.instructions[4].keyword, "FROM");
  EXPECT_EQ(df.instructions[4].args, (Words{"scratch", "AS", "final"}));
  EXPECT_EQ(df.instructions[4].line, 6);
}

TEST(OciDockerfile, KeywordsAreCaseInsensitive) {
  auto df = parse_ok("fRoM alpine\nrun echo hi\nEntryPoint [\"sh\"]\n");
  ASSERT_EQ(df.instructions.size(), 3u);
  EXPECT_EQ(df.instructions[0].keyword, "FROM");
  EXPECT_EQ(df.instructions[1].keyword, "RUN");
  EXPECT_EQ(df.instructions[2].keyword, "ENTRYPOINT");
  EXPECT_TRUE(df.instructions[2].json);
}

TEST(OciDockerfile, ContinuationWithCommentsAndEmptyLines) {
  auto df = parse_ok(
      "FROM debian\n"
      "RUN apt-get update && \\\n"
      "    # the packages we need\n"
      "    apt-get install -y \\\n"
      "\n"
      "  # another comment\n"
      "        curl \\   \n"
      "        git\n"
      "CMD [\"bash\"]\n");
  ASSERT_EQ(df.instructions.size(), 3u);
  const auto& run = df.instructions[1];
  EXPECT_EQ(run.line, 2);
  EXPECT_FALSE(run.json);
  EXPECT_EQ(run.args, Words{"apt-get update &&     apt-get install -y         curl         git"});
  EXPECT_EQ(run.text, run.args[0]);
  EXPECT_EQ(run.source, "RUN apt-get update &&     apt-get install -y         curl         git");
  EXPECT_EQ(df.instructions[2].line, 9);
}

TEST(OciDockerfile, CommentsAndBlankLinesAreSkipped) {
  auto df = parse_ok("\n# a comment\n   # indented comment\nFROM x\n\n\t\nRUN a # not a comment\n");
  ASSERT_EQ(df.instructions.size(), 2u);
  EXPECT_EQ(df.instructions[1].args, Words{"a # not a comment"});
  EXPECT_EQ(df.instructions[1].line, 7);
}

TEST(OciDockerfile, EscapeDirectiveBacktick) {
  auto df = parse_ok(
      "# escape=`\n"
      "\n"
      "FROM mcr.microsoft.com/windows/servercore\n"
      "COPY testfile.txt c:\\\n"
      "RUN dir c:\\ `\n"
      "    && echo done\n");
  EXPECT_EQ(df.escape, '`');
  ASSERT_EQ(df.instructions.size(), 3u);
  // With ` as escape, a trailing backslash is an ordinary character.
  EXPECT_EQ(df.instructions[1].args, (Words{"testfile.txt", "c:\\"}));
  EXPECT_EQ(df.instructions[2].args, Words{"dir c:\\     && echo done"});
}

TEST(OciDockerfile, DirectivesOnlyAtTheTop) {
  // Case-insensitive, blanks allowed around =.
  auto df = parse_ok("#  ESCAPE = `\n# Syntax=docker/dockerfile:1.7\nFROM x\n");
  EXPECT_EQ(df.escape, '`');
  EXPECT_EQ(df.syntax, "docker/dockerfile:1.7");
  // After a comment, a blank line, an unknown directive or an instruction, it is a comment.
  EXPECT_EQ(parse_ok("# hello\n# escape=`\nFROM x\n").escape, '\\');
  EXPECT_EQ(parse_ok("\n# escape=`\nFROM x\n").escape, '\\');
  EXPECT_EQ(parse_ok("# unknown=1\n# escape=`\nFROM x\n").escape, '\\');
  auto late = parse_ok("FROM x\n# escape=`\nRUN a `\n");
  EXPECT_EQ(late.escape, '\\');
  ASSERT_EQ(late.instructions.size(), 2u);
  EXPECT_EQ(late.instructions[1].args, Words{"a `"});
}

TEST(OciDockerfile, DirectiveErrors) {
  EXPECT_EQ(parse_err("# escape=`\n# escape=\\\nFROM x\n"), "Dockerfile line 2: only one escape directive may be used");
  EXPECT_EQ(parse_err("# escape=x\nFROM x\n"), "Dockerfile line 1: invalid escape character 'x': must be ` or \\");
}

TEST(OciDockerfile, UnknownInstructionWithHint) {
  EXPECT_EQ(parse_err("FROM x\nRUNN echo\n"), "Dockerfile line 2: unknown instruction RUNN (did you mean RUN?)");
  EXPECT_EQ(parse_err("FROM x\n\nworkdirr /a\n"),
            "Dockerfile line 3: unknown instruction workdirr (did you mean WORKDIR?)");
  EXPECT_EQ(parse_err("FROM x\nFROBNICATE y\n"), "Dockerfile line 2: unknown instruction FROBNICATE");
}

TEST(OciDockerfile, MissingArguments) {
  EXPECT_EQ(parse_err("FROM\n"), "Dockerfile line 1: FROM requires at least one argument");
  auto df = parse_ok("FROM x\nCMD\n");
  ASSERT_EQ(df.instructions.size(), 2u);
  EXPECT_TRUE(df.instructions[1].args.empty());
  EXPECT_FALSE(df.instructions[1].json);
}

TEST(OciDockerfile, JsonFormWithSpacesAndEscapes) {
  auto df = parse_ok(
      "FROM x\n"
      "ENTRYPOINT [ \"/bin/my app\", \"--name=\\\"q\\\"\", \"tab\\there\", \"\\u00e9\" ]\n"
      "CMD []\n"
      "RUN [\"a\", 1]\n"
      "RUN [not json]\n"
      "CMD [\"unterminated\"\n"
      "SHELL [\"powershell\", \"-Command\"]\n"
      "COPY [\"a b.txt\", \"/dst dir/\"]\n"
      "VOLUME [\"/data\", \"/logs\"]\n"
      "VOLUME /a /b\n");
  const auto& in = df.instructions;
  ASSERT_EQ(in.size(), 10u);
  EXPECT_TRUE(in[1].json);
  EXPECT_EQ(in[1].args, (Words{"/bin/my app", "--name=\"q\"", "tab\there", "\xC3\xA9"}));
  EXPECT_TRUE(in[2].json);
  EXPECT_TRUE(in[2].args.empty());
  // Not an array of strings: shell form, not an error.
  EXPECT_FALSE(in[3].json);
  EXPECT_EQ(in[3].args, Words{"[\"a\", 1]"});
  EXPECT_FALSE(in[4].json);
  EXPECT_EQ(in[4].args, Words{"[not json]"});
  EXPECT_FALSE(in[5].json);
  EXPECT_EQ(in[5].args, Words{"[\"unterminated\""});
  EXPECT_TRUE(in[6].json);
  EXPECT_EQ(in[6].args, (Words{"powershell", "-Command"}));
  EXPECT_TRUE(in[7].json);
  EXPECT_EQ(in[7].args, (Words{"a b.txt", "/dst dir/"}));
  EXPECT_TRUE(in[8].json);
  EXPECT_EQ(in[8].args, (Words{"/data", "/logs"}));
  EXPECT_FALSE(in[9].json);
  EXPECT_EQ(in[9].args, (Words{"/a", "/b"}));
}

TEST(OciDockerfile, RunFlagsAndQuotedFlagValues) {
  auto df = parse_ok(
      "FROM x\n"
      "RUN --mount=type=cache,target=/root/.cache \\\n"
      "    --network=none --mount=type=secret,id=\"my key\" pip install -r req.txt\n"
      "RUN --privileged [\"sh\", \"-c\", \"true\"]\n"
      "COPY -- --weird-name /dst\n");
  const auto& run = df.instructions[1];
  ASSERT_EQ(run.flags.size(), 3u);
  EXPECT_EQ(run.flags[0].name, "mount");
  EXPECT_EQ(run.flags[0].value, "type=cache,target=/root/.cache");
  EXPECT_EQ(run.flags[1].name, "network");
  EXPECT_EQ(run.flags[1].value, "none");
  EXPECT_EQ(run.flags[2].value, "type=secret,id=my key");
  EXPECT_EQ(run.args, Words{"pip install -r req.txt"});
  EXPECT_EQ(run.text, "pip install -r req.txt");
  const auto& run2 = df.instructions[2];
  ASSERT_EQ(run2.flags.size(), 1u);
  EXPECT_EQ(run2.flags[0].name, "privileged");
  EXPECT_FALSE(run2.flags[0].has_value);
  EXPECT_EQ(run2.flags[0].value, "");
  EXPECT_TRUE(run2.json);
  EXPECT_EQ(run2.args, (Words{"sh", "-c", "true"}));
  const auto& copy = df.instructions[3];
  EXPECT_TRUE(copy.flags.empty());
  EXPECT_EQ(copy.args, (Words{"--weird-name", "/dst"}));
}

TEST(OciDockerfile, OtherKeywordsKeepWordsAsWritten) {
  auto df = parse_ok(
      "FROM x\n"
      "ENV a=1 b=\"x y\" c=$a\n"
      "LABEL \"com.example.vendor\"=\"ACME Inc\" version=1.0\n"
      "EXPOSE 80/tcp 443\n"
      "WORKDIR /my dir/$sub\n"
      "USER app:app\n"
      "STOPSIGNAL SIGTERM\n"
      "MAINTAINER Jane Doe <jane@example.com>\n"
      "ADD --chmod=644 'a b' c\\ d /dst/\n");
  const auto& in = df.instructions;
  ASSERT_EQ(in.size(), 9u);
  EXPECT_EQ(in[1].args, (Words{"a=1", "b=\"x y\"", "c=$a"}));
  EXPECT_EQ(in[1].text, "a=1 b=\"x y\" c=$a");
  EXPECT_EQ(in[2].args, (Words{"\"com.example.vendor\"=\"ACME Inc\"", "version=1.0"}));
  EXPECT_EQ(in[3].args, (Words{"80/tcp", "443"}));
  EXPECT_EQ(in[4].args, Words{"/my dir/$sub"});
  EXPECT_EQ(in[5].args, Words{"app:app"});
  EXPECT_EQ(in[6].args, Words{"SIGTERM"});
  EXPECT_EQ(in[7].args, Words{"Jane Doe <jane@example.com>"});
  EXPECT_EQ(in[8].args, (Words{"'a b'", "c\\ d", "/dst/"}));
  EXPECT_EQ(in[8].flags[0].value, "644");
}

TEST(OciDockerfile, Healthcheck) {
  auto df = parse_ok(
      "FROM x\n"
      "HEALTHCHECK --interval=5m --timeout=3s CMD curl -f http://localhost/ || exit 1\n"
      "HEALTHCHECK cmd [\"/bin/check\", \"-q\"]\n"
      "HEALTHCHECK NONE\n");
  const auto& h = df.instructions[1];
  ASSERT_EQ(h.flags.size(), 2u);
  EXPECT_EQ(h.flags[1].name, "timeout");
  EXPECT_EQ(h.args, (Words{"CMD", "curl -f http://localhost/ || exit 1"}));
  EXPECT_FALSE(h.json);
  EXPECT_TRUE(df.instructions[2].json);
  EXPECT_EQ(df.instructions[2].args, (Words{"CMD", "/bin/check", "-q"}));
  EXPECT_EQ(df.instructions[3].args, Words{"NONE"});
  EXPECT_EQ(parse_err("FROM x\nHEALTHCHECK RUN true\n"), "Dockerfile line 2: HEALTHCHECK RUN: expected CMD or NONE");
}

TEST(OciDockerfile, OnbuildKeepsItsInstruction) {
  auto df = parse_ok("FROM x\nONBUILD   COPY --chown=a . /app/src\nonbuild run make\n");
  const auto& o = df.instructions[1];
  EXPECT_EQ(o.keyword, "ONBUILD");
  EXPECT_EQ(o.text, "COPY --chown=a . /app/src");
  EXPECT_EQ(o.args, Words{"COPY --chown=a . /app/src"});
  EXPECT_TRUE(o.flags.empty());
  auto inner = parse_instruction(o.text, o.line, '\\');
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->keyword, "COPY");
  EXPECT_EQ(inner->flags[0].name, "chown");
  EXPECT_EQ(inner->args, (Words{".", "/app/src"}));
  EXPECT_EQ(df.instructions[2].text, "run make");
  EXPECT_EQ(parse_err("FROM x\nONBUILD ONBUILD RUN a\n"), "Dockerfile line 2: ONBUILD ONBUILD is not allowed");
  EXPECT_EQ(parse_err("FROM x\nONBUILD FROM y\n"), "Dockerfile line 2: ONBUILD may not trigger FROM");
  EXPECT_EQ(parse_err("FROM x\nONBUILD RUM a\n"), "Dockerfile line 2: unknown instruction RUM (did you mean RUN?)");
}

TEST(OciDockerfile, HeredocRunScript) {
  auto df = parse_ok(
      "FROM x\n"
      "RUN <<EOF\n"
      "#!/bin/sh\n"
      "# not a comment for the parser\n"
      "  echo \"$HOME\" \\\n"
      "\n"
      "EOF\n"
      "RUN echo after\n");
  ASSERT_EQ(df.instructions.size(), 3u);
  const auto& run = df.instructions[1];
  EXPECT_EQ(run.args, Words{"<<EOF"});
  ASSERT_EQ(run.heredocs.size(), 1u);
  EXPECT_EQ(run.heredocs[0].name, "EOF");
  EXPECT_EQ(run.heredocs[0].body, "#!/bin/sh\n# not a comment for the parser\n  echo \"$HOME\" \\\n\n");
  EXPECT_TRUE(run.heredocs[0].expand);
  EXPECT_FALSE(run.heredocs[0].strip_tabs);
  EXPECT_EQ(df.instructions[2].line, 8);
  EXPECT_EQ(df.instructions[2].args, Words{"echo after"});
}

TEST(OciDockerfile, HeredocWithCommandAsStdin) {
  auto df = parse_ok(
      "FROM python\n"
      "RUN python3 <<EOF\n"
      "print('hi')\n"
      "EOF\n");
  const auto& run = df.instructions[1];
  EXPECT_EQ(run.args, Words{"python3 <<EOF"});
  ASSERT_EQ(run.heredocs.size(), 1u);
  EXPECT_EQ(run.heredocs[0].body, "print('hi')\n");
}

TEST(OciDockerfile, HeredocQuotedAndTabStripped) {
  auto df = parse_ok(
      "FROM x\n"
      "RUN <<-'END' bash\n"
      "\t\techo $A\n"
      "\tnot\tstripped inside\n"
      "\t\tEND\n"
      "RUN cat <<\"EOF\"\n"
      "$B\n"
      "EOF\n"
      "RUN cat <<E\"O\"F\n"
      "x\n"
      "EOF\n");
  const auto& a = df.instructions[1];
  ASSERT_EQ(a.heredocs.size(), 1u);
  EXPECT_EQ(a.heredocs[0].name, "END");
  EXPECT_TRUE(a.heredocs[0].strip_tabs);
  EXPECT_FALSE(a.heredocs[0].expand);
  EXPECT_EQ(a.heredocs[0].body, "echo $A\nnot\tstripped inside\n");
  EXPECT_EQ(df.instructions[2].heredocs[0].name, "EOF");
  EXPECT_FALSE(df.instructions[2].heredocs[0].expand);
  EXPECT_EQ(df.instructions[2].heredocs[0].body, "$B\n");
  EXPECT_EQ(df.instructions[3].heredocs[0].name, "EOF");
  EXPECT_FALSE(df.instructions[3].heredocs[0].expand);
  // Without "-", a tab-indented delimiter does not end the heredoc.
  EXPECT_EQ(parse_err("FROM x\nRUN <<EOF\n\tEOF\n"),
            "Dockerfile line 2: unterminated heredoc <<EOF (no line EOF follows)");
}

TEST(OciDockerfile, SeveralHeredocsOnOneLine) {
  auto df = parse_ok(
      "FROM x\n"
      "COPY --chmod=755 <<a.sh <<conf /dst/\n"
      "echo a\n"
      "a.sh\n"
      "key=value\n"
      "conf\n"
      "ENV done=1\n");
  ASSERT_EQ(df.instructions.size(), 3u);
  const auto& copy = df.instructions[1];
  EXPECT_EQ(copy.args, (Words{"<<a.sh", "<<conf", "/dst/"}));
  ASSERT_EQ(copy.heredocs.size(), 2u);
  EXPECT_EQ(copy.heredocs[0].name, "a.sh");
  EXPECT_EQ(copy.heredocs[0].body, "echo a\n");
  EXPECT_EQ(copy.heredocs[1].name, "conf");
  EXPECT_EQ(copy.heredocs[1].body, "key=value\n");
  EXPECT_EQ(df.instructions[2].keyword, "ENV");
  EXPECT_EQ(df.instructions[2].line, 7);
}

TEST(OciDockerfile, HeredocOnlyWhereDockerHasThem) {
  // Exec form, other keywords, quoted markers and here-strings are no heredocs.
  auto df = parse_ok(
      "FROM x\n"
      "RUN [\"cat\", \"<<EOF\"]\n"
      "ENV A <<EOF\n"
      "RUN echo '<<EOF' <<<here\n"
      "ONBUILD RUN <<EOF\n"
      "echo on build\n"
      "EOF\n");
  ASSERT_EQ(df.instructions.size(), 5u);
  EXPECT_TRUE(df.instructions[1].heredocs.empty());
  EXPECT_TRUE(df.instructions[2].heredocs.empty());
  EXPECT_TRUE(df.instructions[3].heredocs.empty());
  ASSERT_EQ(df.instructions[4].heredocs.size(), 1u);
  EXPECT_EQ(df.instructions[4].heredocs[0].body, "echo on build\n");
  EXPECT_EQ(parse_err("FROM x\nCOPY <<a <<b /\nA\na\nB\n"),
            "Dockerfile line 2: unterminated heredoc <<b (no line b follows)");
}

TEST(OciDockerfile, CrlfAndByteOrderMark) {
  auto df = parse_ok(
      "\xEF\xBB\xBF# escape=`\r\n"
      "FROM x\r\n"
      "RUN a `\r\n"
      "  b\r\n"
      "RUN <<EOF\r\n"
      "line\r\n"
      "EOF\r\n");
  EXPECT_EQ(df.escape, '`');
  ASSERT_EQ(df.instructions.size(), 3u);
  EXPECT_EQ(df.instructions[1].args, Words{"a   b"});
  EXPECT_EQ(df.instructions[2].heredocs[0].body, "line\n");
  // No final newline.
  auto last = parse_ok("FROM x\nCMD [\"a\"]");
  ASSERT_EQ(last.instructions.size(), 2u);
  EXPECT_EQ(last.instructions[1].args, Words{"a"});
}

TEST(OciDockerfile, NotUtf8DoesNotCrash) {
  std::string junk = "FROM \xFF\xFE\x80\n\xC3\x28 x\nRUN \xE2\x82 [\"\xFF\"]\nCMD [\"\xC0\xAF\"]\n";
  auto r = parse_dockerfile(junk);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "Dockerfile line 2: unknown instruction \xC3\x28");
  auto ok = parse_ok("FROM \xFF\xFE\x80\nRUN \xE2\x82 [\"\xFF\"]\nCMD [\"\xC0\xAF\"]\nENV a=\xFF\n");
  ASSERT_EQ(ok.instructions.size(), 4u);
  EXPECT_EQ(ok.instructions[0].args, Words{"\xFF\xFE\x80"});
  EXPECT_EQ(ok.instructions[1].args, Words{"\xE2\x82 [\"\xFF\"]"});
  // Not valid JSON text (not UTF-8): shell form, bytes untouched.
  EXPECT_FALSE(ok.instructions[2].json);
  EXPECT_EQ(ok.instructions[2].args, Words{"[\"\xC0\xAF\"]"});
  // Every byte value in every position of a small file: no crash, an answer either way.
  for (int b = 0; b < 256; ++b) {
    std::string t = "FROM a\nRUN x" + std::string(1, static_cast<char>(b)) + "<<E\nE\n" +
                     std::string(1, static_cast<char>(b)) + "\n";
    (void)parse_dockerfile(t);
    (void)expand(std::string("${A:-") + static_cast<char>(b) + "}", kNone, '\\');
    (void)split_words(std::string("'") + static_cast<char>(b), kNone, '\\', true);
  }
}

TEST(OciDockerfile, ExpandForms) {
  auto l = vars({{"A", "1"}, {"EMPTY", ""}, {"P", "/usr"}});
  EXPECT_EQ(ex("$A", l), "1");
  EXPECT_EQ(ex("${A}x", l), "1x");
  EXPECT_EQ(ex("$Ax", l), "");  // the name is Ax
  EXPECT_EQ(ex("$P/bin:$NOPE:", l), "/usr/bin::");
  EXPECT_EQ(ex("${NOPE:-def}", l), "def");
  EXPECT_EQ(ex("${EMPTY:-def}", l), "def");
  EXPECT_EQ(ex("${EMPTY-def}", l), "");
  EXPECT_EQ(ex("${NOPE-def}", l), "def");
  EXPECT_EQ(ex("${A:+alt}", l), "alt");
  EXPECT_EQ(ex("${EMPTY:+alt}", l), "");
  EXPECT_EQ(ex("${EMPTY+alt}", l), "alt");
  EXPECT_EQ(ex("${NOPE+alt}", l), "");
  EXPECT_EQ(ex("${A:-def}", l), "1");
  EXPECT_EQ(ex("a$", l), "a$");
  EXPECT_EQ(ex("$ $-", l), "$ $-");
}

TEST(OciDockerfile, ExpandNestedDefaults) {
  auto l = vars({{"B", "bee"}, {"V", "1.2"}});
  EXPECT_EQ(ex("${A:-${B:-x}}", l), "bee");
  EXPECT_EQ(ex("${A:-${C:-x}}", l), "x");
  EXPECT_EQ(ex("${A:-pre-${B}-post}", l), "pre-bee-post");
  EXPECT_EQ(ex("img:${TAG:-v${V}}", l), "img:v1.2");
  EXPECT_EQ(ex("${B:+[${B}]}", l), "[bee]");
  // The unused word is not evaluated: its ${X:?} does not fail.
  EXPECT_EQ(ex("${B:-${NOPE:?must be set}}", l), "bee");
}

TEST(OciDockerfile, ExpandEscapesAndQuotes) {
  auto l = vars({{"foo", "/bar"}});
  EXPECT_EQ(ex("\\$foo", l), "$foo");
  EXPECT_EQ(ex("\\${foo}", l), "${foo}");
  EXPECT_EQ(ex("`$foo $foo", l, '`'), "$foo /bar");
  EXPECT_EQ(ex("\\$foo", l, '`'), "\\/bar");
  // An escaped escape stays two chars and escapes nothing.
  EXPECT_EQ(ex("\\\\$foo", l), "\\\\/bar");
  // Quotes and other escapes are kept for split_words.
  EXPECT_EQ(ex("\"$foo x\" 'y' a\\ b", l), "\"/bar x\" 'y' a\\ b");
}

TEST(OciDockerfile, ExpandErrors) {
  auto l = vars({{"E", ""}});
  auto r = expand("${A", l, '\\');
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::usage);
  EXPECT_EQ(r.error().message(), "missing } in: ${A");
  EXPECT_EQ(ex("${A:-x", l), "ERROR: missing } in: ${A:-x");
  EXPECT_EQ(ex("${}", l), "ERROR: bad substitution: a ${ without a name in: ${}");
  EXPECT_EQ(ex("${A:=x}", l), "ERROR: unsupported modifier := in ${A...}");
  EXPECT_EQ(ex("${A#x}", l), "ERROR: unsupported modifier # in ${A...}");
  EXPECT_EQ(ex("${E:?needs a value}", l), "ERROR: E: needs a value");
  EXPECT_EQ(ex("${E?needs a value}", l), "");
  EXPECT_EQ(ex("${N?}", l), "ERROR: N: is not set");
}

TEST(OciDockerfile, SplitWords) {
  auto l = vars({{"foo", "/bar"}, {"two", "a  b"}});
  EXPECT_EQ(split("COPY  x\ty  ", l, false), (Words{"COPY", "x", "y"}));
  EXPECT_EQ(split("'a b' \"c d\" e\\ f", l), (Words{"a b", "c d", "e f"}));
  EXPECT_EQ(split("$foo '$foo' \"$foo\" \\$foo", l), (Words{"/bar", "$foo", "/bar", "$foo"}));
  EXPECT_EQ(split("$foo/x", l, false), Words{"$foo/x"});
  // An unquoted expansion splits at its blanks; a quoted one does not.
  EXPECT_EQ(split("$two \"$two\"", l), (Words{"a", "b", "a  b"}));
  EXPECT_EQ(split("x$NOPE y", l), (Words{"x", "y"}));
  EXPECT_EQ(split("\"\" ''", l), (Words{"", ""}));
  EXPECT_EQ(split("a\"b c\"d", l), Words{"ab cd"});
  // Inside double quotes the escape only escapes ", $ and itself.
  EXPECT_EQ(split("\"a\\\"b\\\\c\\d\\$foo\"", l), Words{"a\"b\\c\\d$foo"});
  EXPECT_EQ(split("'it''s'", l), Words{"its"});
  EXPECT_EQ(split("C:\\dir `$foo", l, true, '`'), (Words{"C:\\dir", "$foo"}));
  EXPECT_EQ(split("'open", l)[0].rfind("ERROR: unexpected end of text", 0), 0u);
  EXPECT_EQ(split("\"open", l)[0].rfind("ERROR: unexpected end of text", 0), 0u);
  // As Docker reads it (not as a shell does): the default word's quotes are removed wherever the
  // ${} stands, and an unquoted expansion is then split.
  EXPECT_EQ(split("${foo:-'x y'}", vars({})), (Words{"x", "y"}));
  EXPECT_EQ(split("\"${foo:-'x y'}\"", vars({})), Words{"x y"});
}

TEST(OciDockerfile, KeyValuePairs) {
  auto l = vars({{"a", "1"}, {"HOME", "/root"}});
  auto r = parse_key_values("a=1 b=\"x y\" c=$HOME/x d='$HOME' e= f=a\\ b", l, '\\', true);
  ASSERT_TRUE(r) << r.error().what();
  ASSERT_EQ(r->size(), 6u);
  EXPECT_EQ((*r)[0].key, "a");
  EXPECT_EQ((*r)[0].value, "1");
  EXPECT_EQ((*r)[1].value, "x y");
  EXPECT_EQ((*r)[2].value, "/root/x");
  EXPECT_EQ((*r)[3].value, "$HOME");
  EXPECT_EQ((*r)[4].value, "");
  EXPECT_TRUE((*r)[4].has_value);
  EXPECT_EQ((*r)[5].value, "a b");
  auto quoted_key = parse_key_values("\"com.example.vendor\"=\"ACME Inc\"", l, '\\', true);
  ASSERT_TRUE(quoted_key);
  EXPECT_EQ((*quoted_key)[0].key, "com.example.vendor");
  EXPECT_EQ((*quoted_key)[0].value, "ACME Inc");
}

TEST(OciDockerfile, KeyValueLegacyForm) {
  auto l = vars({{"X", "ex"}});
  auto r = parse_key_values("a x   y $X", l, '\\', true);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].key, "a");
  EXPECT_EQ((*r)[0].value, "x   y ex");
  auto q = parse_key_values("MY_PATH \"/a b\" c", l, '\\', true);
  ASSERT_TRUE(q);
  EXPECT_EQ((*q)[0].value, "/a b c");
  auto one = parse_key_values("lonely", l, '\\', true);
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().message(), "\"lonely\" has a name but no value (use name=value, or name value)");
  auto mixed = parse_key_values("a=1 b", l, '\\', true);
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().message(), "no = in \"b\": each word must be name=value");
}

TEST(OciDockerfile, KeyValueArgForm) {
  auto l = vars({{"V", "3"}});
  auto r = parse_key_values("NAME VERSION=${V:-1}.0 EMPTY=", l, '\\', false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].key, "NAME");
  EXPECT_FALSE((*r)[0].has_value);
  EXPECT_EQ((*r)[1].key, "VERSION");
  EXPECT_EQ((*r)[1].value, "3.0");
  EXPECT_TRUE((*r)[1].has_value);
  EXPECT_TRUE((*r)[2].has_value);
  EXPECT_EQ((*r)[2].value, "");
}

TEST(OciDockerfile, KeyValueErrors) {
  auto e = parse_key_values("=x", kNone, '\\', true);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind(), ErrorKind::usage);
  EXPECT_EQ(e.error().message(), "empty name in \"=x\"");
  EXPECT_FALSE(parse_key_values("", kNone, '\\', false));
  EXPECT_FALSE(parse_key_values("a=\"open", kNone, '\\', true));
  EXPECT_FALSE(parse_key_values("$EMPTY=1", kNone, '\\', true));
}

TEST(OciDockerfile, WholeFileThroughExpansion) {
  // What the builder will do: parse, then expand with the stage's variables.
  auto df = parse_ok(
      "ARG BASE=alpine:3.19\n"
      "FROM ${BASE} AS base\n"
      "ENV APP_HOME=/opt/app \\\n"
      "    PATH=/opt/app/bin:$PATH\n"
      "WORKDIR $APP_HOME\n"
      "COPY [\"src dir/\", \"./\"]\n");
  ASSERT_EQ(df.instructions.size(), 5u);
  auto env = parse_key_values(df.instructions[2].text, vars({{"PATH", "/bin"}}), df.escape, true);
  ASSERT_TRUE(env);
  ASSERT_EQ(env->size(), 2u);
  EXPECT_EQ((*env)[1].key, "PATH");
  EXPECT_EQ((*env)[1].value, "/opt/app/bin:/bin");
  auto from = split_words(df.instructions[1].text, vars({{"BASE", "alpine:3.19"}}), df.escape, true);
  ASSERT_TRUE(from);
  EXPECT_EQ(*from, (Words{"alpine:3.19", "AS", "base"}));
  auto wd = process_word(df.instructions[3].args[0], vars({{"APP_HOME", "/opt/app"}}), df.escape);
  ASSERT_TRUE(wd);
  EXPECT_EQ(*wd, "/opt/app");
}

}  // namespace
}  // namespace kern::oci::build
