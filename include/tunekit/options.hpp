#pragma once
// Typed options of a plugin, such as a strategy's population size: each is
// declared with its type, default, bounds and help, so that specs
// (`search.options`), the command line (`--option NAME=VALUE`) and
// `tunekit plugins` see the same list, and a bad value is reported where it
// was written.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/error.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct OptionSpec {
  enum class Type { integer, real, boolean, text };
  std::string name;
  Type type = Type::integer;
  Value default_value;
  std::string help;
  double min = -std::numeric_limits<double>::infinity();  // numbers: inclusive bounds
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices{};  // text: the allowed values (empty: any)
};

std::string_view to_string(OptionSpec::Type t);
// "population (integer >= 2, default 20): individuals per generation".
std::string describe(const OptionSpec& spec);

// A value as the user gave it, with where it was written.
struct OptionValue {
  std::string name;
  Value value;
  SourceLocation where;
  // Written true or false (the value is then 1 or 0): no number option
  // takes it.
  bool written_as_boolean = false;
  // The value's text as written, where there is one: a text option takes
  // "007" or "1.50" as it was written, not as the number it also reads as.
  std::string written{};
};

// "name=value" from the command line: the value parses as an int, a float,
// true/false, else text. Throws InputError at `where` without '='.
OptionValue parse_option_assignment(std::string_view text, const SourceLocation& where);

// Each of `texts`, given with `flag` (e.g. "--option"), as above; a name
// given twice is an InputError: which one was meant cannot be known.
std::vector<OptionValue> parse_option_assignments(const std::vector<std::string>& texts, std::string_view flag);

// What is wrong with a plugin's declared options ("" when nothing): a name
// empty, declared twice or one `--option NAME=VALUE` cannot write; bounds
// that are not numbers, or on an option that is not one; choices on an
// option that is not text; or a default that is no value of its option (of
// another type, out of its bounds, not one of its choices, not finite),
// which would fail only when the plugin is first used.
std::string declaration_problem(const std::vector<OptionSpec>& specs);

class Options {
 public:
  Options() = default;
  // Each given value checked against `specs` (name, type, bounds, choices;
  // an int is accepted for a real), the others set to their defaults.
  // Throws InputError at the value's location: "unknown option 'mutaton' of
  // strategy 'genetic'; did you mean 'mutation'? (known: ...)", or what was
  // expected. A name given twice: the later wins. `elsewhere`, when given,
  // adds to the message for an undeclared name (say, whose option it is).
  static Options resolve(std::string_view owner, const std::vector<OptionSpec>& specs,
                         const std::vector<OptionValue>& given,
                         const std::function<std::string(const std::string& name)>& elsewhere = {});

  // Typed access; throws std::out_of_range for a name that was not declared.
  std::int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  const Bindings& values() const { return values_; }

 private:
  const Value& at(std::string_view name) const;
  Bindings values_;
};

}  // namespace tunekit
