#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "support/temp_dir.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;

TEST(Axis, ListRangeAndPow2) {
  auto m = parse_axis("M=[1,4,16]");
  EXPECT_EQ(m.name, "M");
  EXPECT_EQ(m.values, (std::vector<Value>{1, 4, 16}));
  auto n = parse_axis("N=[1024:4096:1024]");
  EXPECT_EQ(n.values, (std::vector<Value>{1024, 2048, 3072, 4096}));
  auto k = parse_axis("K[pow2]=[7:9]");
  EXPECT_EQ(k.name, "K");
  EXPECT_EQ(k.values, (std::vector<Value>{128, 256, 512}));
  EXPECT_EQ(parse_axis("B=8").values, std::vector<Value>{8});
  EXPECT_EQ(parse_axis("L[pow2]=[3,5]").values, (std::vector<Value>{8, 32}));
}

TEST(Axis, ErrorsSayWhatIsExpected) {
  for (const char* bad : {"M", "=[1]", "M=", "M=[1,,2]", "K[pow2]=[70]", "N=[5:1:1]"}) {
    try {
      parse_axis(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(Axis, AppliedToSpecSizesMakesTheProduct) {
  std::vector<Bindings> sizes{{{"M", 1}, {"N", 64}}, {{"M", 2}, {"N", 64}}};
  auto out = apply_axes(sizes, {parse_axis("M=[8,16]"), parse_axis("K=[1,2,3]")});
  // M is replaced, so both spec sizes collapse to the same 2 x 3 combinations.
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0], (Bindings{{"K", 1}, {"M", 8}, {"N", 64}}));
  EXPECT_EQ(out[5], (Bindings{{"K", 3}, {"M", 16}, {"N", 64}}));
  EXPECT_EQ(apply_axes(sizes, {}), sizes);
}

TEST(SpecSizes, GridForm) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void f(float*) {}\n");
  tunekit::testing::write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: f}
arguments: [{name: x, type: f32, size: M}]
sizes:
  - {M: 3, N: 3}
  - grid: {M: [1, 2], N: "10:30:10"}
)");
  Spec s = load_spec(dir / "s.yaml");
  ASSERT_EQ(s.sizes.size(), 7u);
  EXPECT_EQ(s.sizes[0], (Bindings{{"M", 3}, {"N", 3}}));
  EXPECT_EQ(s.sizes[1], (Bindings{{"M", 1}, {"N", 10}}));
  EXPECT_EQ(s.sizes[6], (Bindings{{"M", 2}, {"N", 30}}));
}

TEST(SpecSizes, GridErrorsAreLocated) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void f(float*) {}\n");
  tunekit::testing::write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: f}
arguments: [{name: x, type: f32, size: M}]
sizes:
  grid: {M: "5:1:1"}
)");
  try {
    load_spec(dir / "s.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:4:"), std::string::npos) << e.what();
  }
}

// Every size names the same ones: a size that lacks one is refused where it
// is written, not as an unknown name in an argument's expression at tune
// time.
TEST(SpecSizes, EverySizeNamesTheSameOnes) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void f(float*) {}\n");
  tunekit::testing::write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: f}
arguments: [{name: x, type: f32, size: n*n}]
sizes: [{n: 64}, {m: 64}]
)");
  try {
    load_spec(dir / "s.yaml");
    FAIL() << "sizes naming different ones loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.message(), "'sizes[1]' names m, and the first size names n: every size names the same ones");
  }
}

// A misspelled grid is told as one.
TEST(SpecSizes, AMisspelledGridIsToldAsOne) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void f(float*) {}\n");
  tunekit::testing::write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: f}
arguments: [{name: x, type: f32, size: n}]
sizes: {gird: {n: [32, 64]}}
)");
  try {
    load_spec(dir / "s.yaml");
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_NE(e.message().find("did you mean 'grid'?"), std::string::npos) << e.message();
  }
}

// An exponent past 62 in a [pow2] range is told as written: the range's end.
TEST(Axis, APow2RangeTooLongNamesItsEnd) {
  try {
    (void)parse_axis("n[pow2]=[0:70]");
    FAIL() << "parsed";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("got 70"), std::string::npos) << e.message();
  }
}

// A quoted number is a string, which every expression of the size would
// fail on ('str' * 'str') far from its cause, and which `tunekit space`
// would not notice: refused where it is written.
TEST(SpecSizes, AQuotedNumberIsRefusedWhereItIsWritten) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void f(float*) {}\n");
  tunekit::testing::write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: f}
arguments: [{name: x, type: f32, size: n*n}]
sizes: {n: "1024"}
)");
  try {
    load_spec(dir / "s.yaml");
    FAIL() << "a quoted size loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 13);
    EXPECT_EQ(e.message(), "size 'n' is the string \"1024\"; a size is a number: write n: 1024");
  }
  // A string that is no number stays a string size (a dtype's name).
  tunekit::testing::write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: f}
arguments: [{name: x, type: f32, size: 64}]
sizes: {dtype: "f16"}
)");
  EXPECT_EQ(load_spec(dir / "s.yaml").sizes.at(0).at("dtype").as_string(), "f16");
}

// `N: 2**20` is the string "2**20" to YAML: every expression of the size
// would fail on it far from here (`BM <= N`: '<=' between 'int' and 'str';
// the argument's size: expected an integer), so it is refused where written.
TEST(SpecSizes, AnExpressionIsRefusedWhereItIsWritten) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void f(float*) {}\n");
  for (const auto& [text, column, message] : std::vector<std::tuple<std::string, int, std::string>>{
           {"2**20", 12, "size 'n' is the string \"2**20\"; a size is a number, not an expression: write n: 1048576"},
           {"64 * 1024", 12,
            "size 'n' is the string \"64 * 1024\"; a size is a number, not an expression: write n: 65536"},
           {"'1/4'", 13, "size 'n' is the string \"1/4\"; a size is a number, not an expression: write n: 0.25"},
           // One that fails has no number to suggest, and is refused all the same.
           {"\"2**63\"", 13,
            "size 'n' is the string \"2**63\"; a size is a number, not an expression, and this one fails (integer "
            "overflow in '2**63' (integers are 64-bit; use a float operand to allow larger values)): write n as a "
            "number, an integer within 64 bits or a finite float"},
           {"\"1e308*10\"", 13,
            "size 'n' is the string \"1e308*10\"; a size is a number, not an expression, and this one fails (its "
            "value is not a finite number): write n as a number, an integer within 64 bits or a finite float"},
           {"\"True\"", 13,
            "size 'n' is the string \"True\"; a size is a number or a name, not a truth value: write n: 1 (True "
            "unquoted reads as 1)"},
           {"\"'a' + 'b'\"", 13,
            "size 'n' is the string \"'a' + 'b'\"; a size is a number or a name, not an expression: write n: ab"}}) {
    tunekit::testing::write_file(dir / "s.yaml",
                                 "kernel: {source: k.cpp, entry: f}\n"
                                 "arguments: [{name: x, type: f32, size: n}]\n"
                                 "sizes: {n: " +
                                     text + "}\n");
    try {
      load_spec(dir / "s.yaml");
      ADD_FAILURE() << "the size " << text << " loaded";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().line, 3) << text;
      EXPECT_EQ(e.where().column, column) << text;
      EXPECT_EQ(e.message(), message);
    }
  }
  // A name, or text that is no expression, stays a string size.
  for (const std::string text : {"row_major", "f16", "fp8-e4m3", "4x4"}) {
    tunekit::testing::write_file(dir / "s.yaml",
                                 "kernel: {source: k.cpp, entry: f}\n"
                                 "arguments: [{name: x, type: f32, size: 64}]\n"
                                 "sizes: {layout: \"" +
                                     text + "\"}\n");
    EXPECT_TRUE(load_spec(dir / "s.yaml").sizes.at(0).at("layout").is_string()) << text;
  }
}
