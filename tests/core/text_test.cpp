// core/detail/text: the helpers that cut and check text for messages.
#include <gtest/gtest.h>

#include <string>

#include "core/detail/npy.hpp"
#include "core/detail/text.hpp"
#include "tunekit/config.hpp"
#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"

using tunekit::detail::closest_match;
using tunekit::detail::edit_distance;
using tunekit::detail::first_invalid_utf8;
using tunekit::detail::utf8_floor;

TEST(Utf8Floor, ACutFallsBeforeTheCharacterItWouldSplit) {
  const std::string text =
      "a\xE2\x80\x98"
      "b\xF0\x9F\x98\x80";  // a, U+2018, b, U+1F600
  EXPECT_EQ(utf8_floor(text, 0), 0u);
  EXPECT_EQ(utf8_floor(text, 1), 1u);
  EXPECT_EQ(utf8_floor(text, 2), 1u);  // inside U+2018
  EXPECT_EQ(utf8_floor(text, 3), 1u);
  EXPECT_EQ(utf8_floor(text, 4), 4u);
  EXPECT_EQ(utf8_floor(text, 7), 5u);  // inside U+1F600
  EXPECT_EQ(utf8_floor(text, 99), text.size());
  for (std::size_t at = 0; at <= text.size(); ++at)
    EXPECT_FALSE(first_invalid_utf8(text.substr(0, utf8_floor(text, at)))) << at;
  // Not UTF-8 at all: a run of continuation bytes is cut where asked, at most three back.
  EXPECT_EQ(utf8_floor(std::string(8, '\x80'), 6), 3u);
}

// "Did you mean" counts the swap of two adjacent letters as one edit: a
// three-letter key typed cvs finds csv, which a plain Levenshtein distance
// (two edits) put beyond a short word's limit.
TEST(ClosestMatch, ASwapOfTwoLettersIsOneEdit) {
  const std::vector<std::string> keys{"db", "csv", "json", "html"};
  EXPECT_EQ(closest_match("cvs", keys), "csv");
  EXPECT_EQ(closest_match("jsno", keys), "json");
  EXPECT_EQ(closest_match("CSV", keys), "csv");
  EXPECT_EQ(closest_match("xyz", keys), std::nullopt);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("abc", "ca"), 3u);  // no substring edited twice
}

// What a user wrote reaches the terminal through messages: a NUL no longer
// ends the message, and an escape sequence is shown, not obeyed.
TEST(ShownControls, ControlCharactersAreShownNotObeyed) {
  using namespace std::string_literals;
  EXPECT_EQ(tunekit::detail::shown_controls("a\0b\x1b[2J\x7f"s, false), "a^@b^[[2J^?");
  EXPECT_EQ(tunekit::detail::shown_controls("one\ntwo\tthree", true), "one\ntwo\tthree");
  EXPECT_EQ(tunekit::detail::shown_controls("one\ntwo\tthree", false), "one^Jtwo three");
  EXPECT_EQ(tunekit::detail::shown_controls("x\xc2\x85y \xc3\xa9", false), "x<U+0085>y \xc3\xa9");  // NEL; é stays
  const tunekit::InputError e({"spec.yaml", 2, 12}, "name 'trans\0pose'"s);
  EXPECT_EQ(std::string(e.what()), "spec.yaml:2:12: name 'trans^@pose'");
}

// A config's values in a line of console text (the summary, the progress
// line, `tunekit space`): a string that would break the line, or read as
// more than one value, is quoted with Python's escapes; others read as
// written.
TEST(ShownValue, AStringThatWouldBreakTheLineIsQuoted) {
  using tunekit::Value;
  using tunekit::detail::shown_value;
  EXPECT_EQ(shown_value(Value(64)), "64");
  EXPECT_EQ(shown_value(Value(0.5)), "0.5");
  EXPECT_EQ(shown_value(Value("float")), "float");
  EXPECT_EQ(shown_value(Value("a\nb")), "'a\\nb'");
  EXPECT_EQ(shown_value(Value("tab\there\r")), "'tab\\there\\r'");
  EXPECT_EQ(shown_value(Value("unsigned int")), "'unsigned int'");
  EXPECT_EQ(shown_value(Value("x, y")), "'x, y'");
  EXPECT_EQ(shown_value(Value("it's")), "'it\\'s'");
  EXPECT_EQ(shown_value(Value("")), "''");
  EXPECT_EQ(shown_value(Value("\x1b[2J")), "'\\x1b[2J'");
  EXPECT_EQ(tunekit::Config({{"MODE", Value("a\nb")}, {"N", Value(4)}}).str(), "{MODE: 'a\\nb', N: 4}");
}

// A string that reads as a number (or a bool, or a null) is quoted, so
// that the string "64" and the number 64 are told apart wherever a config
// is shown; a word that merely starts with digits is not.
TEST(ShownValue, AStringThatReadsAsAnotherTypeIsQuoted) {
  using tunekit::Value;
  using tunekit::detail::shown_value;
  for (const char* s : {"64", "-3", "+5", "0.5", "1e3", ".5", "0x40", "0o17", ".inf", "-.Inf", ".NaN",
                        "0x10000000000000000", "99999999999999999999", "1e400", "true", "False", "NULL", "~"})
    EXPECT_EQ(shown_value(Value(s)), "'" + std::string(s) + "'") << s;
  for (const char* s : {"64x", "0x", "0o8", "inf", "nan", "yes", "f32", "1.2.3"})
    EXPECT_EQ(shown_value(Value(s)), s) << s;
  EXPECT_EQ(tunekit::Config({{"A", Value("64")}, {"B", Value(64)}}).str(), "{A: '64', B: 64}");
}

// A size is printed one way wherever a line shows one (the tune's summary,
// select, emit, rules-report, space, a default's constraint warning): as a
// config is, in name order.
TEST(ShownValue, ASizeIsShownAsAConfigIs) {
  using tunekit::Value;
  using tunekit::detail::shown_bindings;
  const tunekit::Bindings size{{"N", Value(4096)}, {"DTYPE", Value("64")}, {"MODE", Value("a b")}, {"X", Value(0.5)}};
  EXPECT_EQ(shown_bindings(size), "{DTYPE: '64', MODE: 'a b', N: 4096, X: 0.5}");
  EXPECT_EQ(shown_bindings(size), tunekit::Config({size.begin(), size.end()}).str());
  EXPECT_EQ(shown_bindings({}), "{}");
}

// What kind of file a path names does not depend on how its name was
// typed: K.YAML is a spec as k.yaml is, X.NPY an .npy file.
TEST(LowercaseExtension, SpecAndDataFilesAreKnownInAnyCase) {
  EXPECT_EQ(tunekit::detail::lowercase_extension("dir.v2/K.YAML"), ".yaml");
  for (const char* spec : {"k.yaml", "k.YAML", "k.Yml", "t1.JSON", "dir/k.Json"})
    EXPECT_TRUE(tunekit::is_spec_file(spec)) << spec;
  for (const char* other : {"k.cpp", "k.C", "k.yaml.txt", "yaml", "k.JSONL"})
    EXPECT_FALSE(tunekit::is_spec_file(other)) << other;
  EXPECT_TRUE(tunekit::detail::is_npy("x.NPY"));
  EXPECT_FALSE(tunekit::detail::is_npy("x.bin"));
}
