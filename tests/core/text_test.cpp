// core/detail/text: the helpers that cut and check text for messages.
#include <gtest/gtest.h>

#include <string>

#include "core/detail/text.hpp"

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
