// log::sanitize, the one escaping of untrusted text in kern's output: C0, DEL, C1 and bytes
// that are not UTF-8 are escaped; printable UTF-8 is kept.
#include <gtest/gtest.h>

#include <string>

#include "runtime/sys/log.h"

namespace kern {
namespace {

TEST(Sanitize, C0AndDelAreEscaped) {
  EXPECT_EQ(log::sanitize("a\x1b[31mb\r"), "a\\x1b[31mb\\x0d");
  EXPECT_EQ(log::sanitize(std::string("n\0ul\x07\x7f", 6)), "n\\x00ul\\x07\\x7f");
  EXPECT_EQ(log::sanitize("two\nlines"), "two\\x0alines");
  EXPECT_EQ(log::sanitize("tab\tok"), "tab\tok");
}

TEST(Sanitize, C1ControlsAsUtf8AreEscaped) {
  // U+009B (CSI) and U+0085 (NEL), U+0080 and U+009F at the edges of the C1 block.
  EXPECT_EQ(log::sanitize("x\xc2\x9b" "31my"), "x\\xc2\\x9b31my");
  EXPECT_EQ(log::sanitize("\xc2\x85"), "\\xc2\\x85");
  EXPECT_EQ(log::sanitize("\xc2\x80\xc2\x9f"), "\\xc2\\x80\\xc2\\x9f");
  // U+00A0 and U+00E9, just past C1, are printable.
  EXPECT_EQ(log::sanitize("\xc2\xa0\xc3\xa9"), "\xc2\xa0\xc3\xa9");
}

TEST(Sanitize, RawEightBitControlsAndInvalidUtf8AreEscaped) {
  EXPECT_EQ(log::sanitize("a\x9b" "2Jb"), "a\\x9b2Jb");       // a lone 8-bit CSI
  EXPECT_EQ(log::sanitize("\xff\xfe"), "\\xff\\xfe");         // never in UTF-8
  EXPECT_EQ(log::sanitize("\xc0\xaf"), "\\xc0\\xaf");         // overlong '/'
  EXPECT_EQ(log::sanitize("\xe0\x80\x9b"), "\\xe0\\x80\\x9b"); // overlong U+001B
  EXPECT_EQ(log::sanitize("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
  EXPECT_EQ(log::sanitize("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(log::sanitize("cut\xe2\x82"), "cut\\xe2\\x82");   // truncated at the end
  EXPECT_EQ(log::sanitize("\xe2\x1b"), "\\xe2\\x1b");         // a control inside a sequence
}

TEST(Sanitize, PrintableUtf8IsKept) {
  const std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\xa6 /srv/d\xc3\xa4ta";
  EXPECT_EQ(log::sanitize(text), text);
}

TEST(Sanitize, EscapingTwiceChangesNothing) {
  std::string once = log::sanitize("\x1b\xc2\x9b\xff ok");
  EXPECT_EQ(log::sanitize(once), once);
}

TEST(Sanitize, EveryOutputByteIsPrintable) {
  // All two-byte strings: nothing below 0x20 but tab, no DEL, no C1 survives.
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      std::string in{static_cast<char>(a), static_cast<char>(b)};
      std::string out = log::sanitize(in);
      for (size_t i = 0; i < out.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(out[i]);
        ASSERT_FALSE((c < 0x20 && c != '\t') || c == 0x7f) << a << "," << b;
        if (c == 0xc2 && i + 1 < out.size()) {
          unsigned char d = static_cast<unsigned char>(out[i + 1]);
          ASSERT_FALSE(d >= 0x80 && d <= 0x9f) << a << "," << b;
        }
        ASSERT_FALSE(c >= 0x80 && c <= 0x9f && (i == 0 || static_cast<unsigned char>(out[i - 1]) < 0xc0))
            << "a lone C1 byte from " << a << "," << b;
      }
    }
}

TEST(SanitizeLines, KeepsTheNewlinesOnly) {
  EXPECT_EQ(log::sanitize_lines("hostname: a\x1b]0;x\x07\nenv: K=\xc2\x9bv\n"),
            "hostname: a\\x1b]0;x\\x07\nenv: K=\\xc2\\x9bv\n");
  EXPECT_EQ(log::sanitize_lines("no newline\r"), "no newline\\x0d");
  EXPECT_EQ(log::sanitize_lines(""), "");
}

// Issue 21 (item 25): a 128 KiB argument was echoed back whole; a quoted value is cut at
// kQuotedBytes, never inside a UTF-8 sequence, and says how long it was.
TEST(Quoted, LongValuesAreCutWithTheirLength) {
  EXPECT_EQ(log::quoted("short"), "\"short\"");
  EXPECT_EQ(log::quoted(std::string(log::kQuotedBytes, 'a')), "\"" + std::string(log::kQuotedBytes, 'a') + "\"");
  EXPECT_EQ(log::quoted(std::string(131000, 'a')), "\"" + std::string(log::kQuotedBytes, 'a') + "...\" (131000 bytes)");
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "\xe2\x82\xac";  // 3 bytes each: 200 falls inside one
  std::string q = log::quoted(euros);
  EXPECT_EQ(q, "\"" + euros.substr(0, 198) + "...\" (300 bytes)");
}

TEST(ValidUtf8, AsJsonWantsIt) {
  EXPECT_TRUE(log::valid_utf8(""));
  EXPECT_TRUE(log::valid_utf8("caf\xc3\xa9 \xc2\x9b \xf0\x9f\x93\xa6"));
  EXPECT_FALSE(log::valid_utf8("a\xff"));
  EXPECT_FALSE(log::valid_utf8("\xc0\xaf"));
  EXPECT_FALSE(log::valid_utf8("\xed\xa0\x80"));
  EXPECT_FALSE(log::valid_utf8("cut\xe2\x82"));
}

}  // namespace
}  // namespace kern
