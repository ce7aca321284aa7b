#pragma once
// Handing results back: console lines, CSV, JSON.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

// "No.3: 14.982 us, {BM: 64, BN: 128}" or "No.4: compile_error, {...} (reason)".
std::string format_trial_line(std::size_t number, const TrialRecord& trial);

// Columns: No.,Config,Time(us),Status,MaxAbsDiff,MaxRelErr,Min(us),Noise,Samples,Size,Error
void write_csv(const std::filesystem::path& file, const std::vector<TrialRecord>& trials);
void write_json(const std::filesystem::path& file, const TuneReport& report);

// msKPP's results table, for application-level tuning: the file name
// TUNEKIT_RESULTS_<YYYYmmddHHMMSS>.csv (local time of `when`), and the
// columns No.,Config,Duration(us),Args. Duration is the median of an ok
// trial, else its status; Args is `args[i]` (the command the trial ran) as a
// shell would quote it, empty when there is none.
std::string results_file_name(std::chrono::system_clock::time_point when);
void write_results_csv(const std::filesystem::path& file, const std::vector<TrialRecord>& trials,
                       const std::vector<std::vector<std::string>>& args);
// `argv` as one line a POSIX shell splits back into the same words (for
// display only: tunekit itself never runs a shell).
std::string shell_quote(const std::vector<std::string>& argv);

// Summary printed at the end of `tunekit tune`.
std::string format_summary(const TuneReport& report);

}  // namespace tunekit
