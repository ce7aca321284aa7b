#pragma once
// Two tunes of one kernel into one store measure the same configs: each looks
// the store up before it measures, and both look before either stores. The
// second gets no error, and the trial each stores last replaces the other's,
// so each one's report disagrees with the store. A claim lets a tune say so
// when it starts: a lock of one byte, the kernel's, in a file beside the
// store (`DB.lock`: not the store itself, whose locks SQLite keeps in the
// same process, and a close of another descriptor of it would drop them).
// The system releases it when the process ends, killed too, so a claim is
// never stale; an MPI job's ranks tune into scratch stores and claim
// nothing of the job's.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace tunekit::detail {

class KernelClaim {
 public:
  // Claims spec_hash's rows of the store `db`, unless another process holds
  // them (held_by()). Where the lock file cannot be made (a read-only
  // folder) nothing is claimed, and nothing held is seen.
  KernelClaim(const std::filesystem::path& db, std::string_view spec_hash);
  ~KernelClaim();
  KernelClaim(const KernelClaim&) = delete;
  KernelClaim& operator=(const KernelClaim&) = delete;

  // The process that holds the claim, when it is not this one.
  std::optional<pid_t> held_by() const { return held_by_; }
  // What a tune that did not get the claim tells its user: at once (the
  // report comes when both tunes are done) and among its warnings.
  std::optional<std::string> warning() const;
  // Prints warning(), when there is one, to stderr now, and returns it for
  // the report.
  std::optional<std::string> announce() const;

 private:
  std::filesystem::path db_;
  int fd_ = -1;
  std::optional<pid_t> held_by_;
};

}  // namespace tunekit::detail
