// Reading an expression as a definition (`NAME == E`) and writing it as C++
// for generated code (the policy header).
#include <string>

#include <fmt/format.h>

#include "constraint/detail/program.hpp"

namespace tunekit {

namespace {

using detail::BinOp;
using detail::Cmp;
using detail::Fn;
using detail::Kind;
using detail::Node;
using detail::UnOp;

// Every generated subexpression is a std::int64_t, so that Python's
// `a and b` (which returns an operand) and bools in arithmetic keep their
// meaning.
class CppWriter {
 public:
  CppWriter(const std::function<std::optional<std::string>(const std::string&)>& name, std::string_view helpers)
      : name_(name), h_(helpers) {}

  std::optional<std::string> write(const Node& n) {
    switch (n.kind) {
      case Kind::Const:
        if (!n.value.is_int()) return std::nullopt;
        // (an int literal that does not fit int is long or long long: 64 bits
        // either way; INT64_MIN has no literal of its own)
        if (n.value.as_int() == INT64_MIN) return std::string("(-9223372036854775807 - 1)");
        return n.value.as_int() < 0 ? fmt::format("({})", n.value.as_int()) : std::to_string(n.value.as_int());
      case Kind::Var:
        return name_(n.name);
      case Kind::Unary: {
        auto a = write(*n.kids[0]);
        if (!a) return std::nullopt;
        switch (static_cast<UnOp>(n.op)) {
          case UnOp::Neg:
            return "(-" + *a + ")";
          case UnOp::Pos:
            return *a;
          case UnOp::Invert:
            return "(~" + *a + ")";
          case UnOp::Not:
            return "std::int64_t(!" + *a + ")";
        }
        return std::nullopt;
      }
      case Kind::Binary:
        return binary(n);
      case Kind::And:
      case Kind::Or: {
        // Python: `a and b` is a if a is falsy, else b; `a or b` the reverse.
        auto acc = write(*n.kids.back());
        for (std::size_t k = n.kids.size() - 1; acc && k-- > 0;) {
          auto a = write(*n.kids[k]);
          if (!a) return std::nullopt;
          acc = n.kind == Kind::And ? fmt::format("({0} ? {1} : {0})", *a, *acc)
                                    : fmt::format("({0} ? {0} : {1})", *a, *acc);
        }
        return acc;
      }
      case Kind::Compare:
        return compare(n);
      case Kind::Call:
        return call(n);
      case Kind::IfElse: {
        auto x = write(*n.kids[0]), c = write(*n.kids[1]), y = write(*n.kids[2]);
        if (!x || !c || !y) return std::nullopt;
        return fmt::format("({} ? {} : {})", *c, *x, *y);
      }
      case Kind::List:
        return std::nullopt;  // only inside 'in', handled there
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> binary(const Node& n) {
    const auto op = static_cast<BinOp>(n.op);
    if (op == BinOp::Div || op == BinOp::Pow) return std::nullopt;  // floats, or a power C++ lacks
    if (op == BinOp::Shl || op == BinOp::Shr) {
      // As a multiplication or floor division by a power of two, which C++
      // defines for negative numbers too; other counts are refused.
      const Node& count = *n.kids[1];
      if (count.kind != Kind::Const || !count.value.is_int() || count.value.as_int() < 0 || count.value.as_int() > 62)
        return std::nullopt;
    }
    auto a = write(*n.kids[0]), b = write(*n.kids[1]);
    if (!a || !b) return std::nullopt;
    switch (op) {
      case BinOp::Add:
        return fmt::format("({} + {})", *a, *b);
      case BinOp::Sub:
        return fmt::format("({} - {})", *a, *b);
      case BinOp::Mul:
        return fmt::format("({} * {})", *a, *b);
      case BinOp::FloorDiv:
        return fmt::format("{}floordiv({}, {})", h_, *a, *b);
      case BinOp::Mod:
        return fmt::format("{}mod({}, {})", h_, *a, *b);
      case BinOp::BitAnd:
        return fmt::format("({} & {})", *a, *b);
      case BinOp::BitOr:
        return fmt::format("({} | {})", *a, *b);
      case BinOp::BitXor:
        return fmt::format("({} ^ {})", *a, *b);
      case BinOp::Shl:
        return fmt::format("({} * (std::int64_t{{1}} << {}))", *a, *b);
      case BinOp::Shr:
        return fmt::format("{}floordiv({}, std::int64_t{{1}} << {})", h_, *a, *b);
      default:
        return std::nullopt;
    }
  }

  std::optional<std::string> compare(const Node& n) {
    std::vector<std::string> terms;
    for (std::size_t k = 0; k < n.cmps.size(); ++k) {
      auto a = write(*n.kids[k]);
      if (!a) return std::nullopt;
      const Node& right = *n.kids[k + 1];
      if (n.cmps[k] == Cmp::In || n.cmps[k] == Cmp::NotIn) {
        if (right.kind != Kind::List) return std::nullopt;  // str containment
        std::vector<std::string> eq;
        for (const auto& e : right.kids) {
          auto v = write(*e);
          if (!v) return std::nullopt;
          eq.push_back(*a + " == " + *v);
        }
        std::string any = eq.empty() ? "false" : fmt::format("({})", fmt::join(eq, " || "));
        terms.push_back(n.cmps[k] == Cmp::In ? any : "!" + any);
        continue;
      }
      auto b = write(right);
      if (!b) return std::nullopt;
      static constexpr const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      terms.push_back(fmt::format("{} {} {}", *a, kOps[static_cast<int>(n.cmps[k])], *b));
    }
    return fmt::format("std::int64_t({})", fmt::join(terms, " && "));
  }

  std::optional<std::string> call(const Node& n) {
    std::vector<std::string> args;
    for (const auto& k : n.kids) {
      auto a = write(*k);
      if (!a) return std::nullopt;
      args.push_back(*a);
    }
    switch (static_cast<Fn>(n.op)) {
      case Fn::Min:
      case Fn::Max: {
        // Python returns the first of equal extremes; so do the helpers, pairwise from the left
        const char* f = static_cast<Fn>(n.op) == Fn::Min ? "min" : "max";
        std::string acc = args[0];
        for (std::size_t i = 1; i < args.size(); ++i) acc = fmt::format("{}{}({}, {})", h_, f, acc, args[i]);
        return acc;
      }
      case Fn::Abs:
        return fmt::format("{}abs({})", h_, args[0]);
      case Fn::CeilDiv:
        return fmt::format("{}ceil_div({}, {})", h_, args[0], args[1]);
      case Fn::Int:
        return args[0];  // of an int (anything else was refused above)
      case Fn::Float:
      case Fn::Round:
        return std::nullopt;
    }
    return std::nullopt;
  }

  const std::function<std::optional<std::string>(const std::string&)>& name_;
  std::string h_;
};

void free_names(const Node& n, std::vector<std::string>& out) {
  if (n.kind == Kind::Var) out.push_back(n.name);
  for (const auto& k : n.kids) free_names(*k, out);
}

}  // namespace

std::optional<std::string> Expression::to_cpp(const std::function<std::optional<std::string>(const std::string&)>& name,
                                              std::string_view helpers) const {
  if (!program_ || !program_->tree) return std::nullopt;
  return CppWriter(name, helpers).write(*program_->tree);
}

std::vector<std::pair<std::string, Expression>> Expression::equalities(
    const std::function<bool(const std::string&)>& is_target,
    const std::function<bool(const std::string&)>& is_input) const {
  std::vector<std::pair<std::string, Expression>> out;
  if (!program_ || !program_->tree) return out;
  std::vector<const Node*> terms;
  if (program_->tree->kind == Kind::And)
    for (const auto& k : program_->tree->kids) terms.push_back(k.get());
  else terms.push_back(program_->tree.get());
  for (const Node* t : terms) {
    if (t->kind != Kind::Compare || t->cmps.size() != 1 || t->cmps[0] != Cmp::Eq) continue;
    for (int side = 0; side < 2; ++side) {
      const Node& target = *t->kids[side];
      const detail::NodePtr& value = t->kids[1 - side];
      if (target.kind != Kind::Var || !is_target(target.name)) continue;
      std::vector<std::string> names;
      free_names(*value, names);
      bool inputs_only = true;
      for (const auto& n : names) inputs_only = inputs_only && is_input(n);
      if (!inputs_only) continue;
      // E re-parsed from its own text: its text() is E, not the whole constraint
      const std::string_view text = program_->text;
      out.emplace_back(target.name, Expression::parse(text.substr(value->begin, value->end - value->begin),
                                                      program_->where.shifted(detail::char_index(text, value->begin))));
      break;
    }
  }
  return out;
}

std::string cpp_int_helpers() {
  return R"(// Python's integer semantics; where Python would raise (a division by zero), 0.
constexpr std::int64_t floordiv(std::int64_t a, std::int64_t b) {
  if (b == 0) return 0;
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
constexpr std::int64_t mod(std::int64_t a, std::int64_t b) {
  if (b == 0) return 0;
  const std::int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floordiv(-a, b); }
constexpr std::int64_t min(std::int64_t a, std::int64_t b) { return b < a ? b : a; }
constexpr std::int64_t max(std::int64_t a, std::int64_t b) { return b > a ? b : a; }
constexpr std::int64_t abs(std::int64_t a) { return a < 0 ? -a : a; }
)";
}

}  // namespace tunekit
