// The int-only fast path (IntProgram) against the interpreter, on random
// expressions over random ints: the same value, or an error exactly when
// the interpreter fails; `bail` only where a result is not an int.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "constraint/detail/int_program.hpp"
#include "constraint/detail/program.hpp"
#include "tunekit/constraint.hpp"

using tunekit::Expression;
using tunekit::Value;
using namespace tunekit::detail;

namespace {

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  std::string leaf() {
    static const char* literals[] = {"0", "1", "2", "3", "-1", "7", "64", "9223372036854775807", "True"};
    if (chance(0.7)) return "v" + std::to_string(uniform(0, 2));
    return literals[uniform(0, 8)];
  }
  std::string expr(int depth) {
    static const char* bin[] = {"+", "-", "*", "//", "%", "**", "&", "|", "^", "<<", ">>"};
    static const char* cmp[] = {"==", "!=", "<", "<=", ">", ">="};
    if (depth <= 0 || chance(0.25)) return leaf();
    switch (uniform(0, 11)) {
      case 0:
      case 1:
      case 2:
        return "(" + expr(depth - 1) + " " + bin[uniform(0, 10)] + " " + expr(depth - 1) + ")";
      case 3: {
        std::string s = expr(depth - 1);
        for (int k = uniform(1, 3); k > 0; --k) s += std::string(" ") + cmp[uniform(0, 5)] + " " + expr(depth - 1);
        return "(" + s + ")";
      }
      case 4:
        return "(" + expr(depth - 1) + (chance(0.5) ? " and " : " or ") + expr(depth - 1) + ")";
      case 5:
        return "(not " + expr(depth - 1) + ")";
      case 6:
        return std::string("(") + (chance(0.5) ? "-" : "~") + expr(depth - 1) + ")";
      case 7:
        return "(" + expr(depth - 1) + " if " + expr(depth - 1) + " else " + expr(depth - 1) + ")";
      case 8:
        return std::string(chance(0.5) ? "min(" : "max(") + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 9:
        return "ceil_div(" + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 10:
        return std::string(chance(0.5) ? "abs(" : (chance(0.5) ? "int(" : "round(")) + expr(depth - 1) + ")";
      default:
        return "(" + expr(depth - 1) + (chance(0.5) ? " in [" : " not in [") + expr(depth - 1) + ", " + leaf() + "])";
    }
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

TEST(IntProgram, AgreesWithTheInterpreter) {
  Gen g(99);
  int compared = 0, errors = 0, bailed = 0, uncompiled = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = g.expr(4);
    Expression e = Expression::parse(text);
    const auto& program = *ExpressionAccess::program(e);
    // Variable vK reads slot K.
    auto ip = IntProgram::compile(program.tree, [](const std::string& name) { return std::stoi(name.substr(1)); });
    if (!ip) {  // a constant folded to a float (1 ** -1)
      ++uncompiled;
      continue;
    }
    std::vector<std::int64_t> regs(ip->registers() + 1);
    for (int trial = 0; trial < 8; ++trial) {
      static const std::int64_t pool[] = {0, 1, -1, 2, 3, -7, 63, 64, 1000003, INT64_MAX, INT64_MIN};
      Slot slots[3];
      Value values[3];
      for (int k = 0; k < 3; ++k) {
        std::int64_t v = pool[g.uniform(0, 10)];
        slots[k] = int_slot(v);
        values[k] = Value(v);
      }
      std::vector<Value> args;
      for (const auto& name : e.variables()) args.push_back(values[std::stoi(name.substr(1))]);
      std::optional<Value> want = e.evaluate(args);
      std::int64_t got = 0;
      switch (ip->run(slots, regs.data(), got)) {
        case IntProgram::Outcome::ok:
          ASSERT_TRUE(want.has_value()) << text;
          ASSERT_TRUE(want->is_int()) << text;
          ASSERT_EQ(got, want->as_int()) << text;
          ++compared;
          break;
        case IntProgram::Outcome::error:
          ASSERT_FALSE(want.has_value()) << text << " = " << want->repr();
          ++errors;
          break;
        case IntProgram::Outcome::bail:
          // Only a non-int result (a negative power) bails.
          ++bailed;
          break;
      }
    }
  }
  std::printf("[ int path ] %d equal values, %d equal errors, %d handed to the interpreter\n", compared, errors,
              bailed);
  EXPECT_LT(uncompiled, 300);
  EXPECT_GT(compared, 5000);
  EXPECT_GT(errors, 500);
}

TEST(IntProgram, NonIntInputsBailAndNonIntExpressionsDoNotCompile) {
  auto slot = [](const std::string& name) { return std::stoi(name.substr(1)); };
  Expression e = Expression::parse("v0 * 2 <= v1");
  auto ip = IntProgram::compile(ExpressionAccess::program(e)->tree, slot);
  ASSERT_TRUE(ip.has_value());
  std::vector<std::int64_t> regs(ip->registers());
  Slot slots[2] = {float_slot(1.5), int_slot(4)};
  std::int64_t out = 0;
  EXPECT_EQ(ip->run(slots, regs.data(), out), IntProgram::Outcome::bail);
  slots[0] = error_slot();
  EXPECT_EQ(ip->run(slots, regs.data(), out), IntProgram::Outcome::bail);
  slots[0] = int_slot(2);
  EXPECT_EQ(ip->run(slots, regs.data(), out), IntProgram::Outcome::ok);
  EXPECT_EQ(out, 1);

  for (const char* text : {"v0 / 2 > 1", "v0 * 0.5 > 1", "v0 == 'a'", "float(v0) > 1", "v0 in v1"}) {
    Expression f = Expression::parse(text);
    EXPECT_FALSE(IntProgram::compile(ExpressionAccess::program(f)->tree, slot).has_value()) << text;
  }
  Expression pow = Expression::parse("v0 ** v1");
  auto pp = IntProgram::compile(ExpressionAccess::program(pow)->tree, slot);
  ASSERT_TRUE(pp.has_value());
  std::vector<std::int64_t> r2(pp->registers());
  Slot s2[2] = {int_slot(2), int_slot(-1)};
  EXPECT_EQ(pp->run(s2, r2.data(), out), IntProgram::Outcome::bail);  // 0.5: a float
}
