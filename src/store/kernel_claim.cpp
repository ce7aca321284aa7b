#include "store/detail/kernel_claim.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/detail/text.hpp"
#include "tunekit/trial.hpp"

namespace tunekit::detail {

namespace {

// The byte of a kernel at a size: FNV-1a of the spec hash and the size's
// key, among 2^30 bytes (two that share one only make a notice too many).
// Spelt out rather than std::hash, so that every tunekit build agrees.
off_t byte_of(std::string_view spec_hash, const Bindings& size) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&](std::string_view text) {
    for (const unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(spec_hash);
  mix("\n");
  mix(size_key(size));
  return static_cast<off_t>(h & ((std::uint64_t{1} << 30) - 1));
}

}  // namespace

KernelClaim::KernelClaim(const std::filesystem::path& db, std::string_view spec_hash,
                         const std::vector<Bindings>& sizes)
    : db_(db), sizes_(sizes.size()) {
  fd_ = ::open((db.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;
  for (const Bindings& size : sizes) {
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = byte_of(spec_hash, size);
    lock.l_len = 1;
    if (::fcntl(fd_, F_SETLK, &lock) == 0 || (errno != EACCES && errno != EAGAIN)) continue;
    // Held: by whom (it may have ended since; then no one).
    struct flock holder = lock;
    if (::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK) {
      if (!held_by_) held_by_ = holder.l_pid;
      held_sizes_.push_back(size);
    }
  }
}

std::optional<std::string> KernelClaim::warning() const {
  if (!held_by_) return std::nullopt;
  constexpr std::size_t kNamed = 3;
  std::vector<std::string> named;
  for (std::size_t i = 0; i < held_sizes_.size() && i < kNamed; ++i)
    named.push_back(detail::shown_bindings(held_sizes_[i]));
  std::string where = held_sizes_.size() == sizes_ && sizes_ > 1 ? "at every size of this run"
                      : held_sizes_.size() == 1 && held_sizes_.front().empty()
                          ? std::string()
                          : fmt::format("at {}", fmt::join(named, ", "));
  if (held_sizes_.size() > kNamed && held_sizes_.size() != sizes_)
    where += fmt::format(" and {} more of this run's sizes", held_sizes_.size() - kNamed);
  return fmt::format(
      "another process (pid {}) is tuning this kernel {}{}into {}: both measure the same configs there, and the "
      "trial each stores last replaces the other's, so a report may name a best the store no longer holds; let "
      "one finish, then rerun the other (it resumes), or give each its own --db",
      *held_by_, where, where.empty() ? "" : " ", db_.string());
}

std::optional<std::string> KernelClaim::announce() const {
  auto w = warning();
  if (w) fmt::print(stderr, "tunekit: warning: {}\n", *w);
  return w;
}

KernelClaim::~KernelClaim() {
  if (fd_ >= 0) ::close(fd_);  // releases the locks
}

}  // namespace tunekit::detail
