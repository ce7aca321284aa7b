#pragma once
// The HTML report: one self-contained page (inline SVG; no script, nothing
// fetched) of what a tune measured. Per kernel, device and size: the status
// counts, the fastest configs, every ok config's time in rank order, the best
// time found against the number of evaluations, how each parameter's values
// fared, and what failed with its reason.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/objective.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

// How one value of a parameter fared among one size's ok trials.
struct ParameterLevel {
  Value value;
  std::size_t trials = 0;  // ok trials with this value
  Microseconds best{0};    // the fastest of them
  Microseconds median{0};  // the median of their medians
  std::size_t slower = 0;  // trials with this value cut short by the early stop
  // No ok trial set this value, only trials cut short: best and median are
  // of their few samples, lower bounds of what a full measurement would say.
  bool bound = false;
  // Trials with this value that failed for a reason of the config's (a
  // crash, a wrong result, ...; not the machine's). A value whose every
  // trial failed has a level too, with no times: leaving it out would hide
  // a value that never works.
  std::size_t failed = 0;
  bool timed() const { return trials + slower > 0; }
};

struct ParameterEffect {
  std::string parameter;
  std::vector<ParameterLevel> levels;  // in value order
  // The slowest level's best over the fastest level's best: what the worst
  // choice of this parameter costs when every other parameter is chosen
  // well. 1 for a parameter with one level.
  double spread = 1;
  bool spread_is_bound = false;  // the slowest level is a lower bound: so is the spread
};

// Over the ok trials among `trials` (one size's, of one kernel and device),
// and those cut short by the early stop, one entry per parameter that they
// set, those with a value whose every trial failed first, then the largest
// spread first (ties by name); the config's failures are counted per value.
// Empty when no trial is ok.
std::vector<ParameterEffect> parameter_effects(const std::vector<TrialRecord>& trials);

// A text table of `effects`: one line per parameter, its spread, then each
// value's best and median time and trial count.
std::string format_parameter_effects(const std::vector<ParameterEffect>& effects);

// The same for any mix of trials, as the page groups them: a heading per
// (kernel, device, size), "KERNEL on DEVICE, {SIZE}: N trials", then its
// table (or "no config ran correctly").
std::string format_parameter_report(const std::vector<TrialRecord>& trials);

struct HtmlReportOptions {
  std::string title = "tunekit results";
  std::size_t top = 10;               // fastest configs listed per size
  std::size_t failures = 50;          // failed trials listed per size (the rest counted)
  std::size_t points = 400;           // at most this many dots per parameter value (evenly spread over its times)
  std::optional<Config> baseline;     // the default config: marked in the plots, its time drawn across sizes
  double target_noise = 0;            // trials whose noise is above it are flagged (0: no target)
  std::vector<Metric> metrics;        // a column each in the tables of the fastest configs
  // What each size's best is named by, over `metrics` (a tune's
  // TuneReport::objective), as the tune and select name it.
  Objective objective;
  std::vector<std::string> warnings;  // shown at the top (a tune's TuneReport::warnings)
  // Sizes that ran nothing, each with why (a tune's SizeReport::error): no
  // valid config, a reference that does not build. Listed at the top.
  std::vector<std::pair<Bindings, std::string>> stopped;
  // Sizes whose best is of part of their valid configs, each with what it
  // is the best of: a tune's stopped_part_way_text(), or how much of a size
  // the store holds. Listed at the top.
  std::vector<std::pair<Bindings, std::string>> best_of_part;
};

// One page for any mix of kernels, devices and sizes, such as Store::all()
// or a tune's trials: a section per (kernel, device, size) in order of first
// appearance, its trials taken in the order given (for a tune: evaluation
// order, which the convergence plot follows). With several sizes, an
// overview plots each size's best and default time. The baseline is marked
// in every plot; a trial over the noise target is flagged, and a winner over
// it is warned about. Every text from a spec, a config or an error message
// is escaped.
std::string html_report(const std::vector<TrialRecord>& trials, const HtmlReportOptions& options = {});

// html_report() written atomically to `file` (its folder is created).
void write_html_report(const std::filesystem::path& file, const std::vector<TrialRecord>& trials,
                       const HtmlReportOptions& options = {});

}  // namespace tunekit
