#pragma once
// Handing results back: console lines, CSV, JSON.
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

// Summary printed at the end of `tunekit tune`.
std::string format_summary(const TuneReport& report);

}  // namespace tunekit
