// Reading an expression as a definition (`NAME == E`) and writing it as C++,
// Python or a JSON tree for generated code (the policy header, the Python
// policy module, the JSON policy that online.hpp reads).
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

// The languages an expression is written in for generated code.
enum class Lang { cpp, python, tree };

// Writes an integer expression as C++, as Python or as a JSON tree. One
// writer for the three, so that they accept the same expressions and agree
// on every operation (the policy header is the reference; the Python module
// and the online tuner must pick what it picks).
//
// C++: every generated subexpression is a std::int64_t, so that Python's
// `a and b` (which returns an operand) and bools in arithmetic keep their
// meaning. Python: ints (comparisons and `not` wrapped in int(), as C++'s
// std::int64_t(...)). Tree: JSON, an int, a variable as `name` spells it,
// or [op, operands...] (constraint.hpp lists them; online.hpp evaluates them).
class CodeWriter {
 public:
  CodeWriter(Lang lang, const std::function<std::optional<std::string>(const std::string&)>& name,
             std::string_view helpers)
      : lang_(lang), name_(name), h_(helpers) {}

  std::optional<std::string> write(const Node& n) {
    switch (n.kind) {
      case Kind::Const: {
        if (!n.value.is_int()) return std::nullopt;
        const std::int64_t v = n.value.as_int();
        if (lang_ == Lang::tree) return std::to_string(v);
        // (an int literal that does not fit int is long or long long: 64 bits
        // either way; INT64_MIN has no literal of its own)
        if (v == INT64_MIN) return std::string("(-9223372036854775807 - 1)");
        return v < 0 ? fmt::format("({})", v) : std::to_string(v);
      }
      case Kind::Var:
        return name_(n.name);
      case Kind::Unary: {
        auto a = write(*n.kids[0]);
        if (!a) return std::nullopt;
        switch (static_cast<UnOp>(n.op)) {
          case UnOp::Neg:
            return lang_ == Lang::tree ? tree("-", {*a}) : "(-" + *a + ")";
          case UnOp::Pos:
            return *a;
          case UnOp::Invert:
            return lang_ == Lang::tree ? tree("~", {*a}) : "(~" + *a + ")";
          case UnOp::Not:
            switch (lang_) {
              case Lang::cpp:
                return "std::int64_t(!" + *a + ")";
              case Lang::python:
                return "int(not " + *a + ")";
              case Lang::tree:
                return tree("not", {*a});
            }
        }
        return std::nullopt;
      }
      case Kind::Binary:
        return binary(n);
      case Kind::And:
      case Kind::Or: {
        const bool is_and = n.kind == Kind::And;
        if (lang_ != Lang::cpp) {  // Python's own and/or; the tree's mean the same
          auto args = write_all(n.kids);
          if (!args) return std::nullopt;
          if (lang_ == Lang::tree) return tree(is_and ? "and" : "or", *args);
          return fmt::format("({})", fmt::join(*args, is_and ? " and " : " or "));
        }
        // Python: `a and b` is a if a is falsy, else b; `a or b` the reverse.
        auto acc = write(*n.kids.back());
        for (std::size_t k = n.kids.size() - 1; acc && k-- > 0;) {
          auto a = write(*n.kids[k]);
          if (!a) return std::nullopt;
          acc = is_and ? fmt::format("({0} ? {1} : {0})", *a, *acc) : fmt::format("({0} ? {0} : {1})", *a, *acc);
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
        switch (lang_) {
          case Lang::cpp:
            return fmt::format("({} ? {} : {})", *c, *x, *y);
          case Lang::python:
            return fmt::format("({} if {} else {})", *x, *c, *y);
          case Lang::tree:
            return tree("if", {*c, *x, *y});
        }
        return std::nullopt;
      }
      case Kind::List:
        return std::nullopt;  // only inside 'in', handled there
    }
    return std::nullopt;
  }

 private:
  static std::string tree(std::string_view op, const std::vector<std::string>& args) {
    return fmt::format("[\"{}\"{}{}]", op, args.empty() ? "" : ", ", fmt::join(args, ", "));
  }

  std::optional<std::vector<std::string>> write_all(const std::vector<detail::NodePtr>& kids) {
    std::vector<std::string> out;
    for (const auto& k : kids) {
      auto a = write(*k);
      if (!a) return std::nullopt;
      out.push_back(*a);
    }
    return out;
  }

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
    // Python's and the tree's symbols are the language's own (spelling());
    // floor division and modulo call the helpers, which C++ needs and which
    // keep Python from raising where the header gives 0.
    const char* symbol = detail::spelling(op);
    if (lang_ == Lang::tree) return tree(symbol, {*a, *b});
    if (op == BinOp::FloorDiv) return fmt::format("{}floordiv({}, {})", h_, *a, *b);
    if (op == BinOp::Mod) return fmt::format("{}mod({}, {})", h_, *a, *b);
    // Python's shifts are the multiplication and floor division by 2**k;
    // C++ says so in words (its shifts of negative numbers differ).
    if (lang_ == Lang::cpp && op == BinOp::Shl) return fmt::format("({} * (std::int64_t{{1}} << {}))", *a, *b);
    if (lang_ == Lang::cpp && op == BinOp::Shr)
      return fmt::format("{}floordiv({}, std::int64_t{{1}} << {})", h_, *a, *b);
    return fmt::format("({} {} {})", *a, symbol, *b);
  }

  std::optional<std::string> compare(const Node& n) {
    std::vector<std::string> terms;  // C++: one per comparison; Python and the tree: the chain
    auto a = write(*n.kids[0]);
    if (!a) return std::nullopt;
    if (lang_ != Lang::cpp) terms.push_back(*a);
    for (std::size_t k = 0; k < n.cmps.size(); ++k) {
      const Node& right = *n.kids[k + 1];
      const bool in = n.cmps[k] == Cmp::In || n.cmps[k] == Cmp::NotIn;
      std::optional<std::string> b;
      if (in) {
        if (right.kind != Kind::List) return std::nullopt;  // str containment
        auto items = write_all(right.kids);
        if (!items) return std::nullopt;
        if (lang_ == Lang::cpp) {
          std::vector<std::string> eq;
          for (const auto& v : *items) eq.push_back(*a + " == " + v);
          std::string any = eq.empty() ? "false" : fmt::format("({})", fmt::join(eq, " || "));
          terms.push_back(n.cmps[k] == Cmp::In ? any : "!" + any);
        } else {
          terms.push_back(lang_ == Lang::tree ? fmt::format("\"{}\"", detail::spelling(n.cmps[k]))
                                              : detail::spelling(n.cmps[k]));
          terms.push_back(lang_ == Lang::tree ? tree("list", *items) : fmt::format("[{}]", fmt::join(*items, ", ")));
        }
      } else {
        b = write(right);
        if (!b) return std::nullopt;
        const char* op = detail::spelling(n.cmps[k]);
        if (lang_ == Lang::cpp) terms.push_back(fmt::format("{} {} {}", *a, op, *b));
        else {
          terms.push_back(lang_ == Lang::tree ? fmt::format("\"{}\"", op) : op);
          terms.push_back(*b);
        }
      }
      // The next comparison's left operand (a list cannot be one: refused above).
      if (k + 1 < n.cmps.size()) {
        if (!b) return std::nullopt;
        a = b;
      }
    }
    switch (lang_) {
      case Lang::cpp:
        return fmt::format("std::int64_t({})", fmt::join(terms, " && "));
      case Lang::python:
        return fmt::format("int({})", fmt::join(terms, " "));
      case Lang::tree:
        return tree("cmp", terms);
    }
    return std::nullopt;
  }

  std::optional<std::string> call(const Node& n) {
    auto args = write_all(n.kids);
    if (!args) return std::nullopt;
    const auto fn = static_cast<Fn>(n.op);
    switch (fn) {
      case Fn::Min:
      case Fn::Max: {
        // Python returns the first of equal extremes; so do the helpers, pairwise from the left
        const char* f = detail::spelling(fn);
        if (lang_ == Lang::tree) return tree(f, *args);
        const std::string prefix = lang_ == Lang::cpp ? h_ : "";  // Python's own min and max
        std::string acc = (*args)[0];
        for (std::size_t i = 1; i < args->size(); ++i) acc = fmt::format("{}{}({}, {})", prefix, f, acc, (*args)[i]);
        return acc;
      }
      case Fn::Abs:
        if (lang_ == Lang::tree) return tree(detail::spelling(fn), *args);
        return fmt::format("{}abs({})", lang_ == Lang::cpp ? h_ : "", (*args)[0]);
      case Fn::CeilDiv:
        if (lang_ == Lang::tree) return tree(detail::spelling(fn), *args);
        return fmt::format("{}ceil_div({}, {})", h_, (*args)[0], (*args)[1]);
      case Fn::Int:
        return (*args)[0];  // of an int (anything else was refused above)
      case Fn::Float:
      case Fn::Round:
        return std::nullopt;
    }
    return std::nullopt;
  }

  Lang lang_;
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
  return CodeWriter(Lang::cpp, name, helpers).write(*program_->tree);
}

std::optional<std::string> Expression::to_python(
    const std::function<std::optional<std::string>(const std::string&)>& name, std::string_view helpers) const {
  if (!program_ || !program_->tree) return std::nullopt;
  return CodeWriter(Lang::python, name, helpers).write(*program_->tree);
}

std::optional<std::string> Expression::to_tree(
    const std::function<std::optional<std::string>(const std::string&)>& name) const {
  if (!program_ || !program_->tree) return std::nullopt;
  return CodeWriter(Lang::tree, name, "").write(*program_->tree);
}

std::vector<Expression> Expression::conjuncts() const {
  if (!program_ || !program_->tree || program_->tree->kind != Kind::And) return {*this};
  std::vector<Expression> out;
  const std::string_view text = program_->text;
  for (const auto& k : program_->tree->kids)
    out.push_back(Expression::parse(text.substr(k->begin, k->end - k->begin),
                                    program_->where.shifted(detail::char_index(text, k->begin))));
  return out;
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
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return floordiv(a, b) + (mod(a, b) != 0); }
constexpr std::int64_t min(std::int64_t a, std::int64_t b) { return b < a ? b : a; }
constexpr std::int64_t max(std::int64_t a, std::int64_t b) { return b > a ? b : a; }
constexpr std::int64_t abs(std::int64_t a) { return a < 0 ? -a : a; }
)";
}

std::string python_int_helpers(std::string_view prefix) {
  return fmt::format(R"(# The policy header's integer semantics: Python's, but 0 where Python would raise
# (a division by zero).
def {0}floordiv(a, b):
    return 0 if b == 0 else a // b


def {0}mod(a, b):
    return 0 if b == 0 else a % b


def {0}ceil_div(a, b):
    return -{0}floordiv(-a, b)
)",
                     prefix);
}

}  // namespace tunekit
