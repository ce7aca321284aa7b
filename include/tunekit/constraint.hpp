#pragma once
// The constraint and size-expression language: the Python subset that Kernel
// Tuner's T1 format uses. Parsed once into a flat program, then evaluated
// many times against a slot array.
//
// Language (Python 3 semantics unless noted):
//   literals   1  0x1F  1_000  2.5  1e-3  .5  'str' "str"  True False
//   operators  ** (right-assoc., tighter than a unary minus on its left)
//              unary - + ~;  * / // %;  + -;  << >>;  &;  ^;  |
//              comparisons == != < <= > >= in, not in (chained: a < b < c)
//              not;  and;  or (short-circuit, return an operand);  x if c else y
//   functions  min max (2+ arguments or one list), abs, ceil_div(a, b) (= -(-a // b)),
//              int, float, round (one argument, ties to even)
//   lists      [a, b] or (a, b), only on the right of 'in' / 'not in'
// Values are int (64-bit), float or str; True/False are the ints 1/0.
// `/` always gives a float; `//` and `%` floor (also for floats and negative
// numbers). Differences from Python: an int result outside 64 bits (from
// + - * ** << // abs, or an int literal) is an evaluation error rather than a
// big int; `str * int` and `%`-formatting are errors. Everything Python
// raises for (division by zero, str < int, a negative number to a fractional
// power ...) is an evaluation error; `==` between a str and a number is False.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/error.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

namespace detail {
struct Program;
struct ExpressionAccess;  // the compiled program, for the space engine (src/constraint/detail)
}  // namespace detail

class Expression {
 public:
  // Parses `text`. Throws InputError located at `where` shifted by the column
  // of the offending token (so `where` should point at the text's first char).
  static Expression parse(std::string_view text, const SourceLocation& where = {});

  Expression();
  Expression(const Expression&);
  Expression(Expression&&) noexcept;
  Expression& operator=(const Expression&);
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  const std::string& text() const;
  const SourceLocation& where() const;

  // Free names, in order of first appearance. evaluate() takes their values
  // in this order.
  const std::vector<std::string>& variables() const;

  // nullopt when Python would raise (division by zero, bad operand types,
  // overflow of an int power ...).
  std::optional<Value> evaluate(std::span<const Value> variable_values) const;
  // Python truthiness of evaluate(); an evaluation error counts as false.
  bool test(std::span<const Value> variable_values) const;

  // Convenience for cold paths: looks names up in `env`. Throws InputError
  // (at where()) naming an unbound variable, or saying the evaluation failed.
  Value evaluate(const Bindings& env) const;
  std::int64_t evaluate_int(const Bindings& env) const;

  // Replaces the variables found in `constants` by their values and folds
  // what becomes constant. Variables not in `constants` stay free.
  Expression bind(const Bindings& constants) const;

  // The terms `NAME == E` (NAME on either side) of this expression, alone or
  // joined by a top-level `and`, where is_target(NAME) holds and every free
  // name of E passes is_input: what the expression requires NAME to equal,
  // e.g. a tile size pinned to the problem size.
  std::vector<std::pair<std::string, Expression>> equalities(
      const std::function<bool(const std::string&)>& is_target,
      const std::function<bool(const std::string&)>& is_input) const;

  // The operands of a top-level `and` (`a and b and c` gives three), else
  // this expression; each with its own text and location.
  std::vector<Expression> conjuncts() const;

  // C++17 source that computes this expression over 64-bit integers, for
  // generated code; nullopt when that is not enough (a float or string
  // value, '/', '**', float(), round(), a shift by other than a constant
  // 0..62). `name` gives the C++ for each free variable (nullopt: refuse).
  // Floor division, modulo, ceil_div, min, max and abs become calls to
  // `<helpers>floordiv` and so on: cpp_int_helpers() defines them.
  std::optional<std::string> to_cpp(const std::function<std::optional<std::string>(const std::string&)>& name,
                                    std::string_view helpers) const;
  // The same expression, accepted and refused as by to_cpp(), as Python
  // source over ints that computes what the C++ computes: `<helpers>floordiv`,
  // `mod` and `ceil_div` are python_int_helpers()'s (0 on a zero divisor, as
  // in C++); min, max and abs are Python's.
  std::optional<std::string> to_python(const std::function<std::optional<std::string>(const std::string&)>& name,
                                       std::string_view helpers) const;
  // The same again as a JSON tree, for a reader without this parser (the
  // header-only online.hpp evaluates it): an int; a variable as `name`
  // spells it (JSON text, such as ["size", "M"]); or [op, operands...] with
  // op "-" (one operand: negation) "~" "not" "+" "*" "//" "%" "&" "|" "^"
  // "<<" ">>" "and" "or" "min" "max" "abs" "ceil_div", "if" [cond, then,
  // else], "cmp" [a, "<", b, "in", ["list", ...], ...] (a Python chain).
  std::optional<std::string> to_tree(const std::function<std::optional<std::string>(const std::string&)>& name) const;

 private:
  friend struct detail::ExpressionAccess;
  std::shared_ptr<const detail::Program> program_;
};

// C++17 definitions of the functions to_cpp() calls, with Python's meaning
// (floor division and modulo; where Python would raise, as on a division by
// zero, they return 0). Put them in a namespace and pass its prefix.
std::string cpp_int_helpers();
// Python definitions of the helpers to_python() calls, with the C++ ones'
// meaning, named `<prefix>floordiv` and so on (pass to_python() the same prefix).
std::string python_int_helpers(std::string_view prefix);

}  // namespace tunekit
