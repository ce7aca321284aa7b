// Stands in for the MPI job when tunekit is built without MPI: a process
// that an MPI launcher started as one of several ranks says so, rather than
// tune the whole spec beside the others into the same store.
#include <stdexcept>

#include <fmt/format.h>

#include "distribute/detail/job.hpp"
#include "tunekit/distribute.hpp"

namespace tunekit {

std::unique_ptr<MpiJob> MpiJob::join() {
  const int ranks = detail::launched_ranks();
  if (ranks < 2) return nullptr;
  throw std::runtime_error(fmt::format(
      "an MPI launcher started this tunekit as one of {} ranks, but it was built without MPI, so every rank would "
      "tune the whole spec into the same store; build it with -DTUNEKIT_ENABLE_MPI=ON (Debian: libopenmpi-dev), "
      "or run it without mpirun",
      ranks));
}

}  // namespace tunekit
