#include "tunekit/output.hpp"
#include "tunekit/html_report.hpp"
#include "tunekit/report.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using namespace tunekit;

namespace {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("tunekit_report_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small RFC 4180 reader: quoted fields may hold commas, doubled quotes and
// line breaks; records end with LF or CRLF.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      EXPECT_TRUE(field.empty() && !was_quoted) << "quote in the middle of a field";
      quoted = was_quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      was_quoted = false;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      // handled by the '\n'
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      was_quoted = false;
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  if (!field.empty() || !row.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

TrialRecord ok_trial(Config config, double median_us) {
  TrialRecord t;
  t.spec_hash = "hash1";
  t.kernel = "matmul";
  t.device = "cpu";
  t.size = {{"M", Value(512)}, {"N", Value(256)}};
  t.config = std::move(config);
  t.status = Status::ok;
  t.stats.median = Microseconds(median_us);
  t.stats.min = Microseconds(median_us * 0.98);
  t.stats.max = Microseconds(median_us * 1.1);
  t.stats.mean = Microseconds(median_us * 1.01);
  t.stats.noise = 0.0125;
  t.stats.count = 3;
  t.samples = {Microseconds(median_us * 0.98), Microseconds(median_us), Microseconds(median_us * 1.1)};
  t.verification.checked = true;
  t.verification.passed = true;
  t.verification.max_abs_diff = 1.2e-6;
  t.verification.max_rel_err = 3.4e-7;
  t.build_time = Seconds(0.5);
  return t;
}

TrialRecord failed_trial(Config config, Status status, std::string error) {
  TrialRecord t;
  t.spec_hash = "hash1";
  t.kernel = "matmul";
  t.device = "cpu";
  t.size = {{"M", Value(512)}, {"N", Value(256)}};
  t.config = std::move(config);
  t.status = status;
  t.error = std::move(error);
  return t;
}

Config bmbn(int bm, int bn) { return Config({{"BM", Value(bm)}, {"BN", Value(bn)}}); }

TuneReport sample_report() {
  TuneReport r;
  r.spec_hash = "hash1";
  r.device = "cpu";
  r.db = "out/tunekit.db";
  r.files = {{"csv", "out/matmul.csv"}, {"json", "out/matmul.json"}};
  r.resumed = 2;
  r.wall = Seconds(12.5);
  r.build = Seconds(4.25);
  r.measure = Seconds(6.0);
  SizeReport s;
  s.size = {{"M", Value(512)}, {"N", Value(256)}};
  s.trials.push_back(ok_trial(bmbn(64, 64), 20.0));
  s.trials.push_back(failed_trial(bmbn(64, 128), Status::compile_error, "error: too many registers\nmore"));
  TrialRecord wrong = ok_trial(bmbn(128, 64), 9.0);
  wrong.status = Status::wrong_result;
  wrong.verification.passed = false;
  wrong.verification.max_abs_diff = 0.5;
  s.trials.push_back(wrong);
  s.trials.push_back(ok_trial(Config({{"BM", Value(128)}, {"BN", Value(128)}, {"SCALE", Value(2.0)}}), 12.345));
  s.best = 3;
  s.baseline = 0;
  s.baseline_is_spec_default = true;
  r.sizes.push_back(s);
  return r;
}

}  // namespace

TEST(TrialLine, Ok) {
  EXPECT_EQ(format_trial_line(3, ok_trial(bmbn(64, 128), 14.9823)), "No.3: 14.982 us, {BM: 64, BN: 128}");
  EXPECT_EQ(format_trial_line(1, ok_trial(bmbn(1, 2), 123456.78951)), "No.1: 123456.790 us, {BM: 1, BN: 2}");
  EXPECT_EQ(format_trial_line(2, ok_trial(Config({{"S", Value(2.0)}, {"L", Value("row")}}), 5)),
            "No.2: 5.000 us, {S: 2.0, L: row}");
}

TEST(TrialLine, Failures) {
  EXPECT_EQ(format_trial_line(4, failed_trial(bmbn(64, 128), Status::compile_error,
                                              "\n  kernel.cpp:3: error: 'x' undeclared  \n  3 | x;\n")),
            "No.4: compile_error, {BM: 64, BN: 128} (kernel.cpp:3: error: 'x' undeclared)");
  EXPECT_EQ(format_trial_line(6, failed_trial(bmbn(1, 1), Status::crash, "")), "No.6: crash, {BM: 1, BN: 1}");
  EXPECT_EQ(format_trial_line(7, failed_trial(bmbn(1, 1), Status::timeout, "exceeded 60 s")),
            "No.7: timeout, {BM: 1, BN: 1} (exceeded 60 s)");

  // A failure of the machine's says so: it reads like the config's otherwise.
  TrialRecord killed = failed_trial(bmbn(1, 1), Status::compile_error, "g++: fatal error: Killed signal terminated");
  killed.fault = Fault::environment;
  EXPECT_EQ(format_trial_line(9, killed),
            "No.9: compile_error, {BM: 1, BN: 1} (the machine's fault, tried again on "
            "the next run: g++: fatal error: Killed signal terminated)");

  // The machine's trouble is the line shown, not the linker's echo of it
  // that has "error" in it.
  TrialRecord full = failed_trial(bmbn(1, 1), Status::compile_error,
                                  "/usr/bin/ld: final link failed: No space left on device\n"
                                  "collect2: error: ld returned 1 exit status\n");
  full.fault = Fault::environment;
  EXPECT_EQ(format_trial_line(9, full),
            "No.9: compile_error, {BM: 1, BN: 1} (the machine's fault, tried again on "
            "the next run: /usr/bin/ld: f ... failed: No space left on device)");

  // A program's control characters are shown, not sent to the terminal.
  EXPECT_EQ(format_trial_line(
                5, failed_trial(bmbn(1, 1), Status::crash, "\x1b[2J\x1b[31mRED\x1b]0;title\x07\tgone\x7f\n$ ./app")),
            "No.5: crash, {BM: 1, BN: 1} (^[[2J^[[31mRED^[]0;title^G gone^?)");

  std::string long_error(300, 'e');
  std::string line = format_trial_line(8, failed_trial(bmbn(1, 1), Status::launch_error, long_error));
  EXPECT_EQ(line, "No.8: launch_error, {BM: 1, BN: 1} (" + std::string(64, 'e') + " ... " + std::string(31, 'e') + ")");

  // A long wrong result is shown whole: cut in the middle, it lost "]: got"
  // ("first at [0 ... -0.5927303, expected -0.5937303"), what the kernel
  // wrote where. Its reason is tunekit's own, of bounded length.
  const std::string differ =
      "attention_output_buffer: 1289 of 1048576 elements differ; first at [1048000]: got 0.12345678901, expected "
      "0.12345678911 (atol 1e-06, rtol 1e-05)";
  TrialRecord wrong = failed_trial(bmbn(1, 1), Status::wrong_result, differ);
  wrong.verification.checked = true;
  wrong.verification.max_abs_diff = 1e-9;
  EXPECT_EQ(format_trial_line(3, wrong), "No.3: wrong_result, {BM: 1, BN: 1} (max abs diff 1e-09: " + differ + ")");
  const std::string wrote =
      "in its timed calls, wrote into input 'x', which it may only read: element [0] changed from -0.25 to 5 (1 of "
      "its 1000 elements of f32 changed), so its later calls computed from other inputs; a buffer the kernel writes "
      "is declared 'role: out' (an output) or 'role: scratch' (a workspace)";
  EXPECT_EQ(format_trial_line(4, failed_trial(bmbn(1, 1), Status::wrong_result, wrote)),
            "No.4: wrong_result, {BM: 1, BN: 1} (" + wrote + ")");
}

// A slower trial measured again after its worker was killed from outside
// keeps the note an ok one shows (it was counted in the summary, and its
// line said nothing).
TEST(TrialLine, ASlowerTrialShowsItsNote) {
  TrialRecord cut = ok_trial(bmbn(1, 1), 40.0);
  cut.status = Status::slower;
  cut.slower_than = SlowerThan{3, Microseconds(10.0)};
  EXPECT_EQ(format_trial_line(2, cut),
            "No.2: slower, {BM: 1, BN: 1} (cut short after 3 samples, all over 3 x 10.000 us, the best so far; min "
            "39.200 us)");
  cut.error = "worker killed from outside (SIGKILL); measured again on a fresh worker";
  EXPECT_EQ(format_trial_line(2, cut),
            "No.2: slower, {BM: 1, BN: 1} (cut short after 3 samples, all over 3 x 10.000 us, the best so far; min "
            "39.200 us; worker killed from outside (SIGKILL); measured again on a fresh worker)");
}

// The summary's count of trials measured again after a kill names what was
// killed: a worker, or a command kernel's program run.
TEST(Summary, TrialsKilledFromOutsideAreAWorkersOrAProgramsRuns) {
  TuneReport report = sample_report();
  report.measured_again_after_kill = 1;
  EXPECT_NE(format_summary(report).find("; 1 trial's worker killed from outside, measured again on a fresh one"),
            std::string::npos)
      << format_summary(report);
  report.application = true;
  report.measured_again_after_kill = 2;
  const std::string text = format_summary(report);
  EXPECT_NE(text.find("; 2 trials' program runs killed from outside, run again"), std::string::npos) << text;
  EXPECT_EQ(text.find("worker"), std::string::npos) << text;
}

TEST(TrialLine, WrongResultShowsMaxAbsDiff) {
  TrialRecord w = failed_trial(bmbn(64, 128), Status::wrong_result, "");
  w.verification.checked = true;
  w.verification.passed = false;
  w.verification.max_abs_diff = 0.5;
  EXPECT_EQ(format_trial_line(5, w), "No.5: wrong_result, {BM: 64, BN: 128} (max abs diff 0.5 > tolerance)");

  w.error = "output C: max abs diff 0.5 > atol 1e-05 + rtol 1e-05 * |expected|";
  EXPECT_EQ(format_trial_line(5, w),
            "No.5: wrong_result, {BM: 64, BN: 128} (output C: max abs diff 0.5 > atol 1e-05 + rtol 1e-05 * "
            "|expected|)");

  w.error = "C[3]: got 1.5, expected 1";
  EXPECT_EQ(format_trial_line(5, w),
            "No.5: wrong_result, {BM: 64, BN: 128} (max abs diff 0.5: C[3]: got 1.5, expected 1)");
}

TEST(Csv, ParsesBackWithQuoting) {
  TempDir dir;
  std::vector<TrialRecord> trials;
  trials.push_back(ok_trial(bmbn(64, 128), 14.9823));
  trials.push_back(failed_trial(bmbn(32, 32), Status::compile_error,
                                "kernel.cpp:1: error: expected ';', got \"}\"\nsecond line, with comma"));
  trials.push_back(failed_trial(Config({{"MODE", Value("a,\"b\"")}}), Status::timeout, ""));
  trials.push_back(failed_trial(Config(), Status::crash, "signal 11"));
  trials[1].fault = Fault::config;
  trials[3].fault = Fault::environment;

  // Through the csv writer, which writes beside the file and renames it in.
  fs::path file = dir.path() / "nested" / "dir" / "out.csv";
  TuneReport report;
  report.sizes.emplace_back().trials = trials;
  std::ostringstream console;
  write_output(writers().get("csv"), report, file, console);
  EXPECT_EQ(console.str(), "");
  ASSERT_TRUE(fs::exists(file));
  // Nothing of the write is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(file.parent_path()), fs::directory_iterator()), 1);
  auto rows = parse_csv(slurp(file));
  ASSERT_EQ(rows.size(), 5u);
  // The fixed columns, then one per size name and one per parameter, in
  // order of first appearance.
  std::vector<std::string> header{
      "No.",   "Config",  "Time(us)", "Status", "MaxAbsDiff", "MaxRelErr", "Min(us)",
      "Noise", "Samples", "Size",     "Error",  "Spread",     "Bimodal",   "MissedNoiseTarget",
      "Fault", "M",       "N",        "BM",     "BN",         "MODE"};
  EXPECT_EQ(rows[0], header);
  for (const auto& r : rows) ASSERT_EQ(r.size(), header.size());

  EXPECT_EQ(rows[1][0], "1");
  EXPECT_EQ(rows[1][1], "{BM: 64, BN: 128}");
  EXPECT_EQ(rows[1][2], "14.982");
  EXPECT_EQ(rows[1][3], "ok");
  EXPECT_DOUBLE_EQ(std::stod(rows[1][4]), 1.2e-6);
  EXPECT_DOUBLE_EQ(std::stod(rows[1][5]), 3.4e-7);
  EXPECT_NEAR(std::stod(rows[1][6]), 14.9823 * 0.98, 1e-3);
  EXPECT_NEAR(std::stod(rows[1][7]), 0.0125, 1e-4);
  EXPECT_EQ(rows[1][8], "3");
  EXPECT_EQ(rows[1][9], "{M: 512, N: 256}");
  EXPECT_EQ(rows[1][10], "");

  EXPECT_EQ(rows[2][0], "2");
  EXPECT_EQ(rows[2][2], "");  // no time when not ok
  EXPECT_EQ(rows[2][3], "compile_error");
  EXPECT_EQ(rows[2][4], "");  // not checked
  EXPECT_EQ(rows[2][8], "0");
  EXPECT_EQ(rows[2][10], "kernel.cpp:1: error: expected ';', got \"}\"\nsecond line, with comma");

  // The config as the console shows it (its comma would read as a second
  // entry); the MODE column holds the value itself.
  EXPECT_EQ(rows[3][1], "{MODE: 'a,\"b\"'}");
  EXPECT_EQ(rows[3].back(), "a,\"b\"");
  EXPECT_EQ(rows[3][3], "timeout");
  EXPECT_EQ(rows[4][1], "{}");
  EXPECT_EQ(rows[4][10], "signal 11");
  // Whose fault each failure is; none for an ok trial.
  EXPECT_EQ(rows[1][14], "");
  EXPECT_EQ(rows[2][14], "config");
  EXPECT_EQ(rows[4][14], "environment");

  // Raw text: the config column is quoted, quotes doubled.
  std::string text = slurp(file);
  EXPECT_NE(text.find("1,\"{BM: 64, BN: 128}\",14.982,ok,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"{MODE: 'a,\"\"b\"\"'}\""), std::string::npos) << text;
}

TEST(Csv, EmptyListWritesHeader) {
  EXPECT_EQ(format_csv({}),
            "No.,Config,Time(us),Status,MaxAbsDiff,MaxRelErr,Min(us),Noise,Samples,Size,Error,Spread,Bimodal,"
            "MissedNoiseTarget,Fault\n");
}

// Time(us) says its unit in its name; Noise and Spread (0.02, shown as 2% on
// the console) and MaxRelErr do not, so the writer's description (`tunekit
// plugins`, docs/plugins.md) says it for each column without one.
TEST(Csv, TheWritersSayTheUnitOfEachNumberWhoseNameDoesNot) {
  const std::string csv = writers().get("csv").summary;
  for (const char* column : {"`Time(us)`", "`Min(us)`", "`Noise`", "`Spread`", "`MaxAbsDiff`", "`MaxRelErr`"})
    EXPECT_NE(csv.find(column), std::string::npos) << column << " in: " << csv;
  EXPECT_NE(csv.find("as fractions of the time, 0.02 being 2%"), std::string::npos) << csv;
  const std::string json = writers().get("json").summary;
  EXPECT_NE(json.find("`noise`, `spread` and `max_rel_err` are fractions"), std::string::npos) << json;
}

TEST(Csv, OneColumnPerParameterAndMetricAndTheNoiseVerdict) {
  std::vector<TrialRecord> trials{ok_trial(bmbn(64, 128), 10.0), ok_trial(bmbn(32, 16), 20.0),
                                  failed_trial(bmbn(8, 8), Status::crash, "")};
  trials[1].stats.noise = 0.05;  // over a 2% target
  TrialColumns columns{{{"rate", Expression::parse("M * N / time_us")}}, 0.02};
  auto rows = parse_csv(format_csv(trials, columns));
  ASSERT_EQ(rows.size(), 4u);
  auto col = [&](const std::string& name) {
    auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return static_cast<std::size_t>(it - rows[0].begin());
  };
  // pandas can group by BM without parsing the Config column.
  EXPECT_EQ(rows[1][col("BM")], "64");
  EXPECT_EQ(rows[2][col("BN")], "16");
  EXPECT_EQ(rows[3][col("BM")], "8");
  EXPECT_EQ(rows[1][col("M")], "512");
  EXPECT_DOUBLE_EQ(std::stod(rows[1][col("rate")]), 512.0 * 256 / 10);
  EXPECT_EQ(rows[3][col("rate")], "");  // no time, no metric
  EXPECT_EQ(rows[1][col("MissedNoiseTarget")], "false");
  EXPECT_EQ(rows[2][col("MissedNoiseTarget")], "true");
  EXPECT_EQ(rows[3][col("MissedNoiseTarget")], "");
  EXPECT_EQ(rows[1][col("Bimodal")], "false");
}

// CCCL's base variant reads like a config in the CSV ({TUNE_BASE: 1}, its
// parameter columns empty): with one among the trials, an Origin column,
// last, says `base` on its row and why each other trial ran. Without one
// the columns are as they were.
TEST(Csv, CcclsBaseRowSaysItIsTheBase) {
  std::vector<TrialRecord> trials{ok_trial(bmbn(64, 128), 10.0), ok_trial(Config({{"TUNE_BASE", Value(1)}}), 12.0)};
  trials[0].origin = std::string(kOriginSearch);
  trials[1].origin = std::string(kOriginBase);
  const std::string plain = format_csv({trials[0]});
  EXPECT_EQ(plain.find("Origin"), std::string::npos) << plain;
  auto rows = parse_csv(format_csv(trials));
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(rows[0].back(), "Origin");
  EXPECT_EQ(rows[1].back(), "search");
  EXPECT_EQ(rows[2].back(), "base");
  EXPECT_EQ(rows[2][1], "{TUNE_BASE: 1}");
}

// A size or parameter named like a fixed column gets a column of its own
// name: csv.DictReader's row["Status"] was the parameter, not the status.
TEST(Csv, ASizeOrParameterNamedLikeAColumnSaysWhichItIs) {
  TrialRecord t = ok_trial(bmbn(1, 2), 5.0);
  t.size["Noise"] = Value(3);
  t.config = Config({{"Status", Value(7)}});
  const std::string csv = format_csv({t});
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",Noise (size),"), std::string::npos) << header;
  EXPECT_NE(header.find(",Status (parameter)"), std::string::npos) << header;
  // Each column name once: the trial's own Status and Noise keep theirs.
  std::vector<std::string> names;
  std::stringstream cells(header);
  for (std::string cell; std::getline(cells, cell, ',');) names.push_back(cell);
  EXPECT_EQ(std::count(names.begin(), names.end(), "Status"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "Noise"), 1);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << header;
}

// A parameter named `Origin` (any %RANGE% name may be) beside CCCL's base,
// or a metric named like a fixed column, gets a column of its own name: the
// header had two `Origin` columns, which pandas reads as Origin and
// Origin.1, and a reader by name took the parameter for the trial's origin.
TEST(Csv, AParameterOrMetricNamedLikeAColumnBesideTheBaseSaysWhichItIs) {
  std::vector<TrialRecord> trials{ok_trial(Config({{"Origin", Value(4)}}), 10.0),
                                  ok_trial(Config({{"TUNE_BASE", Value(1)}}), 12.0)};
  trials[0].origin = std::string(kOriginSearch);
  trials[1].origin = std::string(kOriginBase);
  const TrialColumns columns{{{"Noise", Expression::parse("1 / time_us")}}, 0};
  const auto rows = parse_csv(format_csv(trials, columns));
  ASSERT_EQ(rows.size(), 3u);
  const auto& names = rows[0];
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << ::testing::PrintToString(names);
  auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  ASSERT_LT(col("Origin (parameter)"), names.size()) << ::testing::PrintToString(names);
  EXPECT_EQ(rows[1][col("Origin (parameter)")], "4");
  EXPECT_EQ(rows[2][col("Origin (parameter)")], "");
  // The trial's origin keeps its name, last.
  EXPECT_EQ(names.back(), "Origin");
  EXPECT_EQ(rows[1].back(), "search");
  EXPECT_EQ(rows[2].back(), "base");
  ASSERT_LT(col("Noise (metric)"), names.size()) << ::testing::PrintToString(names);
  EXPECT_EQ(rows[1][col("Noise (metric)")], "0.1");
  // Without a base there is no Origin column: the parameter's is `Origin`.
  const auto plain = parse_csv(format_csv({trials[0]}));
  EXPECT_EQ(std::count(plain[0].begin(), plain[0].end(), "Origin"), 1);
  EXPECT_EQ(plain[1][std::find(plain[0].begin(), plain[0].end(), "Origin") - plain[0].begin()], "4");
}

// A build's resources (registers, spills) come out in each format: a column
// each in the CSV, after every other column, an object in the JSON, and the
// spills on the console line of a trial that spilled.
TEST(Csv, ABuildsResourcesAreColumnsAndInTheJsonAndTheConsole) {
  std::vector<TrialRecord> trials{ok_trial(bmbn(64, 128), 10.0), ok_trial(bmbn(32, 16), 20.0),
                                  failed_trial(bmbn(8, 8), Status::resource_limit, "12 registers spilled")};
  trials[0].resources = {{"registers", 96}, {"spills", 0}};
  trials[1].resources = {{"registers", 255}, {"spills", 12}};
  trials[2].resources = {{"registers", 255}, {"spills", 40}};
  trials[1].config = Config({{"BM", Value(32)}, {"registers", Value(2)}});  // a parameter named like one
  auto rows = parse_csv(format_csv(trials));
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::string>& header = rows[0];
  ASSERT_GE(header.size(), 2u);
  EXPECT_EQ(header[header.size() - 2], "registers (resource)");
  EXPECT_EQ(header.back(), "spills");
  EXPECT_EQ(rows[1][header.size() - 2], "96");
  EXPECT_EQ(rows[2].back(), "12");
  EXPECT_EQ(rows[3].back(), "40");
  EXPECT_EQ(parse_csv(format_csv({ok_trial(bmbn(1, 2), 5.0)}))[0].back(), "BN");  // none reported: no columns

  EXPECT_EQ(format_trial_line(2, trials[1]), "No.2: 20.000 us, {BM: 32, registers: 2}, 12 registers spilled");
  EXPECT_EQ(format_trial_line(1, trials[0]), "No.1: 10.000 us, {BM: 64, BN: 128}");

  TuneReport report = sample_report();
  report.sizes[0].trials[0].resources = {{"registers", 96}, {"spills", 3}};
  const auto j = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(j["sizes"][0]["trials"][0]["resources"], nlohmann::json({{"registers", 96}, {"spills", 3}}));
  EXPECT_FALSE(j["sizes"][0]["trials"][1].contains("resources"));
}

TEST(Csv, TrialsAreNumberedWithinTheirSize) {
  // As the console's "No.5" and the JSON's "no": 5 count them, per size.
  std::vector<TrialRecord> trials{ok_trial(bmbn(64, 128), 10.0), ok_trial(bmbn(32, 16), 20.0),
                                  ok_trial(bmbn(64, 128), 30.0), ok_trial(bmbn(8, 8), 40.0)};
  trials[2].size["M"] = Value(1024);
  trials[3].size["M"] = Value(1024);
  auto rows = parse_csv(format_csv(trials, {}));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1][0], "1");
  EXPECT_EQ(rows[2][0], "2");
  EXPECT_EQ(rows[3][0], "1");
  EXPECT_EQ(rows[4][0], "2");
}

// A hot kernel of a few nanoseconds: three decimals of a microsecond would
// show 3.26 ns and 3.52 ns as 0.003 and 0.004, an 8% gap as 33%, and tie
// configs in the CSV.
TEST(Csv, TimesBelowAMicrosecondKeepFourSignificantDigitsEverywhere) {
  std::vector<TrialRecord> trials{ok_trial(bmbn(64, 128), 0.00326), ok_trial(bmbn(32, 16), 0.003524),
                                  ok_trial(bmbn(8, 8), 0.5)};
  EXPECT_EQ(format_trial_line(1, trials[0]), "No.1: 0.00326 us, {BM: 64, BN: 128}");
  EXPECT_EQ(format_trial_line(2, trials[1]), "No.2: 0.003524 us, {BM: 32, BN: 16}");
  EXPECT_EQ(format_trial_line(3, trials[2]), "No.3: 0.5 us, {BM: 8, BN: 8}");
  auto rows = parse_csv(format_csv(trials, {}));
  ASSERT_EQ(rows.size(), 4u);
  const auto median = std::find(rows[0].begin(), rows[0].end(), "Time(us)") - rows[0].begin();
  ASSERT_LT(median, static_cast<long>(rows[0].size()));
  EXPECT_EQ(rows[1][median], "0.00326");
  EXPECT_EQ(rows[2][median], "0.003524");
  auto results = parse_csv(format_results_csv(trials, {}));  // msKPP's file
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1][2], "0.00326");
  EXPECT_EQ(results[3][2], "0.5");
}

TEST(TrialLine, AFailureShowsItsReason) {
  // A compiler's log opens with its context; the line is the error's.
  TrialRecord built = failed_trial(bmbn(1, 2), Status::compile_error,
                                   "k.cpp: In function 'void k(float*)':\nk.cpp:7:3: error: invalid use of 'this'\n");
  EXPECT_EQ(format_trial_line(4, built),
            "No.4: compile_error, {BM: 1, BN: 2} (k.cpp:7:3: error: invalid use of 'this')");
  // A wrong result that no comparison found (the reference's own checks)
  // shows no difference; one a comparison found shows it.
  TrialRecord unwritten = failed_trial(bmbn(1, 2), Status::wrong_result, "as the reference: 'y' has nan at 999");
  EXPECT_EQ(format_trial_line(1, unwritten),
            "No.1: wrong_result, {BM: 1, BN: 2} (as the reference: 'y' has nan at 999)");
  TrialRecord compared = unwritten;
  compared.error = "y[3] = 2 differs from 1";
  compared.verification.checked = true;
  compared.verification.passed = false;
  compared.verification.max_abs_diff = 1;
  EXPECT_EQ(format_trial_line(1, compared),
            "No.1: wrong_result, {BM: 1, BN: 2} (max abs diff 1: y[3] = 2 differs from 1)");
}

TEST(TrialLine, MetricsAndAMissedNoiseTarget) {
  TrialRecord t = ok_trial(bmbn(64, 128), 10.0);
  t.stats.count = 40;  // its interval a 95% one
  TrialColumns columns{{{"rate", Expression::parse("BM * BN / time_us")}}, 0.02};
  EXPECT_EQ(format_trial_line(3, t, columns), "No.3: 10.000 us, {BM: 64, BN: 128}, rate 819.2");
  t.stats.noise = 0.051;
  EXPECT_EQ(format_trial_line(3, t, columns),
            "No.3: 10.000 us, {BM: 64, BN: 128}, rate 819.2, noise 5.1% over the 2% target, min 9.800 us");
  // Near the target, enough decimals to differ from it.
  t.stats.noise = 0.0012;
  columns.target_noise = 0.001;
  EXPECT_EQ(format_trial_line(3, t, columns),
            "No.3: 10.000 us, {BM: 64, BN: 128}, rate 819.2, noise 0.12% over the 0.1% target, min 9.800 us");
  t.stats.bimodal = true;
  EXPECT_NE(format_trial_line(3, t, columns).find(", two groups of times"), std::string::npos);
  EXPECT_EQ(format_trial_line(3, ok_trial(bmbn(1, 1), 1.0), {}), "No.3: 1.000 us, {BM: 1, BN: 1}");
}

// Under 6 samples the noise's interval is their range, which holds the
// median with less than 95% (75% of 3): the line says so, and the JSON
// gives each trial's level.
TEST(TrialLine, ANoiseOfFewSamplesSaysItsIntervalsLevel) {
  TrialRecord t = ok_trial(bmbn(64, 128), 10.0);  // 3 samples
  t.stats.noise = 0.051;
  EXPECT_EQ(format_trial_line(3, t, TrialColumns{{}, 0.02}),
            "No.3: 10.000 us, {BM: 64, BN: 128}, noise 5.1% over the 2% target (a 75% interval, of 3 samples), min "
            "9.800 us");
  TuneReport report;
  SizeReport s;
  s.trials.push_back(t);
  s.trials.push_back(failed_trial(bmbn(1, 1), Status::compile_error, "k.cpp:1: error"));
  report.sizes.push_back(s);
  const auto j = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(j["sizes"][0]["trials"][0]["noise_level"], 0.75);
  EXPECT_TRUE(j["sizes"][0]["trials"][1]["noise_level"].is_null());
}

TEST(Summary, FlushTimeWarningsAndAMetricObjective) {
  TuneReport report = sample_report();
  report.flush = Seconds(0.75);
  report.device_busy = Seconds(3);
  report.warnings = {"the default {BM: 64, BN: 64} breaks the constraint `l1d_bytes >= 1`"};
  report.metrics = {{"rate", Expression::parse("BM * BN / time_us")}};
  report.objective = Objective{"rate", true, {}};
  std::string text = format_summary(report);
  auto has = [&](const std::string& needle) { return text.find(needle) != std::string::npos; };
  EXPECT_TRUE(has("measure 6.0 s (of it 0.8 s flushing caches)")) << text;
  EXPECT_TRUE(has("; kernels ran ")) << text;
  // A program's own reported times are said as its own: they may pass 100%.
  report.application = true;
  EXPECT_NE(format_summary(report).find("; the times the program reported sum to "), std::string::npos)
      << format_summary(report);
  report.application = false;
  report.verify = Seconds(0.01);
  EXPECT_EQ(format_summary(report).find("verifying"), std::string::npos) << format_summary(report);
  report.verify = Seconds(0.25);
  EXPECT_NE(format_summary(report).find("measure 6.0 s (of it 0.8 s flushing caches, 0.2 s verifying outputs)"),
            std::string::npos)
      << format_summary(report);
  EXPECT_TRUE(has("warning: the default {BM: 64, BN: 64} breaks the constraint `l1d_bytes >= 1`\n")) << text;
  EXPECT_TRUE(has("No.1: 20.000 us, {BM: 64, BN: 64}, rate 204.8\n")) << text;
  // rate: 64*64/20 = 204.8 for the default, 128*128/12.345 = 1327.18 for the best.
  EXPECT_TRUE(has("best: No.4 12.345 us {BM: 128, BN: 128, SCALE: 2.0}, rate 1327.18\n")) << text;
  EXPECT_TRUE(has("speedup over default by rate: 6.48x\n")) << text;
  auto j = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(j["objective"]["name"], "rate");
  EXPECT_EQ(j["objective"]["maximize"], true);
  EXPECT_EQ(j["metrics"]["rate"], "BM * BN / time_us");
  EXPECT_EQ(j["warnings"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["flush_s"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["sizes"][0]["trials"][0]["metrics"]["rate"].get<double>(), 204.8);
  EXPECT_DOUBLE_EQ(j["sizes"][0]["best"]["rate"].get<double>(), 128.0 * 128 / 12.345);
}

TEST(Json, ParsesBackWithTypes) {
  TempDir dir;
  TuneReport report = sample_report();
  fs::path file = dir.path() / "x" / "report.json";
  std::ostringstream console;
  write_output(writers().get("json"), report, file, console);
  auto j = nlohmann::json::parse(slurp(file));

  EXPECT_EQ(j["spec_hash"], "hash1");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["db"], "out/tunekit.db");
  EXPECT_EQ(j["csv"], "out/matmul.csv");
  EXPECT_DOUBLE_EQ(j["wall_s"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(j["build_s"].get<double>(), 4.25);
  EXPECT_DOUBLE_EQ(j["measure_s"].get<double>(), 6.0);
  EXPECT_EQ(j["resumed"], 2);
  ASSERT_EQ(j["sizes"].size(), 1u);
  const auto& s = j["sizes"][0];
  EXPECT_EQ(s["size"]["M"], 512);
  EXPECT_EQ(s["size"]["N"], 256);

  ASSERT_TRUE(s["best"].is_object());
  EXPECT_DOUBLE_EQ(s["best"]["time_us"].get<double>(), 12.345);
  EXPECT_EQ(s["best"]["config"]["BM"], 128);
  EXPECT_TRUE(s["best"]["config"]["BM"].is_number_integer());
  EXPECT_TRUE(s["best"]["config"]["SCALE"].is_number_float());
  ASSERT_TRUE(s["baseline"].is_object());
  EXPECT_DOUBLE_EQ(s["baseline"]["time_us"].get<double>(), 20.0);
  EXPECT_NEAR(s["speedup_over_baseline"].get<double>(), 20.0 / 12.345, 1e-12);

  const auto& trials = s["trials"];
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_EQ(trials[0]["no"], 1);
  EXPECT_EQ(trials[0]["status"], "ok");
  EXPECT_DOUBLE_EQ(trials[0]["time_us"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(trials[0]["min_us"].get<double>(), 19.6);
  EXPECT_DOUBLE_EQ(trials[0]["noise"].get<double>(), 0.0125);
  ASSERT_EQ(trials[0]["samples_us"].size(), 3u);
  EXPECT_DOUBLE_EQ(trials[0]["samples_us"][1].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(trials[0]["max_abs_diff"].get<double>(), 1.2e-6);
  EXPECT_DOUBLE_EQ(trials[0]["max_rel_err"].get<double>(), 3.4e-7);
  EXPECT_TRUE(trials[0]["error"].is_null());
  EXPECT_DOUBLE_EQ(trials[0]["build_s"].get<double>(), 0.5);

  EXPECT_EQ(trials[1]["status"], "compile_error");
  EXPECT_TRUE(trials[1]["time_us"].is_null());
  EXPECT_TRUE(trials[1]["min_us"].is_null());
  EXPECT_TRUE(trials[1]["samples_us"].empty());
  EXPECT_EQ(trials[1]["error"], "error: too many registers\nmore");

  EXPECT_EQ(trials[2]["status"], "wrong_result");
  EXPECT_TRUE(trials[2]["time_us"].is_null());
  EXPECT_DOUBLE_EQ(trials[2]["max_abs_diff"].get<double>(), 0.5);

  // Config order is kept.
  auto ordered = nlohmann::ordered_json::parse(slurp(file));
  std::vector<std::string> keys;
  for (const auto& [k, v] : ordered["sizes"][0]["trials"][3]["config"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"BM", "BN", "SCALE"}));
}

TEST(Json, NoValidConfigGivesNulls) {
  TuneReport report;
  report.spec_hash = "h";
  SizeReport s;
  s.trials.push_back(failed_trial(bmbn(1, 1), Status::crash, "signal 11"));
  report.sizes.push_back(s);
  auto j = nlohmann::json::parse(format_json(report));
  const auto& sj = j["sizes"][0];
  EXPECT_TRUE(sj["best"].is_null());
  EXPECT_TRUE(sj["baseline"].is_null());
  EXPECT_TRUE(sj["speedup_over_baseline"].is_null());
  EXPECT_TRUE(sj["size"].is_object());
  EXPECT_TRUE(sj["size"].empty());
  EXPECT_TRUE(sj["stopped"].is_null());
}

// A compiler's log cut in the middle of a character (gcc quotes names in
// U+2018/U+2019), or a kernel that prints bytes of its own: the JSON is
// still written, those bytes shown as U+FFFD.
TEST(Json, AnErrorThatIsNotUtf8IsWrittenAnyway) {
  TuneReport report;
  SizeReport s;
  s.trials.push_back(failed_trial(bmbn(1, 1), Status::compile_error, "k.cpp:1: error: \xE2\x80"));
  s.trials.push_back(failed_trial(bmbn(1, 2), Status::crash, std::string("\xFF\xFEraw\0bytes", 11)));
  report.sizes.push_back(s);
  const auto j = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(j["sizes"][0]["trials"][0]["error"], "k.cpp:1: error: \xEF\xBF\xBD");
  EXPECT_EQ(j["sizes"][0]["trials"][1]["error"], std::string("\xEF\xBF\xBD\xEF\xBF\xBDraw\0bytes", 15));
}

// "verified" is whether the outputs matched the reference's; "compared",
// whether they were compared at all. It said true for a wrong_result, whose
// outputs were compared and did not match.
TEST(Json, VerifiedSaysTheOutputsMatchedTheReference) {
  TuneReport report;
  SizeReport s;
  s.trials.push_back(ok_trial(bmbn(1, 1), 10));
  TrialRecord wrong = failed_trial(bmbn(1, 2), Status::wrong_result, "c: 1 of 9 elements differ");
  wrong.verification = {true, false, 0.5, 0.25, "c: 1 of 9 elements differ"};
  s.trials.push_back(wrong);
  s.trials.push_back(failed_trial(bmbn(1, 3), Status::wrong_result, "wrote past the end of output 'c'"));
  TrialRecord unchecked = ok_trial(bmbn(1, 4), 10);
  unchecked.verification = {};
  s.trials.push_back(unchecked);
  report.sizes.push_back(s);
  const auto j = nlohmann::json::parse(format_json(report));
  const auto& trials = j["sizes"][0]["trials"];
  const std::pair<bool, bool> verified_compared[] = {{true, true}, {false, true}, {false, false}, {false, false}};
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(trials[i]["verified"], verified_compared[i].first) << i;
    EXPECT_EQ(trials[i]["compared"], verified_compared[i].second) << i;
  }
}

// A size that ran nothing says why in every report, not on the console alone.
TEST(Json, ASizeThatRanNothingSaysWhy) {
  TuneReport report;
  SizeReport s;
  s.size = {{"N", Value(1001)}};
  s.error = "the reference config {BS: 64} does not build:\nk.cpp:3:5: error: 'x' was not declared\n\n";
  report.sizes.push_back(s);
  const auto j = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(j["sizes"][0]["stopped"], s.error);
  // The console shows the compiler's lines under the reason.
  EXPECT_NE(format_summary(report).find("stopped: the reference config {BS: 64} does not build:\n  k.cpp:3:5: error: "
                                        "'x' was not declared\n"),
            std::string::npos)
      << format_summary(report);
  HtmlReportOptions o;
  o.stopped.emplace_back(s.size, s.error);
  const std::string page = html_report({}, o);
  EXPECT_NE(page.find("Size N = 1001 ran nothing:"), std::string::npos) << page;
  EXPECT_NE(page.find("k.cpp:3:5: error: &#39;x&#39; was not declared"), std::string::npos) << page;
}

TEST(Summary, ContainsTheKeyLines) {
  std::string text = format_summary(sample_report());
  auto has = [&](const std::string& needle) { return text.find(needle) != std::string::npos; };
  EXPECT_TRUE(has("size {M: 512, N: 256}\n")) << text;
  EXPECT_TRUE(has("No.1: 20.000 us, {BM: 64, BN: 64}\n")) << text;
  EXPECT_TRUE(has("No.2: compile_error, {BM: 64, BN: 128} (error: too many registers)\n")) << text;
  EXPECT_TRUE(has("No.3: wrong_result, {BM: 128, BN: 64} (max abs diff 0.5 > tolerance)\n")) << text;
  EXPECT_TRUE(has("best: No.4 12.345 us {BM: 128, BN: 128, SCALE: 2.0}\n")) << text;
  EXPECT_TRUE(has("default: No.1 20.000 us {BM: 64, BN: 64}\n")) << text;
  EXPECT_TRUE(has("speedup over default: 1.62x\n")) << text;
  EXPECT_TRUE(
      has("verification: max abs diff 1.2e-06 (atol 1e-06), max rel diff 3.4e-07 (rtol 1e-05): within "
          "rtol\n"))
      << text;
  EXPECT_TRUE(has("4 trials: 2 ok, 1 compile_error, 1 wrong_result; 2 resumed from the store\n")) << text;
  EXPECT_TRUE(has("results: out/tunekit.db, out/matmul.csv, out/matmul.json\n")) << text;
  // The results line comes last; trial lines come before best.
  EXPECT_LT(text.find("No.4: 12.345 us"), text.find("best:"));
  EXPECT_EQ(text.rfind("results: "), text.find("results: "));
  EXPECT_EQ(text.substr(text.size() - std::string("out/matmul.json\n").size()), "out/matmul.json\n");
}

// The verification line says which tolerance admitted the best config's
// outputs: a relative difference of 35 passes only where |ref| is tiny and
// the absolute one is within atol (it read "max rel err 35 (within
// tolerance)").
TEST(Summary, VerificationSaysWhichToleranceAdmittedTheOutputs) {
  TuneReport report = sample_report();
  report.tolerance = Tolerance{1e-5, 1e-4};
  auto line_with = [&](double abs, double rel, bool passed) {
    Verification& v = report.sizes[0].trials[3].verification;
    v.max_abs_diff = abs;
    v.max_rel_err = rel;
    v.passed = passed;
    const std::string text = format_summary(report);
    const auto at = text.find("verification: ");
    return at == std::string::npos ? text : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_EQ(line_with(1e-7, 35, true),
            "verification: max abs diff 1e-07 (atol 1e-05), max rel diff 35 where |ref| is tiny: within atol");
  EXPECT_EQ(line_with(3e-3, 5e-5, true),
            "verification: max abs diff 0.003 (atol 1e-05), max rel diff 5e-05 (rtol 0.0001): within rtol");
  EXPECT_EQ(line_with(1e-6, 5e-5, true),
            "verification: max abs diff 1e-06 (atol 1e-05), max rel diff 5e-05 (rtol 0.0001): within atol and rtol");
  EXPECT_EQ(line_with(2e-5, 2e-4, true),
            "verification: max abs diff 2e-05 (atol 1e-05), max rel diff 0.0002 (rtol 0.0001): within atol + rtol x "
            "|ref| element by element");
  EXPECT_EQ(line_with(0.5, 0.3, false),
            "verification: max abs diff 0.5 (atol 1e-05), max rel diff 0.3 (rtol 0.0001): FAILED");
}

// Every seed provider's trials are named, a program's own too, and the JSON
// counts each; a seed stored by an earlier run can sit apart from the rest.
TEST(Summary, EachSeedProvidersTrialsAreNamed) {
  TuneReport report = sample_report();
  report.seeded_by = {"rules", "spec", "last"};
  auto& trials = report.sizes[0].trials;
  trials[0].origin = "last";
  trials[1].origin = "spec";
  trials[2].origin = "spec";
  trials[3].origin = "last";
  const std::string text = format_summary(report);
  EXPECT_NE(text.find("seeds (search.seeds): No.2 to No.3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("seeds from the seed provider 'last': No.1, No.4\n"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(j["sizes"][0]["seeded"], nlohmann::json({{"rules", 0}, {"spec", 2}, {"last", 2}}));
  EXPECT_EQ(j["sizes"][0]["seeds"], 2);

  trials[3].origin = "search";
  EXPECT_NE(format_summary(report).find("seed from the seed provider 'last': No.1\n"), std::string::npos);
}

TEST(Summary, FirstValidConfigBaseline) {
  TuneReport report = sample_report();
  report.sizes[0].baseline_is_spec_default = false;
  report.sizes[0].trials[3].verification.checked = false;
  std::string text = format_summary(report);
  EXPECT_NE(text.find("first valid config: No.1 20.000 us {BM: 64, BN: 64}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("speedup over first valid config: 1.62x\n"), std::string::npos) << text;
  // An unchecked best among checked trials is the reference itself.
  EXPECT_NE(text.find("verification: the best config's outputs are the reference; 1 of 2 other configs matched them"),
            std::string::npos)
      << text;
  for (auto& t : report.sizes[0].trials) t.verification.checked = false;
  text = format_summary(report);
  EXPECT_NE(text.find("verification: not checked (no reference)"), std::string::npos) << text;
}

// An application's spec may give no argument a role (it has no arguments),
// so the summary must not ask for one: the program checks its own results.
TEST(Summary, AnApplicationIsVerifiedByItsProgram) {
  TuneReport report = sample_report();
  report.application = true;
  report.outputs_compared = false;
  for (auto& t : report.sizes[0].trials) t.verification.checked = false;
  const std::string text = format_summary(report);
  EXPECT_NE(text.find("verification: by the program itself (language: command; a run that exits non-zero is a "
                      "crash)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("role out or inout"), std::string::npos) << text;
}

// A build tunekit stopped says so on its line, not with an error line from
// the middle of the log it cut off.
TEST(TrialLine, ABuildStoppedByATimeoutSaysSo) {
  const TrialRecord t = failed_trial(bmbn(1, 1), Status::compile_error,
                                     "the compiler timed out after 5 minutes\nk.cpp:90400:2: error: #error \"bad\"\n");
  EXPECT_EQ(format_trial_line(2, t), "No.2: compile_error, {BM: 1, BN: 1} (the compiler timed out after 5 minutes)");
  const TrialRecord plain = failed_trial(bmbn(1, 1), Status::compile_error, "note: x\nk.cpp:3:1: error: oops\n");
  EXPECT_EQ(format_trial_line(2, plain), "No.2: compile_error, {BM: 1, BN: 1} (k.cpp:3:1: error: oops)");
}

// A confirmed best slower than a baseline measured once says why it is
// named anyway.
TEST(Summary, ASpeedupBelowOneOverAnUnconfirmedBaselineSaysWhy) {
  TuneReport report = sample_report();
  SizeReport& s = report.sizes[0];
  ASSERT_TRUE(s.best && s.baseline && *s.best != *s.baseline);
  s.trials[*s.best].confirmed = true;
  s.trials[*s.baseline].stats.median = s.trials[*s.best].stats.median * 0.99;
  const std::string text = format_summary(report);
  EXPECT_NE(text.find("speedup over default: 0.99x (the default ran faster in its one measurement; the best is named "
                      "among the configs measured again side by side, measure.confirm)\n"),
            std::string::npos)
      << text;
  s.trials[*s.baseline].confirmed = true;
  EXPECT_NE(format_summary(report).find("speedup over default: 0.99x\n"), std::string::npos);
}

// Every trial wrong by a rounding's worth: the summary names the tolerance
// that failed them and how to loosen it; a NaN or a crash among them is no
// rounding, and gets no such word.
TEST(Summary, WrongResultsByFiniteDifferencesNameTheTolerance) {
  TuneReport report;
  SizeReport s;
  for (int bn : {1, 2}) {
    TrialRecord t = failed_trial(bmbn(1, bn), Status::wrong_result, "c: 1 of 9 elements differ");
    t.verification.checked = true;
    t.verification.max_abs_diff = bn * 1e-6;
    s.trials.push_back(t);
  }
  report.sizes = {s};
  const std::string hint =
      "  every one differs from the reference by at most 2e-06 (tolerance: atol 1e-06, rtol 1e-05); if that is "
      "rounding, loosen it: tolerance in the spec, or --atol/--rtol\n";
  EXPECT_NE(format_summary(report).find("none of the 2 trials ran correctly\n" + hint), std::string::npos)
      << format_summary(report);
  report.sizes[0].trials[1].verification.max_abs_diff = INFINITY;
  EXPECT_EQ(format_summary(report).find("every one differs"), std::string::npos);
  report.sizes[0].trials[1] = failed_trial(bmbn(1, 2), Status::crash, "signal 11");
  EXPECT_EQ(format_summary(report).find("every one differs"), std::string::npos);
}

TEST(Summary, NoValidConfigAndSeveralSizes) {
  TuneReport report;
  report.db = "a.db";
  SizeReport bad;
  bad.size = {{"N", Value(1)}};
  bad.trials.push_back(failed_trial(bmbn(1, 1), Status::crash, "signal 11"));
  bad.trials.push_back(failed_trial(bmbn(1, 2), Status::compile_error, "oops"));
  SizeReport good;
  good.size = {{"N", Value(2)}};
  good.trials.push_back(ok_trial(bmbn(1, 1), 3.0));
  good.best = 0;
  good.baseline = 0;
  good.baseline_is_spec_default = true;
  report.sizes = {bad, good};
  std::string text = format_summary(report);
  EXPECT_NE(text.find("size {N: 1}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("size {N: 2}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("no valid config"), std::string::npos) << text;
  EXPECT_NE(text.find("2 trials: 1 compile_error, 1 crash\n"), std::string::npos) << text;
  EXPECT_NE(text.find("best: No.1 3.000 us {BM: 1, BN: 1}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("speedup over default: 1.00x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("all sizes: 3 trials: 1 ok, 1 compile_error, 1 crash\n"), std::string::npos) << text;
  EXPECT_NE(text.find("results: a.db\n"), std::string::npos) << text;
}

// CCCL's base variant, measured ok at every size, is what one config for all
// sizes is compared with, as each size's speedups are: the default's
// speedups beside it. Sizes: the default 20 and 40 us, the base 10 and 20,
// BM 2 is 5 and 10 us: 2x over the base, 4x over the default.
namespace {

TuneReport two_sizes_with_a_base() {
  TuneReport report;
  for (int n : {1, 2}) {
    SizeReport s;
    s.size = {{"N", Value(n)}};
    s.trials.push_back(ok_trial(bmbn(1, 1), 20.0 * n));
    s.trials.push_back(ok_trial(bmbn(2, 2), 5.0 * n));
    TrialRecord base = ok_trial(Config({{"TUNE_BASE", Value(1)}}), 10.0 * n);
    base.origin = std::string(kOriginBase);
    s.trials.push_back(base);
    for (auto& t : s.trials) t.size = s.size;
    s.best = 1;
    s.baseline = 0;
    s.baseline_is_spec_default = true;
    s.base = 2;
    report.sizes.push_back(s);
  }
  return report;
}

}  // namespace

TEST(Summary, OneConfigForAllSizesIsComparedWithCcclsBase) {
  TuneReport report = two_sizes_with_a_base();
  std::string text = format_summary(report);
  EXPECT_NE(text.find("one config for all sizes: {BM: 2, BN: 2} (geomean speedup over CUB's base policy 2.00x, over "
                      "default 4.00x)\n"
                      "  size {N: 1}: 5.000 us, 2.00x over CUB's base, 4.00x over default\n"
                      "  size {N: 2}: 10.000 us, 2.00x over CUB's base, 4.00x over default\n"),
            std::string::npos)
      << text;

  // No spec default (the first valid config is each size's baseline): the
  // base alone.
  for (auto& s : report.sizes) s.baseline_is_spec_default = false;
  text = format_summary(report);
  EXPECT_NE(text.find("one config for all sizes: {BM: 2, BN: 2} (geomean speedup over CUB's base policy 2.00x)\n"
                      "  size {N: 1}: 5.000 us, 2.00x over CUB's base\n"),
            std::string::npos)
      << text;

  // A base that failed at a size leaves the default's comparison.
  report = two_sizes_with_a_base();
  report.sizes[1].trials[2].status = Status::launch_error;
  text = format_summary(report);
  EXPECT_NE(text.find("one config for all sizes: {BM: 2, BN: 2} (geomean speedup over default 4.00x)\n"
                      "  size {N: 1}: 5.000 us, 4.00x\n"),
            std::string::npos)
      << text;
}

TEST(Summary, EmptySizeHasNoSizeHeader) {
  TuneReport report;
  SizeReport s;
  s.trials.push_back(ok_trial(bmbn(1, 1), 3.0));
  s.best = 0;
  report.sizes.push_back(s);
  std::string text = format_summary(report);
  EXPECT_EQ(text.find("size "), std::string::npos) << text;
  EXPECT_EQ(text.rfind("No.1: 3.000 us, {BM: 1, BN: 1}\n", 0), 0u) << text;
}

TEST(Summary, PicksFastestOkTrialWhenBestUnset) {
  TuneReport report;
  SizeReport s;
  s.trials.push_back(ok_trial(bmbn(1, 1), 5.0));
  s.trials.push_back(failed_trial(bmbn(1, 2), Status::crash, ""));
  s.trials.push_back(ok_trial(bmbn(2, 2), 4.0));
  s.best = 99;  // out of range: ignored
  report.sizes.push_back(s);
  std::string text = format_summary(report);
  EXPECT_NE(text.find("best: No.3 4.000 us {BM: 2, BN: 2}\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("speedup"), std::string::npos) << text;
}

// A best the caller left unset is named as the tune names it: by the
// objective (here cost, which favours large BM), among the confirmed trials
// where any was confirmed. Under such an objective the tune measured every
// config in full, and the summary says so.
TEST(Summary, ABestLeftUnsetIsNamedAsTheTuneNamesIt) {
  TuneReport report;
  report.metrics = {{"cost", Expression::parse("time_us / BM ** 2")}};
  report.objective = Objective{"cost", false, {}};
  SizeReport s;
  s.trials.push_back(ok_trial(bmbn(1, 1), 1.0));    // the fastest; cost 1
  s.trials.push_back(ok_trial(bmbn(8, 1), 10.0));   // cost 0.156, confirmed
  s.trials.push_back(ok_trial(bmbn(16, 1), 20.0));  // cost 0.078, measured once
  s.trials[0].confirmed = s.trials[1].confirmed = true;
  report.sizes.push_back(s);
  std::string text = format_summary(report);
  EXPECT_NE(text.find("best: No.2 10.000 us {BM: 8, BN: 1}, cost 0.15625\n"), std::string::npos) << text;
  EXPECT_NE(text.find("early stop: off, every config measured in full: the early stop compares times"),
            std::string::npos)
      << text;
  report.sizes[0].trials[0].confirmed = report.sizes[0].trials[1].confirmed = false;
  text = format_summary(report);
  EXPECT_NE(text.find("best: No.3 20.000 us {BM: 16, BN: 1}, cost 0.078125\n"), std::string::npos) << text;
}

// The T4 results file: what Kernel Tuner's store_output_file writes for each
// trial, with the problem size and tunekit's status beyond the schema.
TEST(T4, EachTrialAsKernelTunerWritesIt) {
  TuneReport report = sample_report();
  report.metrics = {{"gpoints", Expression::parse("M * N / time_s / 1e9")}};
  report.objective = Objective{"gpoints", true, {}};
  TrialRecord cut = ok_trial(bmbn(32, 32), 80.0);
  cut.status = Status::slower;
  report.sizes[0].trials.push_back(cut);
  TrialRecord killed = failed_trial(bmbn(32, 64), Status::crash, "worker killed from outside");
  killed.fault = Fault::environment;
  report.sizes[0].trials.push_back(killed);
  report.sizes[0].trials.push_back(failed_trial(bmbn(16, 16), Status::timeout, "over 10 s"));

  for (auto& t : report.sizes[0].trials) t.machine = R"({"device": "cpu", "cores": 2})";
  report.sizes[0].trials[0].eval_time = Seconds(0.25);
  report.sizes[0].trials[0].verify_time = Seconds(0.05);
  const auto j = nlohmann::json::parse(format_t4(report));
  EXPECT_EQ(j["schema_version"], "1.0.0");
  EXPECT_EQ(j["tunekit_machine"], nlohmann::json({{"device", "cpu"}, {"cores", 2}}));
  const auto& results = j["results"];
  // The environment's failure says nothing about its config: left out.
  ASSERT_EQ(results.size(), 6u);
  std::vector<std::string> invalidity;
  for (const auto& r : results) invalidity.push_back(r["invalidity"]);
  EXPECT_EQ(invalidity,
            (std::vector<std::string>{"correct", "compile", "correctness", "correct", "correct", "timeout"}));

  const auto& first = results[0];
  EXPECT_EQ(first["configuration"], nlohmann::json({{"BM", 64}, {"BN", 64}}));
  EXPECT_DOUBLE_EQ(first["times"]["compilation"].get<double>(), 500.0);  // ms
  EXPECT_DOUBLE_EQ(first["times"]["benchmark"].get<double>(), 200.0);    // the evaluation less the check
  EXPECT_DOUBLE_EQ(first["times"]["validation"].get<double>(), 50.0);
  ASSERT_EQ(first["times"]["runtimes"].size(), 3u);
  EXPECT_DOUBLE_EQ(first["times"]["runtimes"][1].get<double>(), 0.02);  // 20 us
  EXPECT_EQ(first["correctness"], 1);
  EXPECT_EQ(first["objectives"], nlohmann::json::array({"gpoints"}));
  EXPECT_EQ(first["problem_size"], nlohmann::json({{"M", 512}, {"N", 256}}));
  EXPECT_EQ(first["tunekit_status"], "ok");
  const auto& m = first["measurements"];
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0]["name"], "time");
  EXPECT_DOUBLE_EQ(m[0]["value"].get<double>(), 0.02);
  EXPECT_EQ(m[0]["unit"], "ms");
  EXPECT_EQ(m[1]["name"], "gpoints");
  EXPECT_DOUBLE_EQ(m[1]["value"].get<double>(), 512.0 * 256 / 20e-6 / 1e9);

  EXPECT_EQ(results[1]["measurements"].size(), 0u);  // nothing measured
  EXPECT_EQ(results[2]["correctness"], 0);           // wrong result
  // Cut short: a real, partial time, and tunekit's status says so.
  EXPECT_EQ(results[4]["tunekit_status"], "slower");
  EXPECT_DOUBLE_EQ(results[4]["measurements"][0]["value"].get<double>(), 0.08);
  EXPECT_EQ(results[5]["tunekit_status"], "timeout");
}

// msKPP's table is one file per run: a second run within the same second
// (a --where rerun) takes the next free name instead of replacing it.
TEST(Writers, AResultsTableNeverReplacesAnEarlierRunsTable) {
  TempDir dir;
  const WriterInfo& mskpp = writers().get("mskpp");
  const OutputContext context{dir.path(), std::chrono::system_clock::now(), ""};
  const fs::path first = mskpp.default_file(TuneReport{}, context);
  EXPECT_EQ(first.parent_path(), dir.path());
  EXPECT_EQ(first.filename().string().rfind("TUNEKIT_RESULTS_", 0), 0u) << first;
  std::ofstream(first) << "No.,Config,Duration(us),Args\n";
  const fs::path second = mskpp.default_file(TuneReport{}, context);
  EXPECT_EQ(second.string(), first.string().substr(0, first.string().size() - 4) + "_2.csv");
}

// `csv: true` in a spec plans the writer's default file, and `json: false`
// leaves out a writer that writes by default.
TEST(Writers, AWriterSwitchedOnOrOffInTheSpecIsPlannedSo) {
  TempDir dir;
  OutputSettings settings;
  settings.files["t4"] = fs::path();
  settings.off.insert("json");
  const TuneReport report = sample_report();
  const OutputContext context{dir.path(), std::chrono::system_clock::now(), ""};
  std::map<std::string, fs::path> planned;
  for (const auto& o : plan_outputs(report, settings, context, {})) planned[o.writer->name] = o.file;
  EXPECT_EQ(planned.count("json"), 0u);
  ASSERT_EQ(planned.count("t4"), 1u);
  EXPECT_EQ(planned["t4"], writers().get("t4").default_file(report, context));
  EXPECT_FALSE(planned["t4"].empty());
  EXPECT_EQ(planned.count("csv"), 1u);  // by default, as before
}

// A file that cannot be written (here its folder is a file; a full disk
// does the same) costs neither the other files nor the console summary,
// and its failure is raised after them.
TEST(Writers, AFileThatCannotBeWrittenCostsNeitherTheOthersNorTheConsole) {
  TempDir dir;
  std::ofstream(dir.path() / "not_a_folder") << "x";
  TuneReport report = sample_report();
  report.files.clear();
  OutputSettings settings;
  settings.files["csv"] = dir.path() / "not_a_folder" / "m.csv";
  settings.files["json"] = dir.path() / "m.json";
  const auto planned =
      plan_outputs(report, settings, {dir.path(), std::chrono::system_clock::now(), ""}, {"csv", "console", "json"});
  std::ostringstream console;
  try {
    write_outputs(report, planned, console);
    ADD_FAILURE() << "no error for the csv file";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("not_a_folder"), std::string::npos) << e.what();
  }
  EXPECT_NE(console.str().find("best: No.4"), std::string::npos) << console.str();
  EXPECT_TRUE(fs::exists(dir.path() / "m.json"));
  EXPECT_NE(console.str().find("m.json"), std::string::npos) << console.str();
  EXPECT_EQ(console.str().find("m.csv"), std::string::npos) << console.str();
}

// Several files that cannot be written make one error with a line for
// each: the caller prefixes the first with "error: ", and the others carry
// their own, so that every line reads alike.
TEST(Writers, SeveralFilesThatCannotBeWrittenAreOneErrorNamingEach) {
  TempDir dir;
  std::ofstream(dir.path() / "not_a_folder") << "x";
  TuneReport report = sample_report();
  OutputSettings settings;
  settings.files["csv"] = dir.path() / "not_a_folder" / "m.csv";
  settings.files["json"] = dir.path() / "not_a_folder" / "m.json";
  const auto planned =
      plan_outputs(report, settings, {dir.path(), std::chrono::system_clock::now(), ""}, {"csv", "console", "json"});
  std::ostringstream console;
  try {
    write_outputs(report, planned, console);
    ADD_FAILURE() << "no error for the two files";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const auto second = what.find("\nerror: ");
    ASSERT_NE(second, std::string::npos) << what;
    EXPECT_EQ(what.find('\n', second + 1), std::string::npos) << what;  // a line for each file, no more
    EXPECT_NE(what.substr(0, second).find("m.csv"), std::string::npos) << what;
    EXPECT_NE(what.find("m.json", second), std::string::npos) << what;
  }
}

// A write cut short (a full disk; here a file size limit) leaves no part
// of the file behind.
TEST(Writers, AWriteCutShortLeavesNoPartOfTheFile) {
  TempDir dir;
  const fs::path file = dir.path() / "big.json";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit small{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &small);
    try {
      write_file_atomically(file, std::string(1 << 20, 'x'));
      ::_exit(1);
    } catch (const std::exception& e) {
      ::_exit(std::string(e.what()).find("big.json") != std::string::npos ? 0 : 2);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error; 2: the error does not name the file";
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(fs::is_empty(file.parent_path()));  // the part written is not left behind
}

// An output is written beside its path and renamed over it: a device would
// become a regular file, and a link would stop being one.
TEST(Writers, ADeviceIsRefusedAndALinkIsWrittenThrough) {
  const auto why = unsafe_output("/dev/null");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'/dev/null' is not a regular file"), std::string::npos) << *why;
  EXPECT_THROW(write_file_atomically("/dev/null", "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  TempDir dir;
  write_file_atomically(dir.path() / "target.json", "old\n");
  fs::create_symlink("target.json", dir.path() / "link.json");
  EXPECT_FALSE(unsafe_output(dir.path() / "link.json"));
  write_file_atomically(dir.path() / "link.json", "new\n");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  EXPECT_EQ(slurp(dir.path() / "target.json"), "new\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 2);
  // A link to a file not written yet: the file is made, the link stays.
  fs::create_symlink("later.json", dir.path() / "ahead.json");
  write_file_atomically(dir.path() / "ahead.json", "made\n");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "ahead.json"));
  EXPECT_EQ(slurp(dir.path() / "later.json"), "made\n");
}
