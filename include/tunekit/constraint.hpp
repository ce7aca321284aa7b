#pragma once
// The constraint and size-expression language: the Python subset that Kernel
// Tuner's T1 format uses. Parsed once into a flat program, then evaluated
// many times against a slot array.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/error.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

namespace detail {
struct Program;
}

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

 private:
  std::shared_ptr<const detail::Program> program_;
};

}  // namespace tunekit
