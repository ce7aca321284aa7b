#pragma once
// Which stored failures a resume under other settings can trust. A
// failure's outcome depends on some of a run's settings only: a timeout on
// the time limit it ran out of and what the warm-up and sampling take of
// it, a wrong result on the tolerances, a failed
// build on the build's time limit, and a crash, a launch error or a
// resource limit on none of them. Measuring a failure again under settings
// it does not depend on fails again, at the price of a build and a run (a
// timeout's whole limit).
#include <string_view>

#include "tunekit/status.hpp"

namespace tunekit::detail {

// Whether a config's own failure of `status`, stored under the settings key
// `then` (settings_key()), stands for a run under `now`. A key that is
// empty (a store from before settings were kept) or that does not read as
// `name=value` words stands only for the same key.
bool failure_stands(Status status, std::string_view then, std::string_view now);

}  // namespace tunekit::detail
