#pragma once
// The text of the built-in output writers (output.hpp): console lines, the
// summary, CSV, JSON, T4 and msKPP's results table.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/select.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

// What a trial's line and row show besides its time: the user's metrics, and
// whether it missed the noise target.
struct TrialColumns {
  std::vector<Metric> metrics;
  double target_noise = 0;  // a trial whose noise is above it missed it (0: no target)
};
// The report's metrics and noise target.
TrialColumns columns_of(const TuneReport& report);

// A time in microseconds as every report and message prints it: three
// decimals, or four significant digits below 1 us (a hot kernel's 3.3 ns
// and 3.5 ns are not both 0.003).
std::string format_us(Microseconds t);

// "No.3: 14.982 us, {BM: 64, BN: 128}" or "No.4: compile_error, {...} (reason)";
// an ok trial's metrics follow (", gflops 125.3"), and a trial that missed
// the noise target says so (", noise 5.1% over the 2% target, min 14.102 us").
std::string format_trial_line(std::size_t number, const TrialRecord& trial, const TrialColumns& columns = {});

// Columns: No.,Config,Time(us),Status,MaxAbsDiff,MaxRelErr,Min(us),Noise,Samples,Size,Error,
// Spread,Bimodal,MissedNoiseTarget, then one per metric, one per size name and
// one per parameter (in order of first appearance), so that a table library
// can group by a parameter without parsing Config.
std::string format_csv(const std::vector<TrialRecord>& trials, const TrialColumns& columns = {});
std::string format_json(const TuneReport& report);

// The T4 results file (schema 1.0.0, as Kernel Tuner writes it): per trial
// the configuration, times (ms), invalidity, correctness, measurements (the
// time and the metrics) and objectives, plus `problem_size` and
// `tunekit_status` beyond the schema, and the trials' machine as
// `tunekit_machine`. A trial that failed for the environment's fault is
// left out: it says nothing about its config.
std::string format_t4(const TuneReport& report);

// msKPP's results table, for application-level tuning: the file name
// TUNEKIT_RESULTS_<YYYYmmddHHMMSS>.csv (local time of `when`), and the
// columns No.,Config,Duration(us),Args. Duration is the median of an ok
// trial, else its status; Args is `args[i]` (the command the trial ran) as a
// shell would quote it, empty when there is none.
std::string results_file_name(std::chrono::system_clock::time_point when);
std::string format_results_csv(const std::vector<TrialRecord>& trials,
                               const std::vector<std::vector<std::string>>& args);

// A line saying that configs cut short by the early stop might beat `choice`
// (UniversalChoice::unsettled_by) and how to settle it; empty when none can.
std::string format_unsettled(const UniversalChoice& choice);

// What a size's best is the best of, where the run stopped part way through
// the size: "the 37 configs measured before the run was stopped (of 180 valid
// at this size)". The console, the JSON and the HTML page say it alike.
std::string stopped_part_way_text(const StoppedPartWay& part);

// Summary printed at the end of `tunekit tune` (the console writer); with
// rules on, it ends with format_rule_report() of the sizes (rules.hpp).
std::string format_summary(const TuneReport& report);

}  // namespace tunekit
