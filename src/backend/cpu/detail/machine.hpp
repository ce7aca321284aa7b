#pragma once
#include <string>
#include <vector>

#include "tunekit/backend.hpp"

namespace tunekit::cpu {
// Reads the CPU model, core count and cache sizes from /proc and /sys.
MachineInfo probe_machine();
// What a tune on this host should know about the cores it measures on: a
// warning when this process may run on fewer than the machine's cores (see
// machine.cpp). Empty otherwise.
std::vector<std::string> core_warnings();
}  // namespace tunekit::cpu
