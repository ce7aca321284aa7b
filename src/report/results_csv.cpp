// msKPP's results table (autotune_v2): TUNEKIT_RESULTS_<time>.csv with the
// columns No.,Config,Duration(us),Args.
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "core/detail/process.hpp"
#include "report/detail/files.hpp"
#include "report/detail/text.hpp"
#include "tunekit/report.hpp"

namespace tunekit {

std::string results_file_name(std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
  return std::string("TUNEKIT_RESULTS_") + stamp + ".csv";
}

std::string format_results_csv(const std::vector<TrialRecord>& trials,
                               const std::vector<std::vector<std::string>>& args) {
  std::string out = "No.,Config,Duration(us),Args\n";
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const TrialRecord& t = trials[i];
    const std::string duration = t.status == Status::ok ? format_us(t.stats.median) : std::string(to_string(t.status));
    const std::string line = i < args.size() && !args[i].empty() ? detail::shell_quote(args[i]) : std::string();
    out += fmt::format("{},{},{},{}\n", i + 1, detail::csv_field(t.config.str()), detail::csv_field(duration),
                       detail::csv_field(line));
  }
  return out;
}

}  // namespace tunekit
