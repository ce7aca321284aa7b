#pragma once
// The tuning loop: space -> build -> isolated evaluation -> store, for each
// problem size, driven by a search strategy.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/spec.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

struct TuneOptions {
  std::filesystem::path out_dir = "tunekit-out";
  bool fresh = false;   // ignore stored trials and the build cache
  unsigned jobs = 0;    // build threads; 0 = one per core
};

struct ProgressEvent {
  std::size_t done = 0;
  std::optional<std::size_t> total;
  Seconds elapsed{0};
  std::optional<Microseconds> best;
  std::string current;  // what is happening ("building 8 variants", a config)
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

struct SizeReport {
  Bindings size;
  std::vector<TrialRecord> trials;     // in evaluation order
  std::optional<std::size_t> best;     // index into trials
  std::optional<std::size_t> baseline; // the default config's trial
  bool baseline_is_spec_default = false;
  std::optional<std::size_t> rule_seed; // the rule config's trial (search.rules), evaluated first
  std::size_t seeds = 0;  // search.seeds valid at this size: proposed next, after the rule config
};

struct TuneReport {
  std::string spec_hash;
  std::string device;
  std::vector<SizeReport> sizes;
  std::filesystem::path db, csv, json, html;
  std::filesystem::path results;  // TUNEKIT_RESULTS_<time>.csv (command backend); empty otherwise
  std::size_t resumed = 0;  // trials served from the store
  bool seeded_by_rules = false;  // search.rules seeded every size's search
  Seconds wall{0};
  Seconds build{0};        // compiling, summed over batches (may overlap measuring)
  Seconds build_wait{0};   // of it, the time measuring waited for builds
  Seconds measure{0};      // in the evaluator: running, verifying, timing
  Seconds device_busy{0};  // the device running kernels (what backends report)
};

// Identity of what was tuned: kernel source, entry, language, compiler,
// flags, arguments, reference, tolerances, input seed and the cache mode
// (except the default, cold, so older results stay found). Parameters and
// search settings are left out on purpose: widening a space must keep
// measured trials.
std::string spec_hash(const Spec& spec);

TuneReport tune(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress = {});

}  // namespace tunekit
