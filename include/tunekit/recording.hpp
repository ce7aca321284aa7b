#pragma once
// Recorded results: what each config of a kernel measured on one device, read
// back from a file so that a search can be replayed without the device.
// Kernel Tuner's cache files (the original format, keyed by the joined
// parameter values, and the T4 results format; gzipped or not) and tunekit's
// own store are read. A recording is the evaluator of a replay (replay.hpp):
// a config it marks as failed is a failed evaluation, and its recorded
// compile and run times are what the evaluation is taken to have cost.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tunekit/config.hpp"
#include "tunekit/objective.hpp"
#include "tunekit/space.hpp"
#include "tunekit/status.hpp"
#include "tunekit/units.hpp"

namespace tunekit {

// One recorded config.
struct RecordedResult {
  std::vector<std::uint32_t> values;  // value index per recording parameter
  Status status = Status::ok;
  std::string error;                 // as recorded, e.g. "RuntimeFailedConfig"; empty when ok
  std::optional<Microseconds> time;  // the objective (Kernel Tuner's "time", tunekit's median), when ok
  Seconds compile_time{0};
  Seconds run_time{0};  // benchmarking and verification
  // The times of cost() that the file does not record for this config, as
  // it names them ("verification_time, benchmark_time"), each counted as 0;
  // empty where it records them all. A time budget refuses such a config
  // (require_recorded_cost).
  std::string missing_times;
  // The other numbers recorded with the config, in the order of
  // Recording::metric_names(); NaN where it has none. Kernel Tuner's
  // "GFLOP/s" or energy, a T4 file's other measurements.
  std::vector<double> metrics;
  Seconds cost() const { return compile_time + run_time; }
};

class Recording {
 public:
  enum class Format { kernel_tuner, kernel_tuner_t4, tunekit };

  const std::filesystem::path& file() const { return file_; }
  Format format() const { return format_; }
  const std::string& kernel() const { return kernel_; }
  const std::string& device() const { return device_; }
  // The problem size of a tunekit store's recording (empty for Kernel Tuner's).
  const Bindings& size() const { return size_; }
  // A tunekit store's description of the machine (machine_to_json's form,
  // backend.hpp), whose properties a spec's constraints may use; empty for
  // Kernel Tuner's.
  const std::string& machine() const { return machine_; }
  // The recorded parameters with their value lists: Kernel Tuner's
  // tune_params in its order; for T4 files and stores, the values seen,
  // numbers ascending.
  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<RecordedResult>& results() const { return results_; }
  std::size_t ok_count() const;
  // The names of the numbers recorded with configs besides the parameters
  // and the time (RecordedResult::metrics), in the order first met.
  const std::vector<std::string>& metric_names() const { return metric_names_; }
  // What the recording was tuned for where the file says: a Kernel Tuner
  // cache's "objective" (a name; since Kernel Tuner 1.5 a list of them,
  // several for a tune of several objectives), a T4 file's "objectives";
  // empty where it does not.
  const std::vector<std::string>& tuned_for() const { return tuned_for_; }
  // What the loader took differently from what the file says, for the user
  // to hear (each message names the file): configs recorded with a time of 0
  // or below, which count as failed.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // The recorded result of `config` (every recorded parameter named, other
  // names ignored), or null.
  const RecordedResult* find(const Config& config) const;
  Config config_of(const RecordedResult& r) const;

  // For the loaders.
  Recording(std::filesystem::path file, Format format, std::string kernel, std::string device, Bindings size,
            std::vector<Parameter> parameters, std::vector<RecordedResult> results, std::string machine = {},
            std::vector<std::string> metric_names = {}, std::vector<std::string> tuned_for = {},
            std::vector<std::string> warnings = {});

 private:
  std::filesystem::path file_;
  Format format_;
  std::string kernel_, device_;
  Bindings size_;
  std::string machine_;
  std::vector<Parameter> parameters_;
  std::vector<RecordedResult> results_;
  std::vector<std::string> metric_names_;
  std::vector<std::string> tuned_for_;
  std::vector<std::string> warnings_;
  std::unordered_map<std::string, std::size_t> by_key_;  // packed value indices -> result
};

std::string_view to_string(Recording::Format f);

// Which of a tunekit store's recordings to read: each (kernel, device, size)
// is one. Empty fields match anything.
struct RecordingFilter {
  std::string kernel;
  std::string device;
  std::optional<Bindings> size;
};

// Every recording in `file`, by content: a Kernel Tuner cache (an object with
// "cache"), a T4 results file (an object with "results"), either of them
// gzipped, or a tunekit store (SQLite), one recording per kernel, device
// and size that pass `filter` (a store is opened read-only). Throws
// InputError naming the file for one that cannot be read, is truncated or is
// not one of these, holds no recording that passes the filter (for a store:
// saying which field matches nothing, and what it holds), or has no
// successful config. A Kernel Tuner cache that was left open by an
// interrupted run (no closing braces) is read as Kernel Tuner reads it. A
// recorded time of 0 or below makes its config failed, with a warning
// (Recording::warnings). A store's trial cut short by the early stop
// (Status::slower) is recorded as ok with the median of its few samples, as
// the T4 export records it.
std::vector<Recording> load_recordings(const std::filesystem::path& file, const RecordingFilter& filter = {});
// The one recording of `file` that passes `filter`; InputError listing them
// when there are several.
Recording load_recording(const std::filesystem::path& file, const RecordingFilter& filter = {});

// Throws InputError naming the recording's file, `result`'s config and the
// times it lacks when `result` has missing_times: a time budget counts each
// evaluation's recorded compile, verification and benchmark times, and
// would count such a config as costing nothing (Kernel Tuner's simulation
// mode refuses a time limit on such a cache too).
void require_recorded_cost(const Recording& recording, const RecordedResult& result);

// The recordings of `kernel` (a spec's name) when `recordings` (a store's)
// hold several kernels, else all of them: a spec replays its own kernel.
// InputError naming the file and the kernels when none is `kernel`.
std::vector<Recording> recordings_of_kernel(std::vector<Recording> recordings, const std::string& kernel);

// Throws InputError naming the recording's file when `names` (a space's or
// a spec's parameters) are not the recorded parameters: a name it lacks, or
// a recorded parameter with several values that `names` lacks.
void check_parameters(const Recording& recording, const std::vector<std::string>& names);

// What a replay ranks configs by, as Kernel Tuner's `objective` and
// `objective_higher_is_better`: the recorded time (the default), a number
// recorded with each config (RecordedResult::metrics), or a spec's metric,
// computed from the recorded time, the config and `size` as a tune computes
// it. `objective.where` locates the name for errors (a flag, a spec's line).
struct ReplayObjective {
  Objective objective;
  std::vector<Metric> metrics;  // a spec's
  Bindings size;                // the size a spec's metric sees
};

// A recording bound to a space: the recorded result of each valid config by
// its index in the space, so a replay looks configs up in O(1). The space's
// parameters must be the recording's (same names; each value of the space
// recorded): otherwise InputError naming the file and what differs.
class ReplayTable {
 public:
  // Throws InputError at the objective's location (else the recording's
  // file) when the objective names neither a spec metric nor a recorded
  // number.
  ReplayTable(const Recording& recording, const Space& space, const ReplayObjective& objective = {});

  const Recording& recording() const { return *recording_; }
  const Space& space() const { return space_; }
  // The result of the valid config with this index, or null when the
  // recording lacks it.
  const RecordedResult* at(std::uint64_t index) const;
  // The result of `config`: null when the config is outside the space or
  // the recording lacks it.
  const RecordedResult* find(const Config& config) const;
  // Valid configs the recording lacks, and the first of them.
  std::uint64_t missing() const { return missing_; }
  std::optional<Config> first_missing() const;
  // Throws InputError naming the file and the first valid config the
  // recording lacks, when it lacks any (a replay needs every one, as it
  // needs the optimum).
  // `space_from`: where the space's constraints came from (the advice
  // differs: a spec of another space, a T1 file of another kernel).
  enum class SpaceFrom { recording, t1, spec };
  void require_complete(SpaceFrom space_from = SpaceFrom::recording) const;
  const Objective& objective() const { return objective_; }
  // The objective's value for a recorded result of this recording (its time
  // in microseconds by default); none when the config failed or the value
  // is missing or not finite.
  std::optional<double> value(const RecordedResult& result) const;
  // The index of the best successful config by the objective, its time and
  // its value; none when no config of the space has a value.
  std::optional<std::uint64_t> optimum() const { return optimum_; }
  std::optional<Microseconds> optimum_time() const;
  std::optional<double> optimum_value() const;

 private:
  const Recording* recording_;
  Space space_;
  std::vector<std::vector<std::int64_t>> to_space_;  // per recording parameter: its value index in the space, -1: none
  std::vector<std::int32_t> dense_;                  // index -> result (-1: none), for spaces up to kDenseLimit
  std::unordered_map<std::uint64_t, std::uint32_t> sparse_;
  std::uint64_t missing_ = 0;
  std::optional<std::uint64_t> optimum_;
  Objective objective_;
  std::vector<double> values_;  // per recorded result, when the objective is not the time (NaN: none)
};

}  // namespace tunekit
