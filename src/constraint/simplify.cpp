// Constant substitution and folding on the syntax tree. Folding uses the
// same operator implementations as the interpreter; an operation that would
// fail is left in place so that evaluation reports it.
#include "constraint/detail/program.hpp"

namespace tunekit::detail {

namespace {

NodePtr constant_like(const Node& origin, Value v) {
  Node n;
  n.kind = Kind::Const;
  n.value = std::move(v);
  n.begin = origin.begin;
  n.end = origin.end;
  n.op_pos = origin.op_pos;
  return std::make_shared<const Node>(std::move(n));
}

bool is_const(const NodePtr& n) { return n->kind == Kind::Const; }

// Evaluates a chain whose operands are all constants. False on an error.
bool fold_compare(const Node& n, const std::vector<NodePtr>& kids, bool& result) {
  for (std::size_t k = 0; k < n.cmps.size(); ++k) {
    Slot a = slot_of(kids[k]->value);
    const Node& right = *kids[k + 1];
    bool r = false;
    if (right.kind == Kind::List) {
      bool found = false;
      for (const auto& e : right.kids) {
        bool eq = false;
        if (compare(Cmp::Eq, a, slot_of(e->value), eq) != Fail::None) return false;
        if (eq) {
          found = true;
          break;
        }
      }
      r = (n.cmps[k] == Cmp::In) == found;
    } else if (compare(n.cmps[k], a, slot_of(right.value), r) != Fail::None) {
      return false;
    }
    if (!r) {
      result = false;
      return true;
    }
  }
  result = true;
  return true;
}

}  // namespace

NodePtr simplify(const NodePtr& node, const Bindings* constants) {
  const Node& n = *node;
  switch (n.kind) {
    case Kind::Const:
      return node;
    case Kind::Var: {
      if (constants) {
        auto it = constants->find(n.name);
        if (it != constants->end()) return constant_like(n, it->second);
      }
      return node;
    }
    default:
      break;
  }

  std::vector<NodePtr> kids;
  kids.reserve(n.kids.size());
  bool changed = false;
  for (const auto& k : n.kids) {
    kids.push_back(simplify(k, constants));
    changed |= kids.back() != k;
  }
  auto rebuilt = [&]() -> NodePtr {
    if (!changed) return node;
    Node copy = n;
    copy.kids = kids;
    return std::make_shared<const Node>(std::move(copy));
  };
  auto all_const = [&](const std::vector<NodePtr>& v) {
    for (const auto& k : v)
      if (!is_const(k)) return false;
    return true;
  };

  Temps temps;
  switch (n.kind) {
    case Kind::Unary: {
      if (!is_const(kids[0])) return rebuilt();
      Slot out;
      if (unary(static_cast<UnOp>(n.op), slot_of(kids[0]->value), out) != Fail::None) return rebuilt();
      return constant_like(n, value_of(out));
    }
    case Kind::Binary: {
      if (!is_const(kids[0]) || !is_const(kids[1])) return rebuilt();
      Slot out;
      if (binary(static_cast<BinOp>(n.op), slot_of(kids[0]->value), slot_of(kids[1]->value), out, temps) != Fail::None)
        return rebuilt();
      return constant_like(n, value_of(out));
    }
    case Kind::Call: {
      if (!all_const(kids)) return rebuilt();
      std::vector<Slot> args;
      for (const auto& k : kids) args.push_back(slot_of(k->value));
      Slot out;
      if (call(static_cast<Fn>(n.op), args.data(), static_cast<int>(args.size()), out, temps) != Fail::None)
        return rebuilt();
      return constant_like(n, value_of(out));
    }
    case Kind::And:
    case Kind::Or: {
      // A constant operand either decides the result (falsy for 'and',
      // truthy for 'or': later operands are never evaluated) or is skipped
      // (unless it is the last one, whose value is the result).
      bool is_and = n.kind == Kind::And;
      std::vector<NodePtr> kept;
      for (std::size_t k = 0; k < kids.size(); ++k) {
        const NodePtr& kid = kids[k];
        if (is_const(kid)) {
          bool t = truthy(slot_of(kid->value));
          if (t != is_and || k + 1 == kids.size()) {
            kept.push_back(kid);
            break;
          }
          continue;
        }
        kept.push_back(kid);
      }
      if (kept.size() == 1) return kept[0];
      if (kept.size() != n.kids.size()) changed = true;
      kids = std::move(kept);
      return rebuilt();
    }
    case Kind::Compare: {
      for (std::size_t k = 0; k < kids.size(); ++k) {
        if (kids[k]->kind == Kind::List) {
          if (!all_const(kids[k]->kids)) return rebuilt();
        } else if (!is_const(kids[k])) {
          return rebuilt();
        }
      }
      bool result = false;
      if (!fold_compare(n, kids, result)) return rebuilt();
      return constant_like(n, Value(std::int64_t{result ? 1 : 0}));
    }
    case Kind::IfElse: {
      if (!is_const(kids[1])) return rebuilt();
      return truthy(slot_of(kids[1]->value)) ? kids[0] : kids[2];
    }
    case Kind::List:
      return rebuilt();
    default:
      return rebuilt();
  }
}

}  // namespace tunekit::detail
