// search.rules in a spec: the forms it takes, and located errors.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"
#include "support/spec_errors.hpp"

namespace fs = std::filesystem;
using namespace tunekit;
using ::testing::HasSubstr;

namespace {

// 8 lines: kernel, one argument, three tile parameters and a non-tile one.
const std::string kHead =
    "kernel: {source: k.cpp, entry: k}\n"
    "arguments:\n"
    "  - {name: X, type: f32, size: M*N}\n"
    "parameters:\n"
    "  BM: [16, 32, 64]\n"
    "  BN: [32, 64]\n"
    "  BK: [32, 64]\n"
    "  SPLIT_K: [1, 2]\n";

using RuleSpec = tunekit::testing::SpecErrors;

}  // namespace

TEST_F(RuleSpec, LongAndShortForms) {
  Spec s = load_spec(write(kHead + "search:\n"
                                   "  strategy: random\n"
                                   "  rules:\n"
                                   "    - {M: [BM, M], N: [BN, N], K: [BK, \"K // SPLIT_K\"]}\n"
                                   "    - {N: BN, K: [BK, 64]}\n"));
  EXPECT_EQ(s.search.strategy, "random");
  ASSERT_EQ(s.search.rules.size(), 2u);
  const MatmulRule& a = s.search.rules[0];
  ASSERT_TRUE(a.m && a.n && a.k);
  EXPECT_EQ(a.m->parameter, "BM");
  EXPECT_EQ(a.m->length.text(), "M");
  EXPECT_EQ(a.k->parameter, "BK");
  EXPECT_EQ(a.k->length.text(), "K // SPLIT_K");
  EXPECT_EQ(a.k->length.variables(), (std::vector<std::string>{"K", "SPLIT_K"}));
  EXPECT_EQ(a.where.line, 12);
  EXPECT_EQ(a.m->where.line, 12);
  EXPECT_EQ(a.m->where.column, 12);  // the parameter's name
  const MatmulRule& b = s.search.rules[1];
  EXPECT_FALSE(b.m);
  ASSERT_TRUE(b.n && b.k);
  EXPECT_EQ(b.n->parameter, "BN");
  EXPECT_EQ(b.n->length.text(), "N");  // the short form: the size named like the axis
  EXPECT_EQ(b.k->length.text(), "64");
  Bindings env{{"K", Value(256)}, {"SPLIT_K", Value(2)}};
  EXPECT_EQ(a.k->length.evaluate(env), Value(128));

  // Without rules, or with an empty list, there are none.
  EXPECT_TRUE(load_spec(write(kHead + "search: {strategy: random}\n")).search.rules.empty());
  EXPECT_TRUE(load_spec(write(kHead + "search: {rules: }\n")).search.rules.empty());
}

TEST_F(RuleSpec, LocatedErrors) {
  const std::string s = kHead + "search:\n  rules:\n";  // entries start on line 11
  expect_error(s + "    - {M: [BM, M], X: [BN, N]}\n", 11, 20, "unknown key 'X' in 'search.rules[0]'");
  expect_error(s + "    - {M: [BQ, M]}\n", 11, 12,
               "'BQ' in 'search.rules[0].M' is not a parameter; did you mean 'BM'?");
  expect_error(s + "    - {M: [M, M]}\n", 11, 12, "'M' in 'search.rules[0].M' is not a parameter");
  expect_error(s + "    - {K: [BK, \"K // \"]}\n", 11, 22, "expected an expression after '//'");
  expect_error(s + "    - {K: [BK, K, 2]}\n", 11, 11, "must be [tile parameter, axis length]");
  expect_error(s + "    - {K: {BK: K}}\n", 11, 11, "must be [tile parameter, axis length]");
  expect_error(s + "    - {}\n", 11, 7, "tiles no axis");
  expect_error(s + "    - [BM, M]\n", 11, 7, "must be a mapping of axes (M, N, K)");
  expect_error(kHead + "search: {rules: {M: [BM, M]}}\n", 9, 17, "must be a list of matmul tile rules");
  expect_error(s + "    - {M: [BM, M]}\n    - {M: [BM, M], M: [BM, M]}\n", 12, 20, "duplicate key 'M'");
  // A tile must be numeric.
  expect_error(
      "kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: f32, size: 4}\n"
      "parameters:\n  BM: [16, wide]\nsearch:\n  rules:\n    - {M: BM}\n",
      8, 11, "tile parameter 'BM' in 'search.rules[0].M' must have numeric values, but it has 'wide'");
  // rules is an allowed key of search; a typo is caught.
  expect_error(kHead + "search: {rule: []}\n", 9, 10, "did you mean 'rules'?");
}
