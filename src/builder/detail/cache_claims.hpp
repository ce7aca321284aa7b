#pragma once
// Which variants a builder serves from its content-addressed cache: every one
// whose files are there, or, when the run rebuilds, each only after this run
// has built it anew once. Shared by the builders whose variants are files
// under a cache folder; safe to call from several build threads.
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <set>
#include <string>

namespace tunekit::detail {

class CacheClaims {
 public:
  explicit CacheClaims(bool rebuild) : rebuild_(rebuild) {}
  // True when the variant `hash` may be served from `files`; false when the
  // caller is to build it (and has claimed it for this run).
  bool cached(const std::string& hash, std::initializer_list<std::filesystem::path> files) {
    std::lock_guard lock(mutex_);
    const bool rebuilt_already = !built_.insert(hash).second;
    for (const auto& f : files)
      if (!std::filesystem::exists(f)) return false;
    return !rebuild_ || rebuilt_already;
  }

 private:
  bool rebuild_;
  std::mutex mutex_;
  std::set<std::string> built_;  // the variants this run has asked for
};

}  // namespace tunekit::detail
