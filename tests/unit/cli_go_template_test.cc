// The --format templates of the listing verbs (cli/go_template.h): fields and nested fields,
// json, index, the table header and its alignment, the \t and \n escapes, trim markers, and the
// refusals (usage errors that name the field and list the verb's).
#include <gtest/gtest.h>

#include "cli/go_template.h"

namespace kern::cli {
namespace {

using json = nlohmann::ordered_json;

const std::vector<TemplateField> kFields = {{"ID", "CONTAINER ID"}, {"Names", "NAMES"}, {"State", "STATE"},
                                            {"Labels", "LABELS"}, {"Ports", "PORTS"}};

json row(const std::string& name, int pid) {
  return {{"ID", name},
          {"Names", name},
          {"State", {{"Status", "running"}, {"Pid", pid}, {"Paused", false}}},
          {"Labels", {{"app", "web"}, {"tier", name}}},
          {"Ports", {"0.0.0.0:8080->80/tcp", "0.0.0.0:8443->443/tcp"}}};
}

std::string render(const std::string& text, const std::vector<json>& rows,
                   const std::vector<TemplateField>& fields = kFields) {
  auto t = parse_go_template(text, "kern ps", fields);
  EXPECT_TRUE(t) << text << ": " << (t ? "" : t.error().what());
  if (!t) return "<parse error>";
  auto out = render_rows(*t, rows, "kern ps", fields);
  EXPECT_TRUE(out) << text << ": " << (out ? "" : out.error().what());
  return out ? *out : "<render error>";
}

TEST(GoTemplate, FieldsAndLiteralsOneLineARow) {
  EXPECT_EQ(render("{{.ID}} is {{ .Names }}", {row("a", 1), row("b", 2)}), "a is a\nb is b\n");
  EXPECT_EQ(render("no actions", {row("a", 1)}), "no actions\n");
  EXPECT_EQ(render("{{.ID}}", {}), "");
}

TEST(GoTemplate, NestedFieldsAndValuesAsText) {
  EXPECT_EQ(render("{{.State.Pid}}/{{.State.Status}}/{{.State.Paused}}", {row("a", 42)}, {}), "42/running/false\n");
  // An object as KEY=VALUE pairs, a list joined by ", ", null as <nil>.
  EXPECT_EQ(render("{{.Labels}}", {row("a", 1)}), "app=web,tier=a\n");
  EXPECT_EQ(render("{{.Ports}}", {row("a", 1)}), "0.0.0.0:8080->80/tcp, 0.0.0.0:8443->443/tcp\n");
  EXPECT_EQ(render("{{.X}}", {json{{"X", nullptr}}}, {}), "<nil>\n");
}

TEST(GoTemplate, JsonOfTheRowAndOfAField) {
  EXPECT_EQ(render("{{json .Labels}}", {row("a", 1)}), "{\"app\":\"web\",\"tier\":\"a\"}\n");
  EXPECT_EQ(render("{{json .State.Pid}}", {row("a", 7)}, {}), "7\n");
  EXPECT_EQ(render("{{json .ID}}", {row("a", 1)}), "\"a\"\n");
  json small = {{"ID", "x"}};
  EXPECT_EQ(render("{{json .}}", {small}), "{\"ID\":\"x\"}\n");
  // Plain "json": each row as one compact line.
  EXPECT_EQ(render("json", {small, small}), "{\"ID\":\"x\"}\n{\"ID\":\"x\"}\n");
}

TEST(GoTemplate, IndexOfObjectsAndLists) {
  EXPECT_EQ(render("{{index .Labels \"tier\"}}", {row("b", 1)}), "b\n");
  EXPECT_EQ(render("{{index .Labels \"absent\"}}|", {row("b", 1)}), "|\n");  // Go: the zero value
  EXPECT_EQ(render("{{index .Ports 1}}", {row("b", 1)}), "0.0.0.0:8443->443/tcp\n");
  auto t = parse_go_template("{{index .ID \"k\"}}", "kern ps", kFields);
  ASSERT_TRUE(t);
  auto out = render_rows(*t, {row("a", 1)}, "kern ps", kFields);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().kind(), ErrorKind::usage);
}

TEST(GoTemplate, TableHeaderFromDockerNamesAndAlignedColumns) {
  EXPECT_EQ(render("table {{.ID}}\\t{{.State.Pid}}\\t{{.Names}}", {row("a", 1), row("longer-name", 12345)}),
            "CONTAINER ID   PID     NAMES\n"
            "a              1       a\n"
            "longer-name    12345   longer-name\n");
  EXPECT_EQ(render("table {{index .Labels \"tier\"}}", {row("a", 1)}), "TIER\na\n");
  // "table" alone is the verb's own table.
  auto t = parse_go_template("table", "kern ps", kFields);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->default_table());
  EXPECT_EQ(render("table {{.ID}}", {}), "CONTAINER ID\n");
}

TEST(GoTemplate, EscapesAndTrimMarkers) {
  EXPECT_EQ(render("{{.ID}}\\t{{.Names}}\\n--", {row("a", 1)}), "a\ta\n--\n");
  EXPECT_EQ(render("{{.ID}}   {{- .Names -}}   !", {row("a", 1)}), "aa!\n");
  // A backslash before anything else stays.
  EXPECT_EQ(render("{{.ID}}\\x", {row("a", 1)}), "a\\x\n");
}

TEST(GoTemplate, UnknownFieldNamesItAndListsTheVerbsFields) {
  auto t = parse_go_template("{{.ID}} {{.Nope}}", "kern ps", kFields);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().kind(), ErrorKind::usage);
  EXPECT_NE(t.error().what().find(".Nope"), std::string::npos) << t.error().what();
  EXPECT_NE(t.error().hint().find(".ID .Names .State .Labels .Ports"), std::string::npos) << t.error().hint();
  // A nested name the row lacks: refused as it is printed, with what the object has.
  auto n = parse_go_template("{{.State.Nope}}", "kern inspect", {});
  ASSERT_TRUE(n);
  auto out = render_rows(*n, {row("a", 1)}, "kern inspect", {});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().kind(), ErrorKind::usage);
  EXPECT_NE(out.error().what().find(".State.Nope"), std::string::npos) << out.error().what();
  EXPECT_NE(out.error().hint().find(".Status .Pid .Paused"), std::string::npos) << out.error().hint();
}

TEST(GoTemplate, SyntaxErrorsAreUsageErrors) {
  for (const char* bad : {"{{.ID", "{{ID}}", "{{}}", "{{json}}", "{{json .ID .Names}}", "{{.ID..X}}",
                          "{{index .Labels}}", "{{index .Labels \"open}}", "{{index .Labels key}}", "{{if .ID}}"}) {
    auto t = parse_go_template(bad, "kern ps", kFields);
    ASSERT_FALSE(t) << bad;
    EXPECT_EQ(t.error().kind(), ErrorKind::usage) << bad;
  }
}

}  // namespace
}  // namespace kern::cli
