// Expression::to_cpp is checked against the interpreter: the generated C++
// is compiled with the system compiler, run over a grid of inputs (negative
// ones and zero included, where Python's floor division and modulo differ
// from C++'s), and must print what evaluate() gives; to_python's Python must
// print what the C++ prints. Expression::equalities
// finds the `NAME == E` terms that pin a parameter to the sizes.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/constraint.hpp"

using namespace tunekit;

namespace {

std::optional<std::string> ab(const std::string& n) {
  if (n == "a" || n == "b") return n;
  return std::nullopt;
}

const std::vector<std::int64_t> kA = {-7, -3, -1, 0, 1, 2, 5, 16, 100};
const std::vector<std::int64_t> kB = {-4, -1, 0, 1, 3, 8};

// Each operation the header writes, for a and b over kA x kB.
const std::vector<std::string> kTexts = {
    "a // b",
    "a % b",
    "ceil_div(a, b)",
    "-a // 3",
    "a % -3",
    "min(a, b, 3)",
    "max(a, b)",
    "max([b, a])",
    "abs(a - b)",
    "a if a > b else b * 2",
    "a and b",
    "a or b",
    "a and b or 7",
    "not a",
    "a < b < 5",
    "a == b",
    "a != 0 and b >= 1",
    "a in [1, 2, 16]",
    "a not in (0, 5)",
    "(a & 6) | (b ^ 3)",
    "~a",
    "a << 2",
    "a >> 1",
    "-a >> 3",
    "16 * ceil_div(a, 16)",
    "int(a) + -b",
    "+a - (a > 2) * 10",
    "(a if a <= 2 else (4 if a <= 4 else (8 if a <= 8 else 16 * ceil_div(a, 16))))"};

// What the C++ of each of kTexts prints over kA x kB, a line each.
std::string cpp_output() {
  std::string body;
  for (const auto& t : kTexts) {
    auto code = Expression::parse(t).to_cpp(ab, "h::");
    EXPECT_TRUE(code.has_value()) << t;
    if (!code) continue;
    body +=
        "  for (std::int64_t a : as) for (std::int64_t b : bs) { (void)a; (void)b; std::printf(\"%lld\\n\", (long "
        "long)(" +
        *code + ")); }\n";
  }
  std::string as, bs;
  for (auto v : kA) as += std::to_string(v) + ", ";
  for (auto v : kB) bs += std::to_string(v) + ", ";
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "main.cpp", "#include <cstdint>\n#include <cstdio>\nnamespace h {\n" +
                                                     cpp_int_helpers() +
                                                     "}\nint main() {\n  const std::int64_t as[] = {" + as +
                                                     "};\n  const std::int64_t bs[] = {" + bs + "};\n" + body + "}\n");
  auto c = detail::run_process(
      {"c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", (dir / "main").string(), (dir / "main.cpp").string()},
      std::chrono::seconds(120));
  EXPECT_EQ(c.exit_code, 0) << c.output;
  auto r = detail::run_process({(dir / "main").string()}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

}  // namespace

TEST(ToCpp, AgreesWithTheInterpreter) {
  const std::vector<std::string>& texts = kTexts;
  const std::string output = cpp_output();
  ASSERT_FALSE(output.empty());
  std::istringstream out(output);
  int compared = 0;
  for (const auto& t : texts) {
    const Expression e = Expression::parse(t);
    for (auto a : kA)
      for (auto b : kB) {
        long long got = 0;
        ASSERT_TRUE(out >> got) << t;
        std::vector<Value> vars;
        for (const auto& name : e.variables()) vars.push_back(Value(name == "a" ? a : b));
        auto want = e.evaluate(vars);
        if (!want) continue;  // Python raises (a division by zero): the helpers return 0, documented
        ASSERT_TRUE(want->is_int()) << t;
        EXPECT_EQ(got, want->as_int()) << t << " at a=" << a << " b=" << b;
        ++compared;
      }
  }
  EXPECT_GT(compared, static_cast<int>(texts.size() * kA.size() * kB.size() * 9 / 10));
}

TEST(ToPython, PrintsWhatTheCppPrintsEverywhere) {
  // The Python policy module must pick what the header picks: the same
  // value at every input, division by zero (0 in both) included.
  std::string code = "import sys\n" + python_int_helpers("_") + "\nAS = [";
  for (auto v : kA) code += std::to_string(v) + ", ";
  code += "]\nBS = [";
  for (auto v : kB) code += std::to_string(v) + ", ";
  code += "]\n";
  for (const auto& t : kTexts) {
    auto py = Expression::parse(t).to_python(ab, "_");
    ASSERT_TRUE(py.has_value()) << t;
    code += "for a in AS:\n    for b in BS:\n        print(int(" + *py + "))\n";
  }
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "probe.py", code);
  // -W error: no DeprecationWarning (~ on a bool) may pass unseen
  auto r = detail::run_process({"python3", "-W", "error", (dir / "probe.py").string()}, std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, cpp_output());
}

TEST(ToCpp, RefusesWhatNeedsMoreThanIntegers) {
  // to_python and to_tree accept exactly what to_cpp accepts.
  for (const char* t :
       {"a / b", "a ** 2", "float(a)", "round(a)", "a << b", "a >> 64", "a == 'x'", "1.5 * a", "a in 'abc'", "c + 1"}) {
    EXPECT_FALSE(Expression::parse(t).to_cpp(ab, "h::").has_value()) << t;
    EXPECT_FALSE(Expression::parse(t).to_python(ab, "_").has_value()) << t;
    EXPECT_FALSE(Expression::parse(t).to_tree(ab).has_value()) << t;
  }
  for (const auto& t : kTexts) EXPECT_TRUE(Expression::parse(t).to_tree(ab).has_value()) << t;
}

TEST(Equalities, FindTheTermsThatPinATarget) {
  auto is_param = [](const std::string& n) { return n == "BM" || n == "BN" || n == "PATH" || n == "TILE"; };
  auto is_size = [](const std::string& n) { return n == "M" || n == "N" || n == "K" || n == "B_NK"; };

  auto one = Expression::parse("BM == (M if M <= 2 else 16 * ceil_div(M, 16))").equalities(is_param, is_size);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].first, "BM");
  EXPECT_EQ(one[0].second.evaluate(Bindings{{"M", Value(5)}}), Value(16));
  EXPECT_EQ(one[0].second.evaluate(Bindings{{"M", Value(2)}}), Value(2));

  // One term of a top-level 'and', on either side of the '=='; its text is
  // the term's own, and its errors point into the original text.
  auto and_terms = Expression::parse("B_NK == 1 and K % 8 == 0 and (K // 8 + 1) == TILE", {"spec.yaml", 3, 5})
                       .equalities(is_param, is_size);
  ASSERT_EQ(and_terms.size(), 1u);
  EXPECT_EQ(and_terms[0].first, "TILE");
  EXPECT_EQ(and_terms[0].second.evaluate(Bindings{{"K", Value(16)}}), Value(3));
  EXPECT_EQ(and_terms[0].second.where().line, 3);
  EXPECT_GT(and_terms[0].second.where().column, 5);

  for (const char* none : {"BM == BN", "BM <= M", "BM == M or BM == 1", "BM == M == 4", "M == 4", "BM != M",
                           "not (BM == M)", "BM == M + BN"})
    EXPECT_TRUE(Expression::parse(none).equalities(is_param, is_size).empty()) << none;
}

TEST(Conjuncts, SplitATopLevelAndKeepingEachTermsTextAndPlace) {
  const auto terms = Expression::parse("A * B <= lim and (C > 2 or D) and E", {"spec.yaml", 4, 7}).conjuncts();
  ASSERT_EQ(terms.size(), 3u);
  EXPECT_EQ(terms[0].text(), "A * B <= lim");
  EXPECT_EQ(terms[1].variables(), (std::vector<std::string>{"C", "D"}));
  EXPECT_EQ(terms[2].text(), "E");
  EXPECT_EQ(terms[2].where().line, 4);
  EXPECT_EQ(terms[2].where().column, 7 + 34);  // E is the 35th character
  for (const char* whole : {"A or B and C", "not (A and B)", "A"})
    EXPECT_EQ(Expression::parse(whole).conjuncts().at(0).text(), whole);
}
