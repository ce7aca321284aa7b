#pragma once
// How many cores this process may run on: what builds, verification and a
// CPU kernel's threads can use.
#include <cstddef>

namespace tunekit::detail {

// The cores of this process's CPU affinity, which its children inherit: an
// MPI rank bound by Open MPI, a tune under taskset or a cgroup's cpuset may
// use fewer than the machine has. At least 1.
std::size_t usable_cores();
// The machine's online cores. At least 1.
std::size_t online_cores();

}  // namespace tunekit::detail
