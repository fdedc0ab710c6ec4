// oci_verb_named: the verb a runtime command line names, or none whenever building that verb
// alone could parse the words differently from building every verb.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/oci_verb_word.h"

namespace kern::cli {
namespace {

const char* const kVerbs[] = {"state", "create", "run", "exec", "delete"};

int named(std::vector<const char*> argv) {
  return oci_verb_named(static_cast<int>(argv.size()), argv.data(), kVerbs, 5);
}

TEST(OciVerbWord, TheVerbAfterTheGlobalFlags) {
  EXPECT_EQ(named({"/usr/bin/kern-oci", "run", "--bundle", "/b", "id"}), 2);
  EXPECT_EQ(named({"kern-oci", "--root", "/run/x", "--log", "/l", "--log-format", "json", "create", "id"}), 1);
  EXPECT_EQ(named({"kern-oci", "--root=/run/x", "--systemd-cgroup", "--debug", "--rootless", "true", "state", "x"}), 0);
  EXPECT_EQ(named({"kern", "oci", "--root", "/r", "delete", "-f", "x"}), 4);
  // The value of a global flag is never taken for the verb.
  EXPECT_EQ(named({"kern-oci", "--root", "run", "state", "x"}), 0);
  // Help after a "--" is the process's, not kern's.
  EXPECT_EQ(named({"kern-oci", "exec", "x", "--", "sh", "--help"}), 3);
}

TEST(OciVerbWord, NoneForHelpUnknownFlagsAndOtherWords) {
  EXPECT_EQ(named({"kern-oci", "--help"}), -1);
  EXPECT_EQ(named({"kern-oci", "-h", "run"}), -1);
  EXPECT_EQ(named({"kern-oci", "run", "--help"}), -1);
  EXPECT_EQ(named({"kern-oci", "run", "-h", "id"}), -1);
  EXPECT_EQ(named({"kern-oci", "state", "--help-all"}), -1);
  EXPECT_EQ(named({"kern-oci", "--version"}), -1);
  EXPECT_EQ(named({"kern-oci", "-v"}), -1);
  EXPECT_EQ(named({"kern-oci", "--criu", "/x", "run", "id"}), -1);  // a flag kern-oci does not know
  EXPECT_EQ(named({"kern-oci", "runn", "id"}), -1);                 // no verb: the full table's error
  EXPECT_EQ(named({"kern-oci"}), -1);
  EXPECT_EQ(named({"kern-oci", "--root", "/r"}), -1);
  EXPECT_EQ(named({"kern", "box", "run"}), -1);  // not the runtime's command line
  EXPECT_EQ(named({"kern", "run"}), -1);
  EXPECT_EQ(named({"/usr/bin/kern-ociX", "run"}), -1);
}

}  // namespace
}  // namespace kern::cli
