#pragma once
#include "tunekit/backend.hpp"

namespace tunekit::cpu {
// Reads the CPU model, core count and cache sizes from /proc and /sys.
MachineInfo probe_machine();
}  // namespace tunekit::cpu
