#pragma once
// Durations with their unit in the type: kernel times in microseconds,
// budgets and wall times in seconds.
#include <chrono>

namespace tunekit {

using Microseconds = std::chrono::duration<double, std::micro>;
using Seconds = std::chrono::duration<double>;

}  // namespace tunekit
