// Syntax tree -> flat postfix program.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <unordered_map>

#include "constraint/detail/program.hpp"

namespace tunekit::detail {

namespace {

void collect_names(const Node& n, std::vector<std::pair<int, const std::string*>>& out) {
  if (n.kind == Kind::Var) out.emplace_back(n.begin, &n.name);
  for (const auto& k : n.kids) collect_names(*k, out);
}

class Compiler {
 public:
  explicit Compiler(Program& p, const std::function<int(const std::string&)>* var_index = nullptr) : p_(p) {
    std::vector<std::pair<int, const std::string*>> names;
    collect_names(*p.tree, names);
    std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [pos, name] : names) {
      if (index_.count(*name)) continue;
      index_.emplace(*name, var_index ? (*var_index)(*name) : static_cast<int>(p.variables.size()));
      p.variables.push_back(*name);
    }
  }

  void run() {
    gen(*p_.tree);
    // Slots point into constants, so they are made once the vector is final.
    p_.const_slots.reserve(p_.constants.size());
    for (const auto& v : p_.constants) p_.const_slots.push_back(slot_of(v));
  }

 private:
  std::size_t emit(Op op, const Node& origin, std::uint8_t sub = 0, std::int32_t arg = 0) {
    p_.code.push_back(Instr{op, sub, arg});
    p_.origin.push_back(&origin);
    return p_.code.size() - 1;
  }
  void patch(std::size_t at) { p_.code[at].arg = static_cast<std::int32_t>(p_.code.size()); }
  void grow(int k) {
    depth_ += k;
    p_.max_stack = std::max(p_.max_stack, depth_);
  }

  static bool same(const Value& a, const Value& b) {
    if (a.raw().index() != b.raw().index()) return false;
    if (a.is_float()) return std::bit_cast<std::uint64_t>(a.as_float()) == std::bit_cast<std::uint64_t>(b.as_float());
    return a.raw() == b.raw();
  }

  int constant(const Value& v) {
    for (std::size_t k = 0; k < p_.constants.size(); ++k) {
      const Value& c = p_.constants[k];
      if (same(c, v)) return static_cast<int>(k);
    }
    p_.constants.push_back(v);
    return static_cast<int>(p_.constants.size() - 1);
  }

  void gen(const Node& n) {
    switch (n.kind) {
      case Kind::Const:
        emit(Op::Const, n, 0, constant(n.value));
        grow(1);
        return;
      case Kind::Var:
        emit(Op::Var, n, 0, index_.at(n.name));
        grow(1);
        return;
      case Kind::Unary:
        gen(*n.kids[0]);
        emit(static_cast<Op>(static_cast<int>(Op::Neg) + n.op), n);
        return;
      case Kind::Binary:
        gen(*n.kids[0]);
        gen(*n.kids[1]);
        emit(static_cast<Op>(static_cast<int>(Op::Add) + n.op), n);
        grow(-1);
        return;
      case Kind::And:
      case Kind::Or: {
        std::vector<std::size_t> jumps;
        Op jump = n.kind == Kind::And ? Op::JumpIfFalseOrPop : Op::JumpIfTrueOrPop;
        for (std::size_t k = 0; k + 1 < n.kids.size(); ++k) {
          gen(*n.kids[k]);
          jumps.push_back(emit(jump, n));
          grow(-1);
        }
        gen(*n.kids.back());
        for (auto j : jumps) patch(j);
        return;
      }
      case Kind::Compare: {
        std::vector<std::size_t> jumps;
        gen(*n.kids[0]);
        for (std::size_t k = 0; k < n.cmps.size(); ++k) {
          const Node& right = *n.kids[k + 1];
          Cmp cmp = n.cmps[k];
          bool last = k + 1 == n.cmps.size();
          if (right.kind == Kind::List) {  // only ever the last operand
            for (const auto& e : right.kids) gen(*e);
            emit(cmp == Cmp::In ? Op::InList : Op::NotInList, n, 0, static_cast<std::int32_t>(right.kids.size()));
            grow(-static_cast<int>(right.kids.size()));
            continue;
          }
          gen(right);
          if (last) {
            emit(static_cast<Op>(static_cast<int>(Op::Eq) + static_cast<int>(cmp)), n);
          } else {
            jumps.push_back(emit(Op::Chain, n, static_cast<std::uint8_t>(cmp)));
          }
          grow(-1);
        }
        for (auto j : jumps) patch(j);
        return;
      }
      case Kind::Call:
        for (const auto& k : n.kids) gen(*k);
        emit(Op::Call, n, n.op, static_cast<std::int32_t>(n.kids.size()));
        grow(1 - static_cast<int>(n.kids.size()));
        return;
      case Kind::IfElse: {
        gen(*n.kids[1]);
        std::size_t to_else = emit(Op::PopJumpIfFalse, n);
        grow(-1);
        gen(*n.kids[0]);
        std::size_t to_end = emit(Op::Jump, n);
        grow(-1);
        patch(to_else);
        gen(*n.kids[2]);
        patch(to_end);
        return;
      }
      case Kind::List:
        break;  // rejected by the parser outside 'in'
    }
    throw std::logic_error("tunekit: unexpected list in expression");
  }

  Program& p_;
  std::unordered_map<std::string, int> index_;
  int depth_ = 0;
};

}  // namespace

std::shared_ptr<const Program> compile(std::string text, SourceLocation where, NodePtr tree) {
  auto p = std::make_shared<Program>();
  p->text = std::move(text);
  p->where = std::move(where);
  p->tree = std::move(tree);
  Compiler(*p).run();
  return p;
}

std::shared_ptr<const Program> compile(std::string text, SourceLocation where, NodePtr tree,
                                       const std::function<int(const std::string&)>& var_index) {
  auto p = std::make_shared<Program>();
  p->text = std::move(text);
  p->where = std::move(where);
  p->tree = std::move(tree);
  Compiler(*p, &var_index).run();
  return p;
}

}  // namespace tunekit::detail
