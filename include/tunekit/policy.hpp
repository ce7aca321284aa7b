#pragma once
// What tuning learned, shipped as code: a self-contained C++17 header with a
// constexpr function from problem size to config, and the same as JSON.
#include <optional>
#include <string>
#include <vector>

#include "tunekit/select.hpp"

namespace tunekit {

struct PolicyEntry {
  Bindings size;
  Config config;
  std::optional<Microseconds> time;  // the config's time at this size
};

struct Policy {
  std::string kernel;     // names the generated types and function
  std::string selection;  // how the configs were chosen: "per-size", "all-sizes", "cover"
  std::vector<PolicyEntry> entries;
};

enum class Selection { per_size, all_sizes, cover };

// Builds the policy for `trials` (one kernel, one device). `baseline` is
// needed by Selection::all_sizes; `tolerance` by Selection::cover. Throws
// std::runtime_error when the selection finds nothing.
Policy make_policy(const std::string& kernel, const std::vector<TrialRecord>& trials, Selection selection,
                   const std::optional<Config>& baseline, double tolerance = 0.05);

// The rule for a size never tuned, as the header documents it.
inline constexpr const char* kUntunedSizeRule =
    "a size never tuned gets the config of the tuned size nearest in log space: the one with the smallest "
    "product over the axes of max(a, b) / min(a, b) (values below 1 count as 1); ties go to the earlier entry";

struct HeaderOptions {
  std::string name_space = "tunekit_policy";
};

// A C++17 header: `<kernel>_config`, `<kernel>_select(sizes...)`, and the
// tables behind it. Names from users become valid identifiers; string
// values are escaped.
std::string emit_header(const Policy& policy, const HeaderOptions& options = {});
std::string emit_json(const Policy& policy);

// A valid C++ identifier from any text: other characters become '_', a
// leading digit or a keyword gets '_' added.
std::string cpp_identifier(std::string_view text);
// A C++ string literal for any text.
std::string cpp_string_literal(std::string_view text);

}  // namespace tunekit
