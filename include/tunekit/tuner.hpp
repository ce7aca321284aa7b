#pragma once
// The tuning loop: space -> build -> isolated evaluation -> store, for each
// problem size, driven by a search strategy.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/spec.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

struct TuneOptions {
  std::filesystem::path out_dir = "tunekit-out";
  bool fresh = false;   // ignore stored trials and the build cache
  unsigned jobs = 0;    // build threads; 0 = one per core
  // Recorded results to replay instead of building and running (a Kernel
  // Tuner cache or a tunekit DB; recording.hpp): the replay backend serves
  // every trial, and search.max_time counts the recorded times.
  std::filesystem::path replay;
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
  std::vector<TrialRecord> trials;     // in evaluation order; each trial's origin says why it ran
  std::optional<std::size_t> best;     // index into trials
  std::optional<std::size_t> baseline; // the default config's trial
  bool baseline_is_spec_default = false;
  // Per trial, the command it ran, for backends that run a program
  // (Backend::command_line); empty otherwise.
  std::vector<std::vector<std::string>> commands;

  // The first trial, and the number of trials, with this origin.
  std::optional<std::size_t> first_of(std::string_view origin) const;
  std::size_t count_of(std::string_view origin) const;
};

struct TuneReport {
  std::string kernel;  // the spec's name
  std::string spec_hash;
  std::string device;
  bool application = false;  // the user's own program was built and run (kernel.language: command)
  std::vector<SizeReport> sizes;
  std::vector<std::string> seeded_by;  // the seed providers of the spec (origins, e.g. "rules", "spec")
  std::filesystem::path db;            // the store the trials went to
  // What the output writers wrote, by writer name (filled by whoever runs
  // them: the CLI), so that the summary and the JSON can list them.
  std::vector<std::pair<std::string, std::filesystem::path>> files;
  std::size_t resumed = 0;  // trials served from the store
  Seconds wall{0};
  Seconds build{0};        // compiling, summed over batches (may overlap measuring)
  Seconds build_wait{0};   // of it, the time measuring waited for builds
  Seconds measure{0};      // in the evaluator: running, verifying, timing
  Seconds device_busy{0};  // the device running kernels (what backends report)

  // Every trial, sizes in order.
  std::vector<TrialRecord> all_trials() const;
};

// Identity of what was tuned: kernel source, entry, language, compiler,
// flags, arguments, reference, tolerances, input seed and the cache mode
// (except the default, cold, so older results stay found). Parameters and
// search settings are left out on purpose: widening a space must keep
// measured trials.
std::string spec_hash(const Spec& spec);

// Tunes every size of `spec` and returns what was measured; every trial is
// in the store (options.out_dir/tunekit.db, or spec.output.db) before this
// returns. Writes no report file: the output writers (output.hpp) do.
TuneReport tune(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress = {});

}  // namespace tunekit
