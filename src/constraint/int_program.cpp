// The int-only register program (see detail/int_program.hpp).
#include "constraint/detail/int_program.hpp"

namespace tunekit::detail {

using Code = IntProgram::Code;

class IntCompiler {
 public:
  IntCompiler(IntProgram& p, const std::function<int(const std::string&)>& var_slot) : p_(p), var_slot_(var_slot) {}

  // The register that holds n's value; false if n is not int-only.
  bool gen(const Node& n, std::int32_t& reg) {
    switch (n.kind) {
      case Kind::Const:
        if (!n.value.is_int()) return false;
        reg = constant(n.value.as_int());
        return true;
      case Kind::Var: {
        const int slot = var_slot_(n.name);
        for (const auto& [s, r] : produced_)
          if (s == slot) return reg = r, true;
        for (const auto& [r, s] : p_.loads_)
          if (s == slot) return reg = r, true;
        reg = fresh();
        p_.loads_.emplace_back(reg, slot);
        return true;
      }
      case Kind::Unary: {
        std::int32_t a;
        if (!gen(*n.kids[0], a)) return false;
        static constexpr Code codes[] = {Code::Neg, Code::Mov, Code::Invert, Code::Not};  // Neg Pos Invert Not
        reg = fresh();
        emit(codes[n.op], reg, a);
        return true;
      }
      case Kind::Binary: {
        const auto op = static_cast<BinOp>(n.op);
        if (op == BinOp::Div) return false;  // always a float
        std::int32_t a, b;
        if (!gen(*n.kids[0], a) || !gen(*n.kids[1], b)) return false;
        static constexpr Code codes[] = {Code::Add,      Code::Sub,    Code::Mul, Code::Add /*Div*/,
                                         Code::FloorDiv, Code::Mod,    Code::Pow, Code::BitAnd,
                                         Code::BitOr,    Code::BitXor, Code::Shl, Code::Shr};
        reg = fresh();
        emit(codes[n.op], reg, a, b);
        return true;
      }
      case Kind::And:
      case Kind::Or: {
        // The result is the first falsy (and) / truthy (or) operand, else the last.
        reg = fresh();
        std::vector<std::size_t> exits;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          std::int32_t r;
          if (!gen(*n.kids[k], r)) return false;
          emit(Code::Mov, reg, r);
          if (k + 1 < n.kids.size())
            exits.push_back(emit(n.kind == Kind::And ? Code::JumpIfZero : Code::JumpIfNonZero, 0, reg));
        }
        for (auto e : exits) patch(e);
        return true;
      }
      case Kind::Compare: {
        reg = fresh();
        std::vector<std::size_t> exits;
        std::int32_t left;
        if (!gen(*n.kids[0], left)) return false;
        for (std::size_t k = 0; k < n.cmps.size(); ++k) {
          const Node& right = *n.kids[k + 1];
          const Cmp cmp = n.cmps[k];
          if (right.kind == Kind::List) {
            if (cmp != Cmp::In && cmp != Cmp::NotIn) return false;
            // Every element is evaluated, then compared for equality.
            std::vector<std::int32_t> elems;
            for (const auto& e : right.kids) {
              std::int32_t r;
              if (!gen(*e, r)) return false;
              elems.push_back(r);
            }
            emit(Code::Set, reg, 0, 0);
            const std::int32_t t = fresh();
            for (std::int32_t r : elems) {
              emit(Code::Eq, t, left, r);
              emit(Code::BitOr, reg, reg, t);
            }
            if (cmp == Cmp::NotIn) emit(Code::Not, reg, reg);
            continue;  // a list is always the last operand
          }
          if (cmp == Cmp::In || cmp == Cmp::NotIn) return false;  // substring test: never on ints
          std::int32_t r;
          if (!gen(right, r)) return false;
          static constexpr Code codes[] = {Code::Eq, Code::Ne, Code::Lt, Code::Le, Code::Gt, Code::Ge};
          emit(codes[static_cast<int>(cmp)], reg, left, r);
          if (k + 1 < n.cmps.size()) exits.push_back(emit(Code::JumpIfZero, 0, reg));
          left = r;
        }
        for (auto e : exits) patch(e);
        return true;
      }
      case Kind::Call: {
        const auto fn = static_cast<Fn>(n.op);
        std::vector<std::int32_t> args;
        for (const auto& k : n.kids) {
          std::int32_t r;
          if (!gen(*k, r)) return false;
          args.push_back(r);
        }
        switch (fn) {
          case Fn::Min:
          case Fn::Max: {
            reg = fresh();
            emit(Code::Mov, reg, args[0]);
            for (std::size_t k = 1; k < args.size(); ++k)
              emit(fn == Fn::Min ? Code::Min : Code::Max, reg, reg, args[k]);
            return true;
          }
          case Fn::Abs:
            reg = fresh();
            emit(Code::Abs, reg, args[0]);
            return true;
          case Fn::CeilDiv:
            reg = fresh();
            emit(Code::CeilDiv, reg, args[0], args[1]);
            return true;
          case Fn::Int:
          case Fn::Round:
            reg = args[0];
            return true;  // the identity on ints
          case Fn::Float:
            return false;
        }
        return false;
      }
      case Kind::IfElse: {
        reg = fresh();
        std::int32_t c, x, y;
        if (!gen(*n.kids[1], c)) return false;
        const std::size_t to_else = emit(Code::JumpIfZero, 0, c);
        if (!gen(*n.kids[0], x)) return false;
        emit(Code::Mov, reg, x);
        const std::size_t to_end = emit(Code::Jump, 0, 0);
        patch(to_else);
        if (!gen(*n.kids[2], y)) return false;
        emit(Code::Mov, reg, y);
        patch(to_end);
        return true;
      }
      case Kind::List:
        return false;
    }
    return false;
  }

  // Fused steps: each computed slot stays in its register for later steps.
  bool steps(const std::vector<IntProgram::Step>& steps) {
    for (const auto& step : steps) {
      if (step.tree) {
        std::int32_t r;
        if (!gen(*step.tree, r)) return false;
        emit(Code::Store, 0, r, step.slot);
        produced_.emplace_back(step.slot, r);
      } else {
        std::int32_t r = -1;
        for (const auto& [s, reg] : produced_)
          if (s == step.slot) r = reg;
        if (r < 0) {  // a slot from before (the parameter's value): load it
          Node v;
          v.kind = Kind::Var;
          v.name = "$" + std::to_string(step.slot);
          if (!gen(v, r)) return false;
        }
        emit(Code::Reject, 0, r);
      }
    }
    return true;
  }

 private:
  std::int32_t fresh() { return static_cast<std::int32_t>(p_.registers_++); }
  std::int32_t constant(std::int64_t v) {
    for (const auto& [r, c] : p_.constants_)
      if (c == v) return r;
    std::int32_t r = fresh();
    p_.constants_.emplace_back(r, v);
    return r;
  }
  std::size_t emit(Code c, std::int32_t dst, std::int32_t a, std::int64_t b = 0) {
    p_.ops_.push_back(IntProgram::Op{c, dst, a, b});
    return p_.ops_.size() - 1;
  }
  void patch(std::size_t at) { p_.ops_[at].b = static_cast<std::int64_t>(p_.ops_.size()); }

  IntProgram& p_;
  const std::function<int(const std::string&)>& var_slot_;
  std::vector<std::pair<int, std::int32_t>> produced_;  // (slot, register) of fused steps
};

std::optional<IntProgram> IntProgram::compile(const NodePtr& tree,
                                              const std::function<int(const std::string&)>& var_slot) {
  IntProgram p;
  IntCompiler c(p, var_slot);
  if (!tree || !c.gen(*tree, p.result_)) return std::nullopt;
  return p;
}

std::optional<IntProgram> IntProgram::compile_steps(const std::vector<Step>& steps,
                                                    const std::function<int(const std::string&)>& var_slot) {
  IntProgram p;
  IntCompiler c(p, var_slot);
  if (!c.steps(steps)) return std::nullopt;
  return p;
}

namespace {

template <BinOp OP>
inline IntProgram::Outcome bin(std::int64_t x, std::int64_t y, std::int64_t& out, Temps& temps) {
  Slot r;
  if (binary_op<OP>(int_slot(x), int_slot(y), r, temps) != Fail::None) return IntProgram::Outcome::error;
  if (r.tag != Tag::Int) return IntProgram::Outcome::bail;
  out = r.i;
  return IntProgram::Outcome::ok;
}

}  // namespace

namespace {

// Executes ops; returns 0 ok, 1 error, 2 bail, 3 rejected.
inline int execute(const IntProgram::Op* ops, std::size_t count, std::int64_t* r, Slot* store) {
  static Temps temps;  // never touched: int operations make no strings
  IntProgram::Outcome o = IntProgram::Outcome::ok;
  for (std::size_t pc = 0; pc < count; ++pc) {
    const IntProgram::Op& op = ops[pc];
    const std::int64_t a = r[op.a];
    std::int64_t& d = r[op.dst];
    switch (op.code) {
#define TK_BIN(NAME)                                              \
  case Code::NAME:                                                \
    o = bin<BinOp::NAME>(a, r[op.b], d, temps);                   \
    if (o != IntProgram::Outcome::ok) return static_cast<int>(o); \
    break;
      // The common ones inline (the same int semantics as binary_op).
      case Code::Add:
        if (__builtin_add_overflow(a, r[op.b], &d)) return 1;
        break;
      case Code::Sub:
        if (__builtin_sub_overflow(a, r[op.b], &d)) return 1;
        break;
      case Code::Mul:
        if (__builtin_mul_overflow(a, r[op.b], &d)) return 1;
        break;
      case Code::FloorDiv: {
        const std::int64_t y = r[op.b];
        if (y == 0) return 1;
        if (y == -1) {
          if (a == INT64_MIN) return 1;
          d = -a;
        } else {
          std::int64_t q = a / y;
          if ((a % y != 0) && ((a < 0) != (y < 0))) --q;
          d = q;
        }
        break;
      }
      case Code::Mod: {
        const std::int64_t y = r[op.b];
        if (y == 0) return 1;
        if (y == -1) {
          d = 0;
        } else {
          std::int64_t m = a % y;
          if (m != 0 && ((m < 0) != (y < 0))) m += y;
          d = m;
        }
        break;
      }
        TK_BIN(Pow)
        TK_BIN(BitAnd)
        TK_BIN(BitOr)
        TK_BIN(BitXor)
        TK_BIN(Shl)
        TK_BIN(Shr)
#undef TK_BIN
      case Code::Neg:
        if (a == INT64_MIN) return 1;
        d = -a;
        break;
      case Code::Invert:
        d = ~a;
        break;
      case Code::Not:
        d = a == 0;
        break;
      case Code::Eq:
        d = a == r[op.b];
        break;
      case Code::Ne:
        d = a != r[op.b];
        break;
      case Code::Lt:
        d = a < r[op.b];
        break;
      case Code::Le:
        d = a <= r[op.b];
        break;
      case Code::Gt:
        d = a > r[op.b];
        break;
      case Code::Ge:
        d = a >= r[op.b];
        break;
      case Code::Min:
        d = r[op.b] < a ? r[op.b] : a;
        break;
      case Code::Max:
        d = r[op.b] > a ? r[op.b] : a;
        break;
      case Code::Abs:
        if (a == INT64_MIN) return 1;
        d = a < 0 ? -a : a;
        break;
      case Code::CeilDiv: {
        Slot args[2] = {int_slot(a), int_slot(r[op.b])}, res;
        if (call(Fn::CeilDiv, args, 2, res, temps) != Fail::None) return 1;
        if (res.tag != Tag::Int) return 2;
        d = res.i;
        break;
      }
      case Code::Mov:
        d = a;
        break;
      case Code::Set:
        d = op.b;
        break;
      case Code::JumpIfZero:
        if (a == 0) pc = static_cast<std::size_t>(op.b) - 1;
        break;
      case Code::JumpIfNonZero:
        if (a != 0) pc = static_cast<std::size_t>(op.b) - 1;
        break;
      case Code::Jump:
        pc = static_cast<std::size_t>(op.b) - 1;
        break;
      case Code::Store:
        store[op.b] = int_slot(a);
        break;
      case Code::Reject:
        if (a == 0) return 3;
        break;
    }
  }
  return 0;
}

}  // namespace

IntProgram::Outcome IntProgram::run(const Slot* vars, std::int64_t* r, std::int64_t& out) const {
  for (const auto& [reg, slot] : loads_) {
    const Slot& s = vars[slot];
    if (s.tag != Tag::Int) return Outcome::bail;  // a float, str or deferred error: the interpreter decides
    r[reg] = s.i;
  }
  for (const auto& [reg, value] : constants_) r[reg] = value;
  const int o = execute(ops_.data(), ops_.size(), r, nullptr);
  if (o != 0) return static_cast<Outcome>(o);
  out = r[result_];
  return Outcome::ok;
}

IntProgram::StepsOutcome IntProgram::run_steps(Slot* vars, std::int64_t* r) const {
  for (const auto& [reg, slot] : loads_) {
    const Slot& s = vars[slot];
    if (s.tag != Tag::Int) return StepsOutcome::bail;
    r[reg] = s.i;
  }
  for (const auto& [reg, value] : constants_) r[reg] = value;
  switch (execute(ops_.data(), ops_.size(), r, vars)) {
    case 0:
      return StepsOutcome::ok;
    case 3:
      return StepsOutcome::rejected;
    default:
      return StepsOutcome::bail;
  }
}

}  // namespace tunekit::detail
