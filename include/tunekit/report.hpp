#pragma once
// The text of the built-in output writers (output.hpp): console lines, the
// summary, CSV, JSON and msKPP's results table.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/select.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

// "No.3: 14.982 us, {BM: 64, BN: 128}" or "No.4: compile_error, {...} (reason)".
std::string format_trial_line(std::size_t number, const TrialRecord& trial);

// Columns: No.,Config,Time(us),Status,MaxAbsDiff,MaxRelErr,Min(us),Noise,Samples,Size,Error
std::string format_csv(const std::vector<TrialRecord>& trials);
std::string format_json(const TuneReport& report);

// msKPP's results table, for application-level tuning: the file name
// TUNEKIT_RESULTS_<YYYYmmddHHMMSS>.csv (local time of `when`), and the
// columns No.,Config,Duration(us),Args. Duration is the median of an ok
// trial, else its status; Args is `args[i]` (the command the trial ran) as a
// shell would quote it, empty when there is none.
std::string results_file_name(std::chrono::system_clock::time_point when);
std::string format_results_csv(const std::vector<TrialRecord>& trials, const std::vector<std::vector<std::string>>& args);

// A line saying that configs cut short by the early stop might beat `choice`
// (UniversalChoice::unsettled_by) and how to settle it; empty when none can.
std::string format_unsettled(const UniversalChoice& choice);

// Summary printed at the end of `tunekit tune` (the console writer); with
// rules on, it ends with format_rule_report() of the sizes (rules.hpp).
std::string format_summary(const TuneReport& report);

}  // namespace tunekit
