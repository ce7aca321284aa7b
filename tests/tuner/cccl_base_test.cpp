// CCCL's base variant: a %RANGE% source with a `#if TUNE_BASE` branch is
// also built with TUNE_BASE=1 and none of its defines (CUB's own policy),
// measured, verified, stored and reported as the baseline of the speedups.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"
#include "tunekit/report.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::write_file;

namespace {

// The base branch appends a line to MARKER on each call, so the file shows
// that the base was built from that branch and run, and how often; the
// tuned branch writes nothing. Both compute the same outputs.
std::string kernel_source(const std::filesystem::path& marker, const std::string& base_body = "") {
  return "// %RANGE% TUNE_ITEMS items 1:2:1\n"
         "#include <cstdio>\n"
         "#if TUNE_BASE\n"
         "#define ITEMS 4\n" +
         base_body +
         "#else\n"
         "#define ITEMS TUNE_ITEMS\n"
         "#endif\n"
         "extern \"C\" void scale(const float* x, float* y, int n) {\n"
         "#if TUNE_BASE\n"
         "  if (std::FILE* f = std::fopen(\"" +
         marker.string() +
         "\", \"a\")) { std::fputs(\"base\\n\", f); std::fclose(f); }\n"
         "#endif\n"
         "  for (int i = 0; i < n; i += ITEMS)\n"
         "    for (int k = i; k < i + ITEMS && k < n; ++k) y[k] = 2 * x[k];\n"
         "}\n";
}

constexpr const char* kSpec = R"(name: cccl_base
kernel:
  source: scale.cpp
  entry: scale
  flags: [-O1]
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 1024}
default: {TUNE_ITEMS: 1}
tolerance: {atol: 1e-6, rtol: 0}
measure: {warmup: 1ms, min_samples: 3, max_samples: 5, max_time: 50ms, cache: hot, timeout: 60s, early_stop: off}
)";

Spec spec_in(const std::filesystem::path& dir, const std::string& source) {
  write_file(dir / "scale.cpp", source);
  write_file(dir / "spec.yaml", kSpec);
  return load_spec(dir / "spec.yaml");
}

std::size_t lines_in(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) return 0;
  const std::string text = read_file(file);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

const TrialRecord* base_of(const SizeReport& s) { return s.base ? &s.trials[*s.base] : nullptr; }

}  // namespace

TEST(CcclBase, TheBaseIsMeasuredVerifiedStoredReportedAndResumed) {
  const auto dir = fresh_dir();
  const auto marker = dir / "base_ran.txt";
  const Spec spec = spec_in(dir, kernel_source(marker));
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport first = tune(spec, opt);
  ASSERT_EQ(first.sizes.size(), 1u);
  const SizeReport& s = first.sizes[0];
  // Both configs, and the base beside them.
  ASSERT_EQ(s.trials.size(), 3u);
  const TrialRecord* base = base_of(s);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->origin, kOriginBase);
  EXPECT_EQ(base->config, Config({{"TUNE_BASE", Value(1)}}));
  EXPECT_EQ(base->status, Status::ok) << base->error;
  // Verified against the default config's outputs, as every config is.
  EXPECT_TRUE(base->verification.checked);
  // Built from the TUNE_BASE branch and run: only that branch writes.
  const std::size_t calls = lines_in(marker);
  EXPECT_GT(calls, 0u);
  // Never the best: it is no config of the space.
  ASSERT_TRUE(s.best && s.baseline);
  EXPECT_NE(*s.best, *s.base);
  EXPECT_EQ(s.trials[*s.baseline].config, Config({{"TUNE_ITEMS", Value(1)}}));

  // Stored with its origin.
  Store store(first.db);
  const auto stored = store.find(first.spec_hash, first.device, s.size, base->config);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->origin, kOriginBase);
  EXPECT_EQ(stored->status, Status::ok);

  // Reported as the baseline of the speedups, the default's beside it.
  const std::string summary = format_summary(first);
  EXPECT_NE(summary.find("base (CUB's own policy: the source built with TUNE_BASE=1): No.3"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("speedup over CUB's base policy: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("speedup over default: "), std::string::npos) << summary;
  const auto json = nlohmann::json::parse(format_json(first));
  const auto& size = json["sizes"][0];
  EXPECT_EQ(size["base"]["no"], 3);
  EXPECT_EQ(size["base"]["config"]["TUNE_BASE"], 1);
  EXPECT_TRUE(size["speedup_over_base"].is_number()) << size.dump();
  EXPECT_EQ(size["trials"][2]["origin"], "base");

  // A rerun resumes it: the base is not built or run again.
  const TuneReport second = tune(spec, opt);
  EXPECT_EQ(second.resumed, 3u);
  EXPECT_EQ(second.measure.count(), 0.0);
  EXPECT_EQ(lines_in(marker), calls);
  ASSERT_TRUE(base_of(second.sizes[0]));
  EXPECT_EQ(base_of(second.sizes[0])->id, base->id);
}

// A source without a TUNE_BASE branch runs as before: its configs only.
TEST(CcclBase, ASourceWithoutABaseBranchMeasuresNoBase) {
  const auto dir = fresh_dir();
  std::string source = kernel_source(dir / "unused.txt");
  for (std::size_t at; (at = source.find("TUNE_BASE")) != std::string::npos;) source.replace(at, 9, "0");
  const Spec spec = spec_in(dir, source);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  EXPECT_EQ(report.sizes[0].trials.size(), 2u);
  EXPECT_FALSE(report.sizes[0].base);
  EXPECT_EQ(format_summary(report).find("CUB's"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(format_json(report))["sizes"][0]["base"].is_null());
}

// A base that does not compile is its trial's recorded failure, with the
// compiler's reason: the tune goes on, names its best, and its speedups
// are over the default, with a warning.
TEST(CcclBase, ABaseThatDoesNotCompileIsARecordedFailure) {
  const auto dir = fresh_dir();
  const Spec spec = spec_in(dir, kernel_source(dir / "base_ran.txt", "this is not C++;\n"));
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  EXPECT_TRUE(s.error.empty()) << s.error;
  const TrialRecord* base = base_of(s);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->status, Status::compile_error);
  EXPECT_NE(base->error.find("error"), std::string::npos) << base->error;
  ASSERT_TRUE(s.best);
  EXPECT_EQ(s.trials[*s.best].status, Status::ok);
  const auto stored = Store(report.db).find(report.spec_hash, report.device, s.size, base->config);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->status, Status::compile_error);
  EXPECT_EQ(stored->origin, kOriginBase);
  bool warned = false;
  for (const auto& w : report.warnings)
    warned = warned || (w.find("CUB's base policy") != std::string::npos &&
                        w.find("speedups are over the default config instead") != std::string::npos);
  EXPECT_TRUE(warned) << ::testing::PrintToString(report.warnings);
  const std::string summary = format_summary(report);
  EXPECT_EQ(summary.find("speedup over CUB's base policy"), std::string::npos) << summary;
  EXPECT_NE(summary.find("speedup over default: "), std::string::npos) << summary;
  EXPECT_TRUE(nlohmann::json::parse(format_json(report))["sizes"][0]["speedup_over_base"].is_null());
}

// An application's build command may name a parameter, which the base has
// none of: that is the base's recorded failure, with the reason, and the
// tune goes on.
TEST(CcclBase, ABaseWhoseBuildNamesAParameterIsARecordedFailure) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "// %RANGE% TUNE_X x 1:2:1\n#include <cstdio>\nint main() {\n#if TUNE_BASE\n  std::puts(\"time: 5\");\n"
             "#else\n  std::printf(\"time: %d\\n\", TUNE_X);\n#endif\n}\n");
  write_file(dir / "build.sh", "c++ -x c++ \"$1\" -o \"$2\"\n");
  write_file(dir / "app.yaml", R"(name: app_base
kernel: {source: k.cpp, language: command}
application:
  build: [bash, build.sh, "{source}", "{binary}", "{TUNE_X}"]
  run: ["{binary}"]
  time: {regex: 'time: ([0-9.]+)', unit: us}
measure: {min_samples: 2, max_samples: 3, max_time: 1s}
)");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(load_spec(dir / "app.yaml"), opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  const TrialRecord* base = base_of(s);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->status, Status::compile_error);
  EXPECT_NE(base->error.find("{TUNE_X}"), std::string::npos) << base->error;
  ASSERT_TRUE(s.best);
  EXPECT_EQ(s.trials[*s.best].config, Config({{"TUNE_X", Value(1)}}));
}

// An argument (as a CUDA launch) that reads a parameter has no value for the
// base: its recorded launch_error says so and names `base:`. With `base:`,
// the base runs with CUB's own value there, built with TUNE_BASE alone.
TEST(CcclBase, ABaseWhoseArgumentReadsAParameterTakesItsValueFromBase) {
  const auto dir = fresh_dir();
  const auto marker = dir / "base_ran.txt";
  write_file(dir / "scale.cpp",
             "// %RANGE% TUNE_ITEMS items 1:2:1\n"
             "#include <cstdio>\n"
             "#if TUNE_BASE && defined(TUNE_ITEMS)\n"
             "#error the base is built with a %RANGE% define\n"
             "#endif\n"
             "extern \"C\" void scale(const float* x, float* y, int n, int items) {\n"
             "#if TUNE_BASE\n"
             "  if (std::FILE* f = std::fopen(\"" +
                 marker.string() +
                 "\", \"a\")) { std::fprintf(f, \"base %d\\n\", items); std::fclose(f); }\n"
                 "#endif\n"
                 "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n"
                 "}\n");
  std::string spec_text = kSpec;
  spec_text.replace(spec_text.find("sizes:"), 0, "  - {name: items, type: i32, value: TUNE_ITEMS}\n");
  write_file(dir / "spec.yaml", spec_text);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport without = tune(load_spec(dir / "spec.yaml"), opt);
  ASSERT_EQ(without.sizes.size(), 1u);
  const TrialRecord* failed = base_of(without.sizes[0]);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->status, Status::launch_error);
  EXPECT_NE(failed->error.find("unknown name 'TUNE_ITEMS'"), std::string::npos) << failed->error;
  EXPECT_NE(failed->error.find("the spec's 'base:' gives (none)"), std::string::npos) << failed->error;
  EXPECT_FALSE(std::filesystem::exists(marker));

  write_file(dir / "spec.yaml", spec_text + "base: {TUNE_ITEMS: 4}\n");
  const TuneReport with = tune(load_spec(dir / "spec.yaml"), opt);
  ASSERT_EQ(with.sizes.size(), 1u);
  const TrialRecord* base = base_of(with.sizes[0]);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->status, Status::ok) << base->error;
  EXPECT_EQ(base->config, Config({{"TUNE_BASE", Value(1)}, {"TUNE_ITEMS", Value(4)}}));
  EXPECT_EQ(base->origin, kOriginBase);
  // The configs were resumed: `base:` changes the base alone.
  EXPECT_EQ(with.resumed, 2u);
  ASSERT_TRUE(std::filesystem::exists(marker));
  EXPECT_EQ(read_file(marker).substr(0, 7), "base 4\n");
  EXPECT_NE(format_summary(with).find("speedup over CUB's base policy: "), std::string::npos);
}
