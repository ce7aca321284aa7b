#pragma once
// The header's rule for a size never tuned, worked out once for every
// emitter (the C++ header, the JSON that online.hpp reads, the Python
// module), so that they cannot disagree on which checks and pins apply.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/policy.hpp"

namespace tunekit::detail {

// How a column of values is typed in the header.
enum class Kind { integer, floating, string };

// What a name in a pin's rule or a check stands for in the header.
struct Ref {
  enum class What { size, param, machine } what;
  std::size_t index = 0;         // into Layout::size_names or param_names
  const Value* value = nullptr;  // a machine property's (an integer)
};

struct Layout {
  // The sizes in the header's argument order (the spec's, then any others
  // alphabetically); the parameters in the order they first appear.
  std::vector<std::string> size_names, param_names;
  std::vector<Kind> size_kinds, param_kinds;
  std::vector<const PinnedParameter*> pins;  // integer parameters whose rule is integer C++ over the sizes
  std::vector<const Expression*> checks;     // those of policy.checks that are integer C++ over these names
  std::vector<std::string> unchecked;        // policy.checks.unchecked, and the checks the header cannot write

  // A pin's rule reads sizes only; a check reads sizes, integer parameters
  // and integer machine properties (the tuned device's), first match first.
  std::optional<Ref> resolve(const std::string& name, bool sizes_only, const Bindings& machine) const;
};

// Throws std::invalid_argument for table_problem(), and std::runtime_error
// when an entry lacks a size or parameter the others have: no table can
// hold them.
Layout layout_of(const Policy& policy);

using Namer = std::function<std::optional<std::string>(const std::string&)>;

// The names of a pin's rule (sizes_only) or of a check, each spelled by
// `spell`, for Expression::to_cpp, to_python and to_tree. `l` and `policy`
// must outlive the result.
Namer namer(const Layout& l, const Policy& policy, bool sizes_only, std::function<std::string(const Ref&)> spell);

// kUntunedSizeRule, with kCheckedSizeRule when there are checks, naming
// `allowed` as the function that reports a config not allowed.
std::string untuned_size_rule(const Layout& l, std::string_view allowed);

// `text` with its line breaks as spaces: for a comment line of a generated
// file, which a spec's text (a constraint, a device's name) must not end.
std::string one_line(std::string text);

}  // namespace tunekit::detail
