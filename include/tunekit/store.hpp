#pragma once
// Every trial, kept in SQLite (WAL). A killed run loses at most the trial in
// flight; a rerun looks trials up instead of repeating them.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/evaluator.hpp"
#include "tunekit/space.hpp"

struct sqlite3;

namespace tunekit {

struct TrialRecord {
  std::int64_t id = 0;      // row id, assigned by insert()
  std::string spec_hash;    // what was tuned (see Tuner)
  std::string kernel;       // spec name
  std::string device;
  Bindings size;
  Config config;
  Status status = Status::ok;
  std::string error;
  Statistics stats;
  std::vector<Microseconds> samples;
  Verification verification;
  Seconds build_time{0};
  std::string machine;      // JSON description of the machine
  std::string created_at;   // ISO 8601 UTC, set by insert() when empty
  // The config the matmul tile rules (search.rules) derived for this size,
  // which a seeded search evaluated first. At most one trial per spec,
  // device and size carries it: put() of a flagged trial clears it on the
  // others; put() of an unflagged trial keeps a stored flag.
  bool rule_seed = false;
};

// Canonical key of a problem size (names sorted).
std::string size_key(const Bindings& size);

class Store {
 public:
  explicit Store(const std::filesystem::path& file);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }

  std::optional<TrialRecord> find(const std::string& spec_hash, const std::string& device, const Bindings& size,
                                  const Config& config) const;
  // Inserts, or replaces the trial with the same spec, device, size and
  // config. Sets record.id, and record.rule_seed to the stored flag.
  void put(TrialRecord& record);
  std::vector<TrialRecord> trials(const std::string& spec_hash) const;  // in insertion order
  std::vector<TrialRecord> all() const;
  std::size_t erase(const std::string& spec_hash);

 private:
  void upsert(TrialRecord& record);

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

}  // namespace tunekit
