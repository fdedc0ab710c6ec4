// The --format templates of kern's listing verbs (ps, stats, inspect, events, images, image
// inspect), the subset of Go's text/template that people type at docker:
//   {{.Field}} and {{.A.B}}        a field of the row, or of an object in it
//   {{json .}} and {{json .Field}} the row or a field as compact JSON
//   {{index .Labels "key"}}        one entry of an object (or of a list, by number)
//   {{- and -}}                    trim the white space before or after the action
//   "table ..."                    a header row (each field's Docker header), columns aligned
//   "json"                         the row as JSON, one object a line
//   \t and \n                      as typed in a shell: a tab (a column in a table), a newline
// A row is a JSON object the verb builds; a value prints as its text (a string bare, a number
// as JSON has it, null as "<nil>"), an object as KEY=VALUE pairs joined by commas (what docker ps
// prints for .Labels), a list as its items joined by ", " (docker ps's .Ports). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

// A field a verb offers at the top of its rows: its name after the dot and its table header.
struct TemplateField {
  std::string name;
  std::string header;
};

// A parsed --format.
struct GoTemplate {
  enum class Kind { lines, table, json } kind = Kind::lines;
  struct Action {
    enum class Op { text, field, json, index } op = Op::text;
    std::string text;               // Op::text: the literal
    std::vector<std::string> path;  // the fields after the dot; empty for "."
    std::vector<std::string> keys;  // Op::index: the keys (or list positions) looked up in turn
  };
  std::vector<Action> actions;
  // "table" alone (or with nothing but spaces): the verb prints its own default table.
  bool default_table() const { return kind == Kind::table && actions.empty(); }
};

// Parses `text` for `verb` ("kern ps"); a field not among `fields` is refused with a hint
// naming them (`fields` empty: any name, checked against each row as it is printed).
// Refusals are ErrorKind::usage.
Result<GoTemplate> parse_go_template(const std::string& text, const std::string& verb,
                                     const std::vector<TemplateField>& fields);

// One row under the template (no newline added); a field the row lacks is a usage error
// naming the fields it has.
Result<std::string> render_row(const GoTemplate& t, const nlohmann::ordered_json& row, const std::string& verb);

// Every row: lines ends each one with a newline, table adds the header row and aligns the
// tab-separated columns (cli/text_columns.h), json prints each row as one compact line.
Result<std::string> render_rows(const GoTemplate& t, const std::vector<nlohmann::ordered_json>& rows,
                                const std::string& verb, const std::vector<TemplateField>& fields);

// " .ID .Names ..." for a hint.
std::string field_list(const std::vector<TemplateField>& fields);

}  // namespace kern::cli
