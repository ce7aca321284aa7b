#include "core/detail/cores.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace tunekit::detail {

std::size_t online_cores() { return static_cast<std::size_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))); }

std::size_t usable_cores() {
  // Not std::thread::hardware_concurrency(): it counts the online cores or
  // the affinity's, depending on the C library's version.
  cpu_set_t set;
  CPU_ZERO(&set);
  // Fails (EINVAL) only past CPU_SETSIZE (1024) cores: the machine's count then.
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return online_cores();
  return std::clamp<std::size_t>(static_cast<std::size_t>(CPU_COUNT(&set)), 1, online_cores());
}

}  // namespace tunekit::detail
