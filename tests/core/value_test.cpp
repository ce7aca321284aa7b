// core/value: Python's equality and order of ints and floats, and the text a
// value is written as.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tunekit/space.hpp"
#include "tunekit/value.hpp"

using tunekit::Parameter;
using tunekit::Space;
using tunekit::Value;

// An int and a float are compared exactly, as Python does: an int past 2**53
// is not the float it would convert to.
TEST(Value, IntsAndFloatsCompareExactly) {
  const Value big_int(std::int64_t{9007199254740993});  // 2**53 + 1
  const Value big_float(9007199254740992.0);            // 2**53
  EXPECT_FALSE(big_int == big_float);
  EXPECT_FALSE(big_float == big_int);
  EXPECT_TRUE(big_float < big_int);
  EXPECT_FALSE(big_int < big_float);
  EXPECT_TRUE(Value(std::int64_t{9007199254740992}) == big_float);
  EXPECT_TRUE(Value(1) == Value(1.0));
  EXPECT_TRUE(Value(0) == Value(-0.0));
  EXPECT_TRUE(Value(1) < Value(1.5));
  EXPECT_TRUE(Value(-2.5) < Value(-2));
  const auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_FALSE(Value(max) == Value(9223372036854775808.0));  // 2**63 - 1 against 2**63
  EXPECT_TRUE(Value(max) < Value(9223372036854775808.0));
  EXPECT_TRUE(Value(std::numeric_limits<std::int64_t>::min()) == Value(-9223372036854775808.0));
  const Value nan(std::nan(""));
  EXPECT_FALSE(Value(1) == nan);
  EXPECT_FALSE(Value(1) < nan);
  EXPECT_FALSE(nan < Value(1));

  // A space of the int finds the int, not the float it would round to.
  const Parameter p{"A", {big_float, big_int}, {}};
  ASSERT_NE(p.listed(big_int), nullptr);
  EXPECT_TRUE(p.listed(big_int)->is_int());
  Space space({p}, {});
  EXPECT_EQ(space.indices_of(tunekit::Config({{"A", big_int}})), (std::vector<std::uint32_t>{1}));
}

// A float is written as one, however large: an integral float past 1e15
// without its ".0" would read back (in a -D macro, a spec) as an int. The
// texts are Python's repr.
TEST(Value, LargeIntegralFloatsAreWrittenAsFloats) {
  EXPECT_EQ(Value(9007199254740992.0).str(), "9007199254740992.0");
  EXPECT_EQ(Value(-9007199254740992.0).str(), "-9007199254740992.0");
  EXPECT_EQ(Value(1e15).str(), "1000000000000000.0");
  EXPECT_EQ(Value(1e16).str(), "1e+16");
  EXPECT_EQ(Value(1.2345e20).str(), "1.2345e+20");
  EXPECT_EQ(Value(123456789012345680.0).str(), "1.2345678901234568e+17");
  EXPECT_EQ(Value(100.0).str(), "100.0");
  EXPECT_EQ(Value(0.1).str(), "0.1");
  EXPECT_EQ(Value(1e-05).str(), "1e-05");
  EXPECT_EQ(Value(std::int64_t{9007199254740992}).str(), "9007199254740992");
  EXPECT_EQ(Value(9007199254740992.0).repr(), "9007199254740992.0");
}
