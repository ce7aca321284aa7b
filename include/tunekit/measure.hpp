#pragma once
// Honest timing: warm-up, optional cache flush, repeat until the noise is
// low (or a cap is hit), report the median. Backend-neutral: a backend gives
// a function that times one sample.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/names.hpp"
#include "tunekit/statistics.hpp"
#include "tunekit/units.hpp"

namespace tunekit {

// cold (the default): the flush overwrites a buffer larger than the caches,
// as triton's do_bench does, so times compare with it; on a GPU that leaves
// the L2 full of dirty lines, and the timed kernel pays for writing them back.
// cold_read: the flush reads that buffer, so the L2 holds only clean lines
// nobody times. hot: no flush.
enum class CacheMode { cold, hot, cold_read };

// "cold", "cold-read", "hot": the names in specs, on the command line and in
// the worker protocol.
NameTable<CacheMode> cache_mode_names();
std::string_view to_string(CacheMode m);
std::optional<CacheMode> cache_mode_from_string(std::string_view name);
inline bool is_cold(CacheMode m) { return m != CacheMode::hot; }

// Early stop: a config is judged on this many samples (after the first
// warm-up call) against the bar, early_stop x the best median so far.
inline constexpr std::size_t kEarlyStopSamples = 3;

struct MeasureSettings {
  Microseconds warmup = std::chrono::milliseconds(50);  // time spent warming up (at least one call)
  std::size_t min_samples = 5;
  std::size_t max_samples = 200;
  Seconds max_time{2.0};              // cap on sampling time per trial
  double target_noise = 0.02;         // stop when relative noise of the median estimate < this
  CacheMode cache = CacheMode::cold;  // flush caches before every sample (unless hot)
  Seconds timeout{60.0};              // per trial (build excluded); past it: Status::timeout
  // When the worker must have answered: the request's arrival plus the
  // timeout, set by the worker as the request arrives (never sent). Sampling
  // stops short of its own rule when another sample would leave no time for
  // the answer, so a slow config is measured on fewer samples instead of
  // being killed as hung. None: no deadline (a command kernel's timeout
  // bounds each run of its program, not the trial).
  std::optional<std::chrono::steady_clock::time_point> answer_by;
  // Triton: time replays of a CUDA graph of the launch (launch-bound
  // kernels); the CUDA worker does so by itself for short hot kernels.
  bool graph = false;
  // Stop measuring a loser: when its first kEarlyStopSamples samples are all
  // slower than early_stop x best_so_far, sampling stops there (the trial is
  // Status::slower). 0: off. Above 1, so that no config within the noise of
  // the best can be cut. The tune sends 0 under an objective other than the
  // time (early_stop_conflict, objective.hpp), whatever a Spec holds.
  double early_stop = 3.0;
  // Name the best on more than one measurement: at the end of each size, the
  // `confirm` fastest configs within kConfirmWithin of the best are measured
  // again, side by side, `confirm_rounds` times each (the order rotated
  // between rounds), and each one's statistics pool all its samples. Each
  // trial was measured once, at its own moment, and the least of many noisy
  // medians favours one caught at a lucky moment; on a GPU the clocks drift
  // between trials by more than the near-best configs differ (H200 GEMM: 2
  // to 3%). 0 or 1: off. The tuner's to run, not the worker's: not sent to
  // the worker.
  std::size_t confirm = 3;
  std::size_t confirm_rounds = 3;
  // Per trial, from the tuner: the best median so far among the trial's
  // size's configs. None: nothing to compare with, so no early stop.
  std::optional<Microseconds> best_so_far;
};

// Configs slower than this factor x the best are not confirmed: measuring
// again cannot reorder them, since the drift between trials is a few per cent.
inline constexpr double kConfirmWithin = 1.10;

// The early-stop bar of a trial: early_stop x best_so_far; none when either
// is missing.
std::optional<Microseconds> early_stop_bar(const MeasureSettings& s);

// Why the sampling that these settings allow cannot fit within the timeout
// that bounds the whole trial (warm-up and max_time together reach it), or
// nullopt. The one check of the measure settings' times, for the spec's
// keys and the command line's flags alike.
std::optional<std::string> sampling_outlasts_timeout(const MeasureSettings& s);

// The share of the timeout that sampling leaves before answer_by, beyond
// two of the longest calls (the next sample, and the call that checks the
// outputs after the timed ones): the answer, the check's comparison and a
// busy machine's slack.
inline constexpr double kTimeoutMargin = 0.1;

struct Sampling {
  std::vector<Microseconds> samples;
  // Stopped by the early stop: every sample is slower than the bar, and
  // there are only kEarlyStopSamples of them.
  bool cut_short = false;
  // Stopped before the stop rule because the trial's deadline (answer_by)
  // came near: the samples are what there was time for.
  bool out_of_time = false;
};

// What a trial stopped by its deadline says beside its time (its `error`,
// which an ok trial does not otherwise use); empty for any other sampling.
std::string out_of_time_note(const Sampling& sampled, const MeasureSettings& s);

// Runs the sampling loop. `flush` is called before each sample when cache is
// cold or cold_read (its time is not counted); `sample` runs the kernel once
// and returns its duration. Its argument says how many more calls the loop
// will make, at most, before it next decides something (stop, or cut the
// trial short): a backend that enqueues runs in groups enqueues no more than
// that (SIZE_MAX: no limit known; the warm-up is timed, not counted).
//
// With an early-stop bar, the warm-up's calls after the first are judged
// too: once kEarlyStopSamples of them in a row are above the bar, the
// warm-up ends, and the first samples decide. When they do not confirm it
// (one is at or below the bar), the warm-up is finished, they are discarded
// and sampling starts over, as without the bar.
//
// With answer_by, sampling also stops (out_of_time) once the time left is
// under two of the longest sampling calls plus kTimeoutMargin of the
// timeout, whatever min_samples asks: there is always at least one sample,
// and a call that never returns is still the tuner's to time out.
Sampling collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                         const std::function<Microseconds(std::size_t at_most)>& sample);
// The same for a backend that runs one call at a time.
Sampling collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                         const std::function<Microseconds()>& sample);

// measure.early_stop as written in a spec or on the command line: a factor
// above 1, or "off" ("false", "no" and 0 too), which is 0. Throws
// std::invalid_argument with a message saying what is expected.
double parse_early_stop(std::string_view text);

// "1.5s", "200ms", "50us", "3m" or a bare number of seconds. Throws
// std::invalid_argument with a message saying what is expected.
Seconds parse_duration(std::string_view text);

}  // namespace tunekit
