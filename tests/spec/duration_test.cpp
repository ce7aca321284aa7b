#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <stdexcept>

#include "tunekit/measure.hpp"

using namespace tunekit;

TEST(ParseDuration, Units) {
  EXPECT_DOUBLE_EQ(parse_duration("2s").count(), 2.0);
  EXPECT_DOUBLE_EQ(parse_duration("1.5s").count(), 1.5);
  EXPECT_DOUBLE_EQ(parse_duration("200ms").count(), 0.2);
  EXPECT_DOUBLE_EQ(parse_duration("50us").count(), 50e-6);
  EXPECT_DOUBLE_EQ(parse_duration("3m").count(), 180.0);
  EXPECT_DOUBLE_EQ(parse_duration("1h").count(), 3600.0);
  EXPECT_DOUBLE_EQ(parse_duration("10ns").count(), 10e-9);
  EXPECT_DOUBLE_EQ(parse_duration("20 ms").count(), 0.02);
  EXPECT_DOUBLE_EQ(parse_duration(" 3 ").count(), 3.0);
  EXPECT_DOUBLE_EQ(parse_duration("0.25").count(), 0.25);
  EXPECT_DOUBLE_EQ(parse_duration("1e-3").count(), 1e-3);
  EXPECT_DOUBLE_EQ(parse_duration("1e3ms").count(), 1.0);
  EXPECT_DOUBLE_EQ(parse_duration("0").count(), 0.0);
}

TEST(ParseDuration, Errors) {
  for (const char* bad : {"", "   ", "ms", "fast", "5 parsecs", "-1s", "1..5s", "5sec extra", "inf", "nan", "1e999s"}) {
    try {
      parse_duration(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("bad duration '" + std::string(bad) + "'"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("e.g. 50ms"));
    }
  }
}
