#pragma once
// What the subcommands share about their flags: the checks that make a bad
// value bad input at its flag (exit 1), not a crash or a silent default.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "tunekit/units.hpp"

namespace tunekit::cli {

// A duration flag ("10s", "5m"): bad text, or with `positive` a duration of
// 0 or less, throws InputError naming the flag.
Seconds duration_flag(const std::string& flag, const std::string& text, bool positive);

// A whole-number flag's lower bound, with a message that says so.
CLI::Validator at_least(std::uint64_t min);

// Gives every whole-number and real-number flag of every subcommand of
// `app` a check that runs before CLI11 converts the value.
void check_numbers(CLI::App& app);

}  // namespace tunekit::cli
