#pragma once
// The tuning loop: space -> build -> isolated evaluation -> store, for each
// problem size, driven by a search strategy.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/machine.hpp"
#include "tunekit/package_worker.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

class TuningRig;

struct TuneOptions {
  std::filesystem::path out_dir = "tunekit-out";
  bool fresh = false;  // ignore stored trials and the build cache
  // Measure every stored failure again (as `ctest --rerun-failed`), keeping
  // the stored ok trials. Without it a resume measures again only the
  // failures that were the environment's or that ran under other settings
  // (settings_key()).
  bool retry_failed = false;
  unsigned jobs = 0;  // build threads; 0 = one per core
  // Go on through configs that fail one after another for the machine's
  // reason, rather than end the run after ten in a row (`tunekit tune
  // --keep-going`): a machine whose trouble comes and goes.
  bool keep_going = false;
  // Machine properties that replace the backend's of the same name for the
  // constraints (`tunekit tune --properties`): a spec tried as on another
  // machine, say one with other caches. The kernels still run here.
  Bindings properties;
  // Recorded results to replay instead of building and running (a Kernel
  // Tuner cache or a tunekit DB; recording.hpp): the replay backend serves
  // every trial, and search.max_time counts the recorded times.
  std::filesystem::path replay;
  // Build every variant anew, once (fresh implies it).
  bool rebuild = false;
  // The build cache, when not out_dir/cache (BackendOptions::build_dir).
  std::filesystem::path build_dir;
  // Which device of the backend's kind (an MPI rank takes its own: its index
  // among the ranks on its host).
  int device = 0;
  // Called after each trial is written to the store (under MPI, rank 0's), with put()'s arguments: where the
  // store is not the whole truth (an MPI rank tunes into a scratch store and passes each trial on to the rank
  // that keeps the real one), or to say what a run that an error ended had stored.
  std::function<void(const TrialRecord&, bool exclusive_origin)> on_stored;
  // Called with the machine the constraints see (the backend's, with
  // `properties` applied) once the backend is made, before anything is
  // stored or built: for checks of the caller's input that need the
  // machine (the command line's size flags, which may not name a machine
  // property). An exception it throws ends the tune.
  std::function<void(const MachineInfo&)> check_machine;
  // A store the caller opened a moment before and found whole (Store's
  // whole-file check, as `tunekit tune` checks its --db before the tune):
  // where it is the run's store, the tuner's open spares the second read.
  std::filesystem::path store_checked;
  // What to build and measure with, made by the caller and kept across
  // tune() calls (TuningRig); tune() makes its own when null.
  TuningRig* rig = nullptr;
};

struct ProgressEvent {
  std::size_t done = 0;
  std::optional<std::size_t> total;
  Seconds elapsed{0};
  std::optional<Microseconds> best;
  std::string current;  // what is happening ("building 8 variants", a config)
  // What the time budget (search.max_time) leaves, when there is one: the
  // run ends by then, whatever the count of trials to go says.
  std::optional<Seconds> time_left;
  // A time budget may end the run before `total`: it is then the most that
  // can run, not what will (with no budget of evaluations, every config).
  bool time_bounded = false;
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

// The share of a trial's CPU time spent waiting for a CPU from which it is
// reported as measured on a busy machine (TrialRecord::cpu_wait_share,
// measured_on_a_busy_machine): a quiet machine keeps it well under 1%; one
// other busy thread per core makes it a third and more.
inline constexpr double kBusyCpuWait = 0.1;

// A size whose search the run stopped part way: its best is the best of the
// configs measured before the stop, not of the size's space. A budget of
// evaluations is no stop: it is the search the user chose.
struct StoppedPartWay {
  enum class Cause { stop_requested, time_budget };
  Cause cause = Cause::stop_requested;
  std::size_t measured = 0;            // configs with a trial at the size
  std::optional<std::uint64_t> valid;  // configs the space allows there (unknown for a space too large to index)
  std::size_t resumed = 0;             // of `measured`, those an earlier run measured (resumed from the store)
};

struct SizeReport {
  Bindings size;
  std::vector<TrialRecord> trials;      // in evaluation order; each trial's origin says why it ran
  std::optional<std::size_t> best;      // index into trials
  std::optional<std::size_t> baseline;  // the default config's trial
  bool baseline_is_spec_default = false;
  // CCCL's base variant's trial (kOriginBase), when the source has a
  // TUNE_BASE branch and the base was tried: the baseline of the speedups
  // while it ran correctly, else they fall back to `baseline`.
  std::optional<std::size_t> base;
  // Why the size's search ended early or never began, when it did: no
  // config is valid, or its reference failed, so no config could be
  // verified (the message names the reference). Every report shows it.
  std::string error;
  // Set where the run stopped (request_stop(), search.max_time) before the
  // size's search ended: every report says its best is of part of it.
  std::optional<StoppedPartWay> stopped_part_way;
  // Per trial, the command it ran, for backends that run a program
  // (Backend::command_line); empty otherwise.
  std::vector<std::vector<std::string>> commands;
  // The trials this run measured again side by side before the best was
  // named (measure.confirm), in the order they ranked before; their
  // statistics pool every sample. Reports list every trial whose
  // TrialRecord::confirmed is set, those of the run that stored them too.
  std::vector<std::size_t> confirmed;
  // The search that proposed the configs: the strategy's name (for `auto`,
  // with what it chose), or "the configs list".
  std::string strategy;

  // The first trial, and the number of trials, with this origin.
  std::optional<std::size_t> first_of(std::string_view origin) const;
  std::size_t count_of(std::string_view origin) const;
  // The trials measured while the machine was busy, in this run or the one
  // that stored them: their worker's threads waited for a CPU for at least
  // kBusyCpuWait of their time, which inflates times even when every sample
  // is equally slow and the noise looks low. Indexes into trials.
  std::vector<std::size_t> measured_on_a_busy_machine() const;
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
  std::vector<Metric> metrics;  // the spec's, for the writers (computed from each trial on read)
  Objective objective;          // the spec's: what `best` was chosen by
  double target_noise = 0;      // the spec's noise target (measure.noise): a trial above it missed it
  Tolerance tolerance;          // the spec's (or the flags'): what a wrong_result failed
  // False where no argument is an output (role out or inout): nothing was
  // compared with the reference, so no trial was verified.
  bool outputs_compared = true;
  // What the user should know that is no trial's status: a default config
  // outside the space or not valid on this machine (which constraint, which
  // machine property), a reference that failed, a constraint that raised an
  // error, most configs missing the noise target. Printed by the console
  // writer, kept in the JSON and the HTML.
  std::vector<std::string> warnings;
  std::size_t resumed = 0;   // trials served from the store
  std::size_t retried = 0;   // stored failures measured again (environment's, other settings, --retry-failed)
  // Trials whose worker (or program) was killed from outside and that were
  // measured again, at once, on a fresh one (killed_from_outside.hpp); each
  // such trial's line says so too.
  std::size_t measured_again_after_kill = 0;
  bool interrupted = false;  // stopped by request_stop() (stop.hpp) before the search ended
  // The ranks of an MPI job that tuned its sizes (distribute.hpp); the times
  // below but the wall are summed over them.
  std::size_t ranks = 1;
  Seconds wall{0};
  Seconds build{0};        // compiling, summed over batches (may overlap measuring)
  Seconds build_wait{0};   // of it, the time measuring waited for builds
  Seconds measure{0};      // in the evaluator: running, verifying, timing
  Seconds device_busy{0};  // the device running kernels (what backends report)
  Seconds flush{0};        // of measure, evicting the caches before cold samples
  Seconds verify{0};       // of measure, comparing outputs with the reference on the host

  // Every trial, sizes in order.
  std::vector<TrialRecord> all_trials() const;
};

// Identity of what was tuned: kernel source, entry, language, compiler,
// flags, arguments, reference, tolerances, input seed and the cache mode
// (except the default, cold, so older results stay found). Parameters and
// search settings are left out on purpose: widening a space must keep
// measured trials. `device` is the backend's device the run uses
// (TuneOptions::device; `tunekit tune` runs device 0): an OpenCL kernel is
// compiled by that device's driver, which is part of its identity.
std::string spec_hash(const Spec& spec, int device = 0);

// spec_hash() without the toolchain's identity (the compiler's release,
// NVRTC's version, the OpenCL driver): the same kernel built by another
// toolchain has the same. A tune resumes by spec_hash() alone; what answers
// from stored trials (select, emit, report) may read another toolchain's
// where this machine's has none.
std::string spec_hash_without_toolchain(const Spec& spec);

// The settings a trial's outcome depends on beyond spec_hash(): the
// per-config timeout (and an application's run timeout), the build timeout
// (kernel.build_timeout where it is not the default, an application's),
// the tolerances and the cache mode. A stored failure of the config's is
// reused only under the same settings, so a rerun with a longer --timeout
// measures its timeouts again.
std::string settings_key(const Spec& spec);

// A warning when most trials that ran missed the spec's noise target: their
// medians are less sure than asked, so close configs may be ranked by chance.
// tune() adds it to its report's warnings.
std::optional<std::string> noise_warning(const TuneReport& report);

// A report of `spec` before anything is tuned: what was tuned, the store it
// goes to, what `best` is chosen by (tune() starts from it; the device is
// its backend's).
TuneReport untuned_report(const Spec& spec, const TuneOptions& options);

// What tune() would tune `spec` on.
struct TuningTarget {
  MachineInfo machine;  // the backend's, with options.properties applied
  // Its timings take the host's cores (CPU kernels, the user's programs):
  // two tunes on one host disturb each other's.
  bool measures_on_host = false;
};

// What tune() builds and measures with: the backend of the spec's kernel
// language (or the replay backend), its builder, and its evaluator, whose
// worker process starts at the first trial and lives as long as the rig.
// tune() makes one per call. A caller that tunes a kernel's sizes over
// several calls (an MPI rank: one size per assignment) makes one and passes
// it in TuneOptions::rig, so the worker, the device's context and a Python
// worker's imports start once, and a variant is built at most once (with
// `rebuild` too). Each call's spec may differ from the rig's only where
// spec_hash() does not look (its sizes, its store, its search); `spec` must
// outlive the rig, and the options that place files (out_dir, build_dir,
// device, replay, rebuild) are the rig's.
class TuningRig {
 public:
  // Throws as tune() does when the backend's runtime or device is missing;
  // starts no process.
  TuningRig(const Spec& spec, const TuneOptions& options);
  ~TuningRig();
  TuningRig(const TuningRig&) = delete;
  TuningRig& operator=(const TuningRig&) = delete;

  // What it tunes on: an MPI job compares this across its ranks before it
  // spreads the sizes over them.
  const TuningTarget& target() const;

  struct Parts;  // the tuner's (tuner.cpp)
  Parts& parts() { return *parts_; }

 private:
  std::unique_ptr<Parts> parts_;
};

// Tunes every size of `spec` and returns what was measured; every trial is
// in the store (options.out_dir/tunekit.db, or spec.output.db) before this
// returns. Writes no report file: the output writers (output.hpp) do.
// Throws std::invalid_argument, naming the field, for a Spec or TuneOptions
// that load_spec() and the command line would refuse (an empty entry or
// out_dir, min_samples over max_samples, a timeout of 0, a tolerance that
// is no number >= 0, a budget of 0 evaluations, no sizes); TuningRig too.
TuneReport tune(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress = {});

}  // namespace tunekit
