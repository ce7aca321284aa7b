// The interpreter: a switch over a flat postfix program and a small stack of
// unboxed values. No allocation unless a string is concatenated or the
// program needs an unusually deep stack.
#include <memory>

#include "constraint/detail/program.hpp"

namespace tunekit::detail {

namespace {

// Variables from the caller's Values (Expression::evaluate / test).
struct ValueVars {
  const Value* vv;
  static constexpr bool kMayFail = false;
  Slot load(int k) const { return slot_of(vv[k]); }
};

// Variables as slots, possibly deferred errors (the space engine).
struct SlotVars {
  const Slot* vs;
  static constexpr bool kMayFail = true;
  Slot load(int k) const { return vs[k]; }
};

template <class Vars>
inline bool run_impl(const Program& p, Vars vars, Slot& result, Temps& temps, Failure* failure) {
  const int n = static_cast<int>(p.code.size());
  if (n == 0) return false;
  constexpr int kInline = 32;
  Slot inline_stack[kInline];
  std::unique_ptr<Slot[]> heap;
  Slot* st = inline_stack;
  if (p.max_stack > kInline) {
    heap = std::make_unique<Slot[]>(static_cast<std::size_t>(p.max_stack));
    st = heap.get();
  }
  const Instr* code = p.code.data();
  const Slot* consts = p.const_slots.data();
  int sp = 0;
  int pc = 0;
  Fail f = Fail::None;

#define TK_BINARY(NAME)                                                    \
  case Op::NAME:                                                           \
    f = binary_op<BinOp::NAME>(st[sp - 2], st[sp - 1], st[sp - 2], temps); \
    if (f != Fail::None) goto error;                                       \
    --sp;                                                                  \
    break;
#define TK_COMPARE(NAME)                                  \
  case Op::NAME: {                                        \
    bool r = false;                                       \
    f = compare_op<Cmp::NAME>(st[sp - 2], st[sp - 1], r); \
    if (f != Fail::None) goto error;                      \
    --sp;                                                 \
    st[sp - 1] = int_slot(r ? 1 : 0);                     \
    break;                                                \
  }
#define TK_UNARY(NAME)                             \
  case Op::NAME:                                   \
    f = unary(UnOp::NAME, st[sp - 1], st[sp - 1]); \
    if (f != Fail::None) goto error;               \
    break;

  for (; pc < n; ++pc) {
    const Instr in = code[pc];
    switch (in.op) {
      case Op::Const:
        st[sp++] = consts[in.arg];
        break;
      case Op::Var:
        st[sp] = vars.load(in.arg);
        if constexpr (Vars::kMayFail) {
          if (st[sp].tag == kErrorTag) {
            f = Fail::Value;
            ++sp;
            goto error;
          }
        }
        ++sp;
        break;
        TK_BINARY(Add)
        TK_BINARY(Sub)
        TK_BINARY(Mul)
        TK_BINARY(Div)
        TK_BINARY(FloorDiv)
        TK_BINARY(Mod)
        TK_BINARY(Pow)
        TK_BINARY(BitAnd)
        TK_BINARY(BitOr)
        TK_BINARY(BitXor)
        TK_BINARY(Shl)
        TK_BINARY(Shr)
        TK_UNARY(Neg)
        TK_UNARY(Pos)
        TK_UNARY(Invert)
      case Op::Not:
        st[sp - 1] = int_slot(truthy(st[sp - 1]) ? 0 : 1);
        break;
        TK_COMPARE(Eq)
        TK_COMPARE(Ne)
        TK_COMPARE(Lt)
        TK_COMPARE(Le)
        TK_COMPARE(Gt)
        TK_COMPARE(Ge)
        TK_COMPARE(In)
        TK_COMPARE(NotIn)
      case Op::Chain: {
        bool r = false;
        f = compare(static_cast<Cmp>(in.sub), st[sp - 2], st[sp - 1], r);
        if (f != Fail::None) goto error;
        --sp;
        if (r) {
          st[sp - 1] = st[sp];
        } else {
          st[sp - 1] = int_slot(0);
          pc = in.arg - 1;
        }
        break;
      }
      case Op::InList:
      case Op::NotInList: {
        const int k = in.arg;
        const Slot x = st[sp - k - 1];
        bool found = false;
        for (int j = 0; j < k && !found; ++j) {
          bool eq = false;
          compare_op<Cmp::Eq>(x, st[sp - k + j], eq);  // == never fails
          found = eq;
        }
        sp -= k;
        st[sp - 1] = int_slot(found == (in.op == Op::InList) ? 1 : 0);
        break;
      }
      case Op::JumpIfFalseOrPop:
        if (!truthy(st[sp - 1])) pc = in.arg - 1;
        else --sp;
        break;
      case Op::JumpIfTrueOrPop:
        if (truthy(st[sp - 1])) pc = in.arg - 1;
        else --sp;
        break;
      case Op::PopJumpIfFalse:
        --sp;
        if (!truthy(st[sp])) pc = in.arg - 1;
        break;
      case Op::Jump:
        pc = in.arg - 1;
        break;
      case Op::Call: {
        const int k = in.arg;
        Slot out;
        f = call(static_cast<Fn>(in.sub), &st[sp - k], k, out, temps);
        if (f != Fail::None) goto error;
        sp -= k;
        st[sp++] = out;
        break;
      }
    }
  }
#undef TK_BINARY
#undef TK_COMPARE
#undef TK_UNARY
  result = st[sp - 1];
  return true;

error:
  if (failure) {
    failure->kind = f;
    failure->pc = pc;
    failure->b = st[sp - 1].tag;
    failure->a = sp >= 2 ? st[sp - 2].tag : st[sp - 1].tag;
  }
  return false;
}

}  // namespace

bool run(const Program& p, std::span<const Value> vars, Slot& result, Temps& temps, Failure* failure) {
  return run_impl(p, ValueVars{vars.data()}, result, temps, failure);
}

bool run_slots(const Program& p, const Slot* vars, Slot& result, Temps& temps) {
  return run_impl(p, SlotVars{vars}, result, temps, nullptr);
}

}  // namespace tunekit::detail
