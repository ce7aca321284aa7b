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

// Removes from `cache_dir` the files a build left when its process was
// killed (SIGKILL, the OOM killer) before it renamed them into place: a
// variant's hash, then the builder's pid and a count (unique_suffix), then
// anything, as in 3f..9a.1234.7.tmp.so or 3f..9a.cubin.1234.7.tmp, of a pid
// that no longer runs, written more than 10 minutes ago. A running
// builder's files are left alone.
void remove_files_of_killed_builds(const std::filesystem::path& cache_dir);

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
