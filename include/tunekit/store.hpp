#pragma once
// Every trial, kept in SQLite (WAL). A killed run loses at most the trial in
// flight; a rerun looks trials up instead of repeating them.
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunekit/trial.hpp"

struct sqlite3;

namespace tunekit {

// What Store's read-only open throws for an SQLite database with no table
// yet: one a tune is creating now, or one made empty. A tune may write it.
struct EmptyStoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What Store's read-only open throws for a store of an older schema that
// only a writing open migrates. A tune may write it.
struct OldStoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  enum class Access {
    read_write,  // creates the file, migrates an older schema
    // Reads only: works on read-only storage (a mounted archive, another
    // user's results), and never changes what the file holds; it leaves no
    // -wal or -shm file that it did not find (the last connection to close
    // folds a WAL into the file, as a tune's does). The two schemas before
    // the last are read as they are, an older one is an error that says to
    // open it writable once.
    read_only,
  };
  // Every open reads the whole file to check it (PRAGMA integrity_check,
  // about half a second for a 150 MB store), unless the caller opened and
  // checked it a moment before: `tunekit tune` checks its --db before the
  // tune starts, and the tuner's own open then spares the second read.
  enum class WholeFileCheck { run, done_before };
  explicit Store(const std::filesystem::path& file, Access access = Access::read_write,
                 WholeFileCheck check = WholeFileCheck::run);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }

  std::optional<TrialRecord> find(const std::string& spec_hash, const std::string& device, const Bindings& size,
                                  const Config& config) const;
  // The fastest median among the ok trials at this spec, device and size.
  std::optional<Microseconds> best_median(const std::string& spec_hash, const std::string& device,
                                          const Bindings& size) const;
  // Inserts, or replaces the trial with the same spec, device, size and
  // config. Sets record.id. The stored origin is the record's, except that a
  // 'search' record keeps a stored seed origin (the config was a seed in an
  // earlier run). With `exclusive_origin`, the size's other trials with the
  // record's origin fall back to 'search' (a provider with one seed per size).
  // record.origin is set to what is stored.
  void put(TrialRecord& record, bool exclusive_origin = false);
  std::vector<TrialRecord> trials(const std::string& spec_hash) const;  // in insertion order
  // One size's trials on one device, in insertion order.
  std::vector<TrialRecord> trials(const std::string& spec_hash, const std::string& device, const Bindings& size) const;
  std::vector<TrialRecord> all() const;
  // The trials of a kernel's other versions on a device: those stored under
  // its name with another spec_hash (its source, inputs or reference have
  // changed since, or another kernel shares the name), most recent first.
  struct OtherVersion {
    std::string spec_hash;
    std::size_t trials = 0;
    std::string last_created_at;  // ISO 8601 UTC
  };
  std::vector<OtherVersion> other_versions(const std::string& kernel, const std::string& device,
                                           const std::string& spec_hash) const;
  // The toolchains a kernel was measured with: the trials stored under its
  // hash_without_toolchain, grouped by their spec_hash (one per toolchain),
  // in the order of the toolchains' text. Trials stored before schema 10
  // name none and are not counted; a store of such a version read as it
  // is lists none.
  struct Toolchain {
    std::string text;
    std::string spec_hash;
    std::size_t trials = 0;
  };
  std::vector<Toolchain> toolchains(const std::string& hash_without_toolchain) const;
  // The devices this very version (spec_hash) has trials on, most recent
  // first: a run on one resumes none of another's.
  struct DeviceTrials {
    std::string device;
    std::size_t trials = 0;
    std::string last_created_at;  // ISO 8601 UTC
  };
  std::vector<DeviceTrials> devices(const std::string& spec_hash) const;
  std::size_t erase(const std::string& spec_hash);
  // A run that measures a size anew (--fresh) takes the stored trials of
  // the configs it would measure for stale first: their settings start
  // with kStaleSettings and none is confirmed. A run stopped part way then
  // leaves the trials it had not reached stale, and a resume measures them
  // again instead of mixing them with the new ones. Returns how many it
  // marked.
  std::size_t mark_stale(const std::string& spec_hash, const std::string& device, const Bindings& size,
                         const std::vector<Config>& configs);
  static constexpr std::string_view kStaleSettings = "stale (a --fresh run measures it anew): ";

 private:
  void upsert(TrialRecord& record);
  void open_read_only(WholeFileCheck check);
  void switch_to_wal();

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  const std::string* columns_;  // what a SELECT reads, in the order read_row() expects
};

}  // namespace tunekit
