#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/online.hpp"

using namespace tunekit;
using online::Params;
namespace fs = std::filesystem;

TEST(Online, TunesOnFirstSightThenReadsTheFile) {
  const auto dir = tunekit::testing::fresh_dir();
  int calls = 0;
  auto tune = [&](const online::Size& s) {
    ++calls;
    return std::pair<Params, double>{{{"BLOCK", s.at("N") / 4}}, 1.5};
  };
  {
    online::Tuner t(dir / "p.json");
    auto a = t.get({{"N", 64}}, tune);
    EXPECT_EQ(a.source, online::Choice::Source::tuned);
    EXPECT_EQ(a.params.at("BLOCK"), 16);
    EXPECT_EQ(t.get({{"N", 64}}, tune).source, online::Choice::Source::stored);
    EXPECT_EQ(calls, 1);
  }
  online::Tuner again(dir / "p.json");
  auto b = again.get({{"N", 64}}, tune);
  EXPECT_EQ(b.source, online::Choice::Source::stored);
  EXPECT_EQ(b.params.at("BLOCK"), 16);
  EXPECT_EQ(calls, 1);
}

TEST(Online, LookupOnlyTakesTheNearestTunedSize) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "p.json", R"({"kernel": "k", "entries": [
    {"size": {"M": 16, "N": 1024}, "config": {"BM": 16}, "time_us": 10},
    {"size": {"M": 4096, "N": 4096}, "config": {"BM": 64}, "time_us": null}]})");
  online::Tuner t(dir / "p.json", online::Mode::lookup_only);
  EXPECT_EQ(t.find({{"M", 16}, {"N", 1024}})->at("BM"), 16);
  auto near = t.get({{"M", 2048}, {"N", 8192}}, nullptr);
  EXPECT_EQ(near.source, online::Choice::Source::nearest);
  EXPECT_EQ(near.params.at("BM"), 64);
  EXPECT_EQ(t.get({{"M", 8}, {"N", 900}}, nullptr).params.at("BM"), 16);
  // A size that names other sizes is the caller's error, not some entry's
  // config (every distance would be 1, and the first entry would win).
  for (const online::Size& wrong : {online::Size{{"N", 256}}, online::Size{}, online::Size{{"M", 16}, {"K", 1024}}}) {
    EXPECT_THROW(t.get(wrong, nullptr), std::invalid_argument);
    EXPECT_THROW(t.nearest(wrong), std::invalid_argument);
  }
  try {
    t.get({{"m", 16}, {"N", 1024}}, nullptr);
    ADD_FAILURE() << "a misnamed size was served";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a size that names N, m, but the sizes of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("name M, N"), std::string::npos) << e.what();
  }
  // Tuning on first sight: a misnamed size is not tuned and saved.
  online::Tuner tuning(dir / "p.json");
  int calls = 0;
  auto tune = [&](const online::Size&) {
    ++calls;
    return std::pair<Params, double>{{{"BM", 8}}, 1.0};
  };
  EXPECT_THROW(tuning.get({{"MM", 16}, {"N", 1024}}, tune), std::invalid_argument);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(tuning.size(), 2u);
}

TEST(Online, ExampleProgramTunesOnceAcrossRuns) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string exe = std::string(TUNEKIT_BINARY_DIR) + "/bin/online_example";
  const std::string file = (dir / "tuned.json").string();
  auto first = detail::run_process({exe, file, "100000", "300000"}, std::chrono::seconds(120));
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("N=100000: "), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("(tuned now)"), std::string::npos) << first.output;
  auto second = detail::run_process({exe, file, "300000", "100000"}, std::chrono::seconds(120));
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("tuned now"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("(from the file)"), std::string::npos) << second.output;
}

TEST(Online, KeepsTypedValuesAndTheFilesOtherFieldsWhenItSaves) {
  // As `tunekit emit --json` writes it: a float and a string parameter, and
  // fields besides the entries. Tuning a new size saved the file with F
  // truncated to 1, S deleted and the other fields gone.
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "p.json", R"({
  "kernel": "k",
  "selection": "per-size",
  "size_order": ["N"],
  "untuned_size_rule": "the rule",
  "entries": [{"size": {"N": 64}, "config": {"B": 16, "F": 1.25, "S": "row"}, "time_us": 3.5, "note": "kept"}]
})");
  {
    online::Tuner t(dir / "p.json");
    const auto stored = t.get({{"N", 64}}, nullptr).params;
    ASSERT_EQ(stored.size(), 3u);
    EXPECT_EQ(stored.at("B"), 16);
    EXPECT_TRUE(stored.at("F").is_float());
    EXPECT_EQ(stored.at("F"), 1.25);
    EXPECT_EQ(stored.at("S").as_string(), "row");
    EXPECT_THROW((void)stored.at("S").as_int(), std::runtime_error);  // not read as a number
    auto tuned = t.get({{"N", 128}}, [](const online::Size&) {
      return std::pair<Params, double>{{{"B", 32}, {"F", 0.5}, {"S", "col"}}, 2.0};
    });
    EXPECT_EQ(tuned.source, online::Choice::Source::tuned);
  }
  const auto j = nlohmann::ordered_json::parse(tunekit::testing::read_file(dir / "p.json"));
  EXPECT_EQ(j["selection"], "per-size");
  EXPECT_EQ(j["size_order"], nlohmann::ordered_json::array({"N"}));
  EXPECT_EQ(j["untuned_size_rule"], "the rule");
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][0]["config"]["F"], 1.25);
  EXPECT_TRUE(j["entries"][0]["config"]["F"].is_number_float());
  EXPECT_EQ(j["entries"][0]["config"]["S"], "row");
  EXPECT_EQ(j["entries"][0]["note"], "kept");
  EXPECT_EQ(j["entries"][1]["config"]["F"], 0.5);
  EXPECT_EQ(j["entries"][1]["config"]["S"], "col");
  online::Tuner again(dir / "p.json", online::Mode::lookup_only);
  EXPECT_EQ(again.find({{"N", 128}})->at("S").as_string(), "col");
}

TEST(Online, AMalformedFileIsAFileErrorNamingItsPlace) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "bad.json", "{\"entries\": [\n  {\"size\": {\"N\": 64}, oops}\n]}\n");
  try {
    online::Tuner t(dir / "bad.json");
    FAIL() << "no error";
  } catch (const online::FileError& e) {
    EXPECT_EQ(e.file(), dir / "bad.json");
    EXPECT_EQ(e.line(), 2);
    EXPECT_GT(e.column(), 20);
    EXPECT_NE(std::string(e.what()).find((dir / "bad.json").string() + ":2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
  // Valid JSON, not the format: each says what was expected.
  auto message = [&](const std::string& text) -> std::string {
    tunekit::testing::write_file(dir / "odd.json", text);
    try {
      online::Tuner t(dir / "odd.json");
    } catch (const online::FileError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("[1, 2]").find("expected an object with an \"entries\" array"), std::string::npos);
  EXPECT_NE(message(R"({"entries": [{"size": {"N": "2.5"}, "config": {}}]})")
                .find("entry 1: size N is \"2.5\"; expected a 64-bit integer or a float"),
            std::string::npos);
  EXPECT_NE(message(R"({"entries": [{"size": {"N": 2}, "config": {"B": [1]}}]})").find("parameter B is [1]"),
            std::string::npos);
}

TEST(Online, AFileWithChecksButNoTreesIsRefusedRatherThanIgnored) {
  // An older tunekit's file: the constraints as text only. The nearest
  // config could break them, so lookup says so instead of returning it.
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "old.json", R"({"kernel": "kp", "checks": {"constraints": ["T <= n"],
    "unchecked": [], "machine": {}}, "entries": [{"size": {"n": 4}, "config": {"T": 4}, "time_us": 1}]})");
  online::Tuner t(dir / "old.json", online::Mode::lookup_only);
  EXPECT_EQ(t.get({{"n", 4}}, nullptr).params.at("T"), 4);  // a tuned size needs no rule
  try {
    (void)t.get({{"n", 2}}, nullptr);
    FAIL() << "no error";
  } catch (const online::FileError& e) {
    EXPECT_NE(std::string(e.what()).find("emit the file again"), std::string::npos) << e.what();
  }
}

TEST(Online, ExampleProgramRefusesBadArgumentsAndFilesWithAMessage) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string exe = std::string(TUNEKIT_BINARY_DIR) + "/bin/online_example";
  const std::string file = (dir / "tuned.json").string();
  // A negative length aborted (std::length_error); 'abc' tuned and saved N = 0.
  for (const char* bad : {"-5", "abc", "0", "12x", "99999999999999999999"}) {
    auto r = detail::run_process({exe, file, bad}, std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find(std::string("the length '") + bad + "' is not an integer from 1 to"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(file)) << bad << ": nothing is tuned or saved";
  }
  // Malformed JSON aborted with an uncaught parse_error.
  tunekit::testing::write_file(dir / "tuned.json", "{\"entries\": [\n");
  auto r = detail::run_process({exe, file, "1000"}, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(file + ":2:"), std::string::npos) << r.output;
  EXPECT_EQ(tunekit::testing::read_file(dir / "tuned.json"), "{\"entries\": [\n") << "left as it was";
}

// Processes tuning into one file at once: each saves under a lock, after
// reading again what the others saved, so every size tuned is kept (6
// processes of 3 sizes each kept 8 of 18 entries, and one failed to rename
// the temporary file another had just renamed).
TEST(Online, ProcessesTuningIntoOneFileKeepEveryEntry) {
  const auto dir = tunekit::testing::fresh_dir();
  const auto file = dir / "shared.json";
  constexpr int kProcesses = 6, kSizes = 3;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int status = 0;
      try {
        online::Tuner t(file);
        for (int s = 0; s < kSizes; ++s)
          t.get({{"N", 1000 * (p + 1) + s}}, [](const online::Size& size) {
            return std::pair<Params, double>{{{"BLOCK", size.at("N") % 7}}, 1.0};
          });
      } catch (const std::exception&) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(child);
  }
  for (pid_t c : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(c, &status, 0), c);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  online::Tuner after(file, online::Mode::lookup_only);
  EXPECT_EQ(after.size(), static_cast<std::size_t>(kProcesses * kSizes));
  for (int p = 0; p < kProcesses; ++p)
    for (int s = 0; s < kSizes; ++s) EXPECT_TRUE(after.find({{"N", 1000 * (p + 1) + s}})) << p << " " << s;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().extension(), entry.path() == file ? ".json" : ".lock") << entry.path();
}

// A size axis of floats (a sparsity), as `tunekit emit --json` writes one:
// read (it was refused as "expected a 64-bit integer"), looked up by value
// (0.5 and 0.50 are one size), tuned and saved as a float; a float for an
// axis the file holds as integers is the caller's error.
TEST(Online, AFloatSizeAxisIsReadTunedAndSaved) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "p.json", R"({"kernel": "k", "size_order": ["M", "S"], "entries": [
    {"size": {"M": 64, "S": 0.5}, "config": {"T": 1}, "time_us": 10},
    {"size": {"M": 64, "S": 0.25}, "config": {"T": 2}, "time_us": 10}]})");
  std::vector<double> tuned_at;
  auto tune = [&](const online::Size& s) {
    tuned_at.push_back(s.at("S").as_float());
    EXPECT_THROW((void)static_cast<std::int64_t>(s.at("S")), std::runtime_error);  // not read as an integer
    return std::pair<Params, double>{{{"T", s.at("M") / 16}}, 1.0};
  };
  {
    online::Tuner t(dir / "p.json");
    EXPECT_EQ(t.get({{"M", 64}, {"S", 0.50}}, tune).params.at("T"), 1);
    EXPECT_EQ(t.nearest({{"M", 64}, {"S", 0.3}})->at("T"), 2);
    const auto c = t.get({{"M", 64}, {"S", 0.75}}, tune);
    EXPECT_EQ(c.source, online::Choice::Source::tuned);
    EXPECT_EQ(c.params.at("T"), 4);
    try {
      (void)t.get({{"M", 64.5}, {"S", 0.5}}, tune);
      ADD_FAILURE() << "a float for an integer axis was served";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("size M is 64.5, but " + (dir / "p.json").string() + " holds M as integers"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(tuned_at, std::vector<double>{0.75});
  const auto saved = nlohmann::json::parse(tunekit::testing::read_file(dir / "p.json"));
  EXPECT_TRUE(saved["entries"][2]["size"]["S"].is_number_float()) << saved.dump();
  online::Tuner again(dir / "p.json", online::Mode::lookup_only);
  EXPECT_EQ(again.find({{"M", 64}, {"S", 0.75}})->at("T"), 4);
}
