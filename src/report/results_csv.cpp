// msKPP's results table (autotune_v2): TUNEKIT_RESULTS_<time>.csv with the
// columns No.,Config,Duration(us),Args.
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "tunekit/report.hpp"

namespace tunekit {

namespace {

// RFC 4180: quote a field holding a comma, a quote or a line break.
std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string results_file_name(std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
  return std::string("TUNEKIT_RESULTS_") + stamp + ".csv";
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') out += "'\\''";
      else out += c;
    }
    out += '\'';
  }
  return out;
}

void write_results_csv(const std::filesystem::path& file, const std::vector<TrialRecord>& trials,
                       const std::vector<std::vector<std::string>>& args) {
  std::string out = "No.,Config,Duration(us),Args\n";
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const TrialRecord& t = trials[i];
    const std::string duration =
        t.status == Status::ok ? fmt::format("{:.3f}", t.stats.median.count()) : std::string(to_string(t.status));
    const std::string line = i < args.size() && !args[i].empty() ? shell_quote(args[i]) : std::string();
    out += fmt::format("{},{},{},{}\n", i + 1, csv_field(t.config.str()), csv_field(duration), csv_field(line));
  }
  std::error_code ec;
  if (auto parent = file.parent_path(); !parent.empty()) std::filesystem::create_directories(parent, ec);
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << out;
    f.flush();
    if (!f) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
}

}  // namespace tunekit
