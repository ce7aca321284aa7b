#pragma once
// Search spaces from files: Kernel Tuner's T1 JSON, the neutral JSON of
// shared/spaces, and tunekit specs.
//
// T1 (kernel_tuner/schema/T1/1.0.0): ConfigurationSpace.TuningParameters[]
// with Name and Values, a Python list expression such as
// "[2**i for i in range(0, 6)]" or "[1, 2, 4] + list(range(32, 1025, 32))"
// (a JSON array is accepted too), and ConfigurationSpace.Conditions[] with
// an Expression (the Parameters list is not needed). Everything else in the
// file is ignored.
//
// Neutral JSON: {"name", "parameters": [{"name", "values": [...]}],
// "constraints": ["..."], "expected": {"cartesian", "valid"}}.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/space.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct Spec;

struct SpaceDefinition {
  std::string name;
  std::string format;  // "t1", "json" (neutral) or "spec"
  std::vector<Parameter> parameters;
  std::vector<Expression> constraints;
  Bindings constants;                               // a spec's first size set; empty otherwise
  std::optional<std::uint64_t> expected_cartesian;  // neutral JSON's "expected"
  std::optional<std::uint64_t> expected_valid;
};

// Throw InputError naming the file (and the parameter or condition) for
// anything malformed.
SpaceDefinition load_t1(const std::filesystem::path& file);
SpaceDefinition load_space_json(const std::filesystem::path& file);
// By content: a JSON object with "ConfigurationSpace" is T1, one whose
// "parameters" is a list is neutral JSON, anything else a tunekit spec
// (load_spec; machine properties are not added here).
SpaceDefinition load_space_definition(const std::filesystem::path& file);
// The T1 or neutral JSON space of `file`, by content as above; nullopt for
// anything else (a spec, for load_spec and space_definition).
std::optional<SpaceDefinition> load_space_file(const std::filesystem::path& file);
// A spec's space: its parameters, constraints and first size set.
SpaceDefinition space_definition(const Spec& spec);

// Evaluates a T1 `Values` expression to its list, with Python semantics.
// Supported: list and tuple literals of expressions (the constraint
// language: `2**10`, `1024 + 1`, 'str', True), range(stop) /
// range(start, stop[, step]), list(...), tuple(...), sorted(...),
// comprehensions `[expr for x in ITERABLE (for y in ...)* (if cond)*]`
// (ITERABLE: any of these, may use outer loop variables), `+` between
// lists, `LIST * n`, and slices `LIST[a:b:c]`. Throws InputError.
std::vector<Value> evaluate_value_list(std::string_view text, const SourceLocation& where = {});

}  // namespace tunekit
