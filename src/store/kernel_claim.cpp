#include "store/detail/kernel_claim.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace tunekit::detail {

namespace {

// The kernel's byte: a spec hash is hex, and its first 7 digits place it
// among 2^28 bytes (two kernels sharing one only make a notice too many).
off_t byte_of(std::string_view spec_hash) {
  const std::string_view digits = spec_hash.substr(0, 7);
  std::uint32_t at = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), at, 16);  // its hex prefix; 0 when none
  return static_cast<off_t>(at);
}

}  // namespace

KernelClaim::KernelClaim(const std::filesystem::path& db, std::string_view spec_hash) : db_(db) {
  fd_ = ::open((db.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte_of(spec_hash);
  lock.l_len = 1;
  if (::fcntl(fd_, F_SETLK, &lock) == 0 || (errno != EACCES && errno != EAGAIN)) return;
  // Held: by whom (it may have ended since; then no one).
  struct flock holder = lock;
  if (::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK) held_by_ = holder.l_pid;
}

std::optional<std::string> KernelClaim::warning() const {
  if (!held_by_) return std::nullopt;
  return fmt::format(
      "another process (pid {}) is tuning this kernel into {}: both measure the same configs, and the "
      "trial each stores last replaces the other's, so a report may name a best the store no longer "
      "holds; let one finish, then rerun the other (it resumes), or give each its own --db",
      *held_by_, db_.string());
}

std::optional<std::string> KernelClaim::announce() const {
  auto w = warning();
  if (w) fmt::print(stderr, "tunekit: warning: {}\n", *w);
  return w;
}

KernelClaim::~KernelClaim() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace tunekit::detail
