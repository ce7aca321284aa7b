#include <cmath>
#include <utility>

#include "constraint/detail/program.hpp"
#include "tunekit/constraint.hpp"

namespace tunekit {

namespace {

using detail::Program;

const Program& empty_program() {
  static const Program p;
  return p;
}

// A moved-from or default Expression behaves as an empty one.
const Program& prog(const std::shared_ptr<const Program>& p) { return p ? *p : empty_program(); }

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string describe_failure(const Program& p, const detail::Failure& f) {
  using detail::Fail;
  using detail::Op;
  using detail::type_name;
  const detail::Node* node = f.pc >= 0 && f.pc < static_cast<int>(p.origin.size()) ? p.origin[f.pc] : nullptr;
  std::string where = node ? " in " + quoted(std::string_view(p.text).substr(node->begin, node->end - node->begin))
                           : " in " + quoted(p.text);
  Op op = p.code[f.pc].op;
  std::string op_text;
  bool is_unary = false, is_call = false, is_compare = false;
  if (op >= Op::Add && op <= Op::Shr) {
    op_text = detail::spelling(static_cast<detail::BinOp>(static_cast<int>(op) - static_cast<int>(Op::Add)));
  } else if (op >= Op::Neg && op <= Op::Not) {
    is_unary = true;
    op_text = detail::spelling(static_cast<detail::UnOp>(static_cast<int>(op) - static_cast<int>(Op::Neg)));
  } else if (op >= Op::Eq && op <= Op::NotIn) {
    is_compare = true;
    op_text = detail::spelling(static_cast<detail::Cmp>(static_cast<int>(op) - static_cast<int>(Op::Eq)));
  } else if (op == Op::Chain) {
    is_compare = true;
    op_text = detail::spelling(static_cast<detail::Cmp>(p.code[f.pc].sub));
  } else if (op == Op::Call) {
    is_call = true;
    op_text = detail::spelling(static_cast<detail::Fn>(p.code[f.pc].sub));
  }
  switch (f.kind) {
    case Fail::ZeroDivision:
      if (op == Op::Pow) return "zero raised to a negative power" + where;
      return "division by zero" + where;
    case Fail::Overflow:
      return "integer overflow" + where + " (integers are 64-bit; use a float operand to allow larger values)";
    case Fail::Complex:
      return "negative number raised to a fractional power" + where + " (the result is complex)";
    case Fail::Value:
      if (op == Op::Shl || op == Op::Shr) return "negative shift count" + where;
      if (is_call) return "invalid argument for " + op_text + "()" + where;
      return "invalid value" + where;
    case Fail::Type:
      if (is_call) return "bad argument type for " + op_text + "()" + where;
      if (is_unary) return "bad operand type for unary '" + op_text + "': '" + type_name(f.b) + "'" + where;
      if (is_compare)
        return "'" + op_text + "' is not supported between '" + type_name(f.a) + "' and '" + type_name(f.b) + "'" +
               where;
      return "unsupported operand types for '" + op_text + "': '" + type_name(f.a) + "' and '" + type_name(f.b) + "'" +
             where;
    case Fail::None:
      break;
  }
  return "evaluation failed" + where;
}

}  // namespace

Expression Expression::parse(std::string_view text, const SourceLocation& where) {
  detail::NodePtr tree = detail::simplify(detail::parse_tree(text, where), nullptr);
  Expression e;
  e.program_ = detail::compile(std::string(text), where, std::move(tree));
  return e;
}

Expression::Expression() = default;
Expression::Expression(const Expression&) = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(const Expression&) = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

const std::string& Expression::text() const { return prog(program_).text; }
const SourceLocation& Expression::where() const { return prog(program_).where; }
const std::vector<std::string>& Expression::variables() const { return prog(program_).variables; }

std::optional<Value> Expression::evaluate(std::span<const Value> variable_values) const {
  const Program& p = prog(program_);
  if (variable_values.size() < p.variables.size()) return std::nullopt;
  detail::Temps temps;
  detail::Slot result;
  if (!detail::run(p, variable_values, result, temps, nullptr)) return std::nullopt;
  return detail::value_of(result);
}

bool Expression::test(std::span<const Value> variable_values) const {
  const Program& p = prog(program_);
  if (variable_values.size() < p.variables.size()) return false;
  detail::Temps temps;
  detail::Slot result;
  if (!detail::run(p, variable_values, result, temps, nullptr)) return false;
  return detail::truthy(result);
}

Value Expression::evaluate(const Bindings& env) const {
  const Program& p = prog(program_);
  if (p.code.empty()) throw InputError(p.where, "empty expression");
  std::vector<Value> values;
  values.reserve(p.variables.size());
  for (const auto& name : p.variables) {
    auto it = env.find(name);
    if (it == env.end()) throw InputError(p.where, "unknown name " + quoted(name) + " in " + quoted(p.text));
    values.push_back(it->second);
  }
  detail::Temps temps;
  detail::Slot result;
  detail::Failure failure;
  if (!detail::run(p, values, result, temps, &failure)) throw InputError(p.where, describe_failure(p, failure));
  return detail::value_of(result);
}

std::int64_t Expression::evaluate_int(const Bindings& env) const {
  Value v = evaluate(env);
  if (v.is_int()) return v.as_int();
  const Program& p = prog(program_);
  if (v.is_float()) {
    double d = v.as_float();
    if (std::isfinite(d) && d == std::trunc(d) && d >= -detail::kTwo63 && d < detail::kTwo63)
      return static_cast<std::int64_t>(d);
    throw InputError(p.where, "expected an integer from " + quoted(p.text) + ", got " + v.str());
  }
  throw InputError(p.where, "expected an integer from " + quoted(p.text) + ", got the string " + v.repr());
}

Expression Expression::bind(const Bindings& constants) const {
  const Program& p = prog(program_);
  if (!p.tree || constants.empty()) return *this;
  detail::NodePtr tree = detail::simplify(p.tree, &constants);
  if (tree == p.tree) return *this;
  Expression e;
  e.program_ = detail::compile(p.text, p.where, std::move(tree));
  return e;
}

}  // namespace tunekit
