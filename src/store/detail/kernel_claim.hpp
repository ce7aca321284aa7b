#pragma once
// Two tunes of one kernel at one size into one store measure the same
// configs: each looks the store up before it measures, and both look before
// either stores. The second gets no error, and the trial each stores last
// replaces the other's, so each one's report disagrees with the store. A
// claim lets a tune say so when it starts: a lock of one byte per size of
// the run, the (kernel, size)'s, in a file beside the store (`DB.lock`: not
// the store itself, whose locks SQLite keeps in the same process, and a
// close of another descriptor of it would drop them). Tunes of one kernel
// at other sizes (`-s N=64` and `-s N=128` side by side) keep apart in the
// store, and claim apart. The system releases the locks when the process
// ends, killed too, so a claim is never stale; an MPI job's ranks tune into
// scratch stores and claim nothing of the job's.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "tunekit/value.hpp"

namespace tunekit::detail {

class KernelClaim {
 public:
  // Claims spec_hash's rows of the store `db` at each of `sizes`, unless
  // another process holds some of them (held_by(), held_sizes()). Where the
  // lock file cannot be made (a read-only folder) nothing is claimed, and
  // nothing held is seen.
  KernelClaim(const std::filesystem::path& db, std::string_view spec_hash, const std::vector<Bindings>& sizes);
  ~KernelClaim();
  KernelClaim(const KernelClaim&) = delete;
  KernelClaim& operator=(const KernelClaim&) = delete;

  // A process that holds the claim of one of the sizes, when it is not this one.
  std::optional<pid_t> held_by() const { return held_by_; }
  // The sizes of this run that another process holds.
  const std::vector<Bindings>& held_sizes() const { return held_sizes_; }
  // What a tune that did not get the whole claim tells its user: at once
  // (the report comes when both tunes are done) and among its warnings.
  std::optional<std::string> warning() const;
  // Prints warning(), when there is one, to stderr now, and returns it for
  // the report.
  std::optional<std::string> announce() const;

 private:
  std::filesystem::path db_;
  int fd_ = -1;
  std::optional<pid_t> held_by_;
  std::vector<Bindings> held_sizes_;
  std::size_t sizes_ = 0;
};

}  // namespace tunekit::detail
