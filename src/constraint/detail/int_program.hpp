#pragma once
// A register program for expressions over ints only: the space engine's fast
// path for the common constraint shapes (`a % b == 0`, `a*b <= c`, chains,
// and/or). Same results as the interpreter: every operation goes through the
// shared Python semantics (semantics.hpp), short-circuits jump exactly where
// the interpreter's do, and anything that is not an int (an input, or a
// result such as 2 ** -1) makes the run `bail`, so that the caller falls
// back to the interpreter for that evaluation.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "constraint/detail/program.hpp"

namespace tunekit::detail {

class IntProgram {
 public:
  enum class Outcome : std::uint8_t { ok, error, bail };

  // nullopt if `tree` uses something that is never an int (a float or str
  // constant, `/`, float()). Var names map to slots through var_slot.
  static std::optional<IntProgram> compile(const NodePtr& tree, const std::function<int(const std::string&)>& var_slot);

  // Runs over `vars` (slots as in run_slots). `regs` is scratch space of at
  // least registers() entries.
  Outcome run(const Slot* vars, std::int64_t* regs, std::int64_t& out) const;

  // Several steps fused into one program: each computes an expression into
  // a slot (`tree` set) or tests the truth of a slot computed before (`tree`
  // null). A later tree may read an earlier step's slot (it is kept in a
  // register). run_steps() stores every computed value into `vars` and
  // returns ok, `rejected` (a test was false: the remaining steps are not
  // run), or `bail` if anything is not an int or any evaluation fails (the
  // caller then runs the steps one by one, which gives errors their
  // deferred meaning).
  struct Step {
    NodePtr tree;
    int slot;
  };
  enum class StepsOutcome : std::uint8_t { ok, rejected, bail };
  static std::optional<IntProgram> compile_steps(const std::vector<Step>& steps,
                                                 const std::function<int(const std::string&)>& var_slot);
  StepsOutcome run_steps(Slot* vars, std::int64_t* regs) const;
  std::size_t registers() const { return registers_; }

  enum class Code : std::uint8_t {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,  // binary, via binary_op
    Neg,
    Invert,
    Not,  // unary
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,  // comparisons -> 0/1
    Min,
    Max,
    Abs,
    CeilDiv,        // calls
    Mov,            // dst = a
    Set,            // dst = b (an immediate)
    JumpIfZero,     // if a == 0: jump to b
    JumpIfNonZero,  // if a != 0: jump to b
    Jump,           // jump to b
    Store,          // vars[b] = a (run_steps)
    Reject,         // if a == 0: stop, rejected (run_steps)
  };
  struct Op {
    Code code;
    std::int32_t dst = 0, a = 0;
    std::int64_t b = 0;  // register, immediate or jump target
  };

 private:
  friend class IntCompiler;
  std::vector<Op> ops_;
  std::vector<std::pair<std::int32_t, std::int32_t>> loads_;      // (register, slot)
  std::vector<std::pair<std::int32_t, std::int64_t>> constants_;  // (register, value)
  std::size_t registers_ = 0;
  std::int32_t result_ = 0;
};

}  // namespace tunekit::detail
