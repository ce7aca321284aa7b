// The CCCL methodology end to end: a %RANGE% kernel tuned over 4 sizes, the
// geometric-mean winner emitted into a policy header, a program built with it.
#include <gtest/gtest.h>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;

TEST(CcclPolicy, GeomeanWinnerShipsInAHeaderAProgramUses) {
  const auto out = tunekit::testing::fresh_dir();
  const std::string root = TUNEKIT_SOURCE_DIR, exe = tunekit::testing::tunekit_exe().string();
  const std::string spec = root + "/examples/cccl_policy/reduce.yaml";
  auto run = [&](std::vector<std::string> argv) {
    auto r = detail::run_process(argv, std::chrono::minutes(5), root);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  };
  const std::string tuned = run({exe, "tune", spec, "-o", out.string(), "--no-progress"});
  // 8 x 4 configs at each of the 4 sizes.
  EXPECT_NE(tuned.find("all sizes: 128 trials: 128 ok"), std::string::npos) << tuned;
  EXPECT_NE(tuned.find("one config for all sizes: "), std::string::npos) << tuned;
  const std::string chosen = run({exe, "select", spec, "-o", out.string(), "--mode", "all-sizes"});
  EXPECT_NE(chosen.find("geomean speedup over default"), std::string::npos) << chosen;
  const std::string header = (out / "reduce_policy.hpp").string();
  const std::string emitted = run({exe, "emit", spec, "-o", out.string(), "--mode", "all-sizes", "--header", header});
  // emit scores what it wrote as select does, by the same lines.
  EXPECT_NE(emitted.find(chosen), std::string::npos) << emitted << "\n" << chosen;
  run({"c++", "-std=c++17", "-I" + out.string(), root + "/examples/cccl_policy/use_policy.cpp", "-o",
       (out / "use_policy").string()});
  const std::string used = run({(out / "use_policy").string()});
  EXPECT_NE(used.find("same=1"), std::string::npos) << used;
  // The program reports the config that `select` chose.
  const auto items = used.substr(used.find("TUNE_ITEMS="), used.find(" TUNE_LANES") - used.find("TUNE_ITEMS="));
  EXPECT_NE(chosen.find(items.substr(0, items.find('=')) + ": " + items.substr(items.find('=') + 1)), std::string::npos)
      << chosen << "\n"
      << used;
}

// CCCL's base variant, once tuned, is what `select --mode all-sizes` and
// `emit` compare the one config with, as the tune's summary does, and `report`
// draws it again as the reference the tune's page drew.
TEST(CcclPolicy, SelectAndReportCompareWithTheBaseAsTheTuneDid) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string exe = tunekit::testing::tunekit_exe().string();
  tunekit::testing::write_file(dir / "scale.cpp",
                               "// %RANGE% TUNE_ITEMS items 1:2:1\n"
                               "#if TUNE_BASE\n"
                               "#define ITEMS 4\n"
                               "#else\n"
                               "#define ITEMS TUNE_ITEMS\n"
                               "#endif\n"
                               "extern \"C\" void scale(const float* x, float* y, int n) {\n"
                               "  for (int i = 0; i < n; i += ITEMS)\n"
                               "    for (int k = i; k < i + ITEMS && k < n; ++k) y[k] = 2 * x[k];\n"
                               "}\n");
  tunekit::testing::write_file(dir / "spec.yaml", R"(name: scale
kernel: {source: scale.cpp, entry: scale, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: [{N: 1000}, {N: 4000}]
tolerance: {atol: 1e-6, rtol: 0}
measure: {warmup: 1ms, min_samples: 3, max_samples: 5, max_time: 50ms, cache: hot, timeout: 60s, early_stop: off}
)");
  auto run = [&](std::vector<std::string> argv) {
    auto r = detail::run_process(argv, std::chrono::minutes(5), dir);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  };
  const std::string out = (dir / "out").string(), spec = (dir / "spec.yaml").string();
  const std::string tuned = run({exe, "tune", spec, "-o", out, "--no-progress"});
  ASSERT_NE(tuned.find("geomean speedup over CUB's base policy"), std::string::npos) << tuned;
  const std::string chosen = run({exe, "select", spec, "-o", out, "--mode", "all-sizes"});
  EXPECT_NE(chosen.find("geomean speedup over CUB's base policy: "), std::string::npos) << chosen;
  EXPECT_NE(chosen.find("{N: 1000}: "), std::string::npos) << chosen;
  EXPECT_NE(chosen.find(", CUB's base "), std::string::npos) << chosen;
  // emit prints the comparison select does for the config it writes, line
  // for line (the spec has no default: select's offer in its place is
  // select's own).
  const std::string over_base = chosen.substr(0, chosen.find("no config for all sizes against the default"));
  ASSERT_NE(over_base, chosen) << chosen;
  const std::string emitted = run({exe, "emit", spec, "-o", out, "--mode", "all-sizes"});
  EXPECT_NE(emitted.find(over_base), std::string::npos) << emitted << "\n" << chosen;
  std::filesystem::remove(dir / "out" / "scale.html");
  run({exe, "report", spec, "-o", out});
  const std::string page = tunekit::testing::read_file(dir / "out" / "scale.html");
  EXPECT_NE(page.find("(CUB's base)"), std::string::npos);
}

// The base's `base:` values are part of what it is: a base stored under
// other values (the spec's `base:` changed since) is another variant, never
// what `select` or `report` compare with, even where it ran and the base of
// the values the spec gives now failed, or was stored before it.
TEST(CcclPolicy, SelectAndReportCompareOnlyWithTheBaseOfTheSpecsBaseValues) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string exe = tunekit::testing::tunekit_exe().string();
  tunekit::testing::write_file(dir / "scale.cpp",
                               "// %RANGE% TUNE_ITEMS items 1:2:1\n"
                               "#if TUNE_BASE\n"
                               "#endif\n"
                               "extern \"C\" void scale(const float* x, float* y, int n, int items) {\n"
                               "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n"
                               "}\n");
  // The base's argument divides by zero with TUNE_ITEMS 3: that base fails.
  const std::string spec_text = R"(name: scale
kernel: {source: scale.cpp, entry: scale, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
  - {name: items, type: i32, value: 6 // (3 - TUNE_ITEMS)}
sizes: [{N: 1000}, {N: 4000}]
tolerance: {atol: 1e-6, rtol: 0}
measure: {warmup: 1ms, min_samples: 3, max_samples: 5, max_time: 50ms, cache: hot, timeout: 60s, early_stop: off}
)";
  auto run = [&](std::vector<std::string> argv) {
    auto r = detail::run_process(argv, std::chrono::minutes(5), dir);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  };
  const std::string out = (dir / "out").string(), spec = (dir / "spec.yaml").string();
  auto tune_with = [&](const std::string& base) {
    tunekit::testing::write_file(dir / "spec.yaml", spec_text + "base: " + base + "\n");
    return run({exe, "tune", spec, "-o", out, "--no-progress"});
  };
  ASSERT_NE(tune_with("{TUNE_ITEMS: 2}").find("geomean speedup over CUB's base policy"), std::string::npos);
  const std::string failed = tune_with("{TUNE_ITEMS: 3}");
  ASSERT_NE(failed.find("No.3 launch_error {TUNE_BASE: 1, TUNE_ITEMS: 3}"), std::string::npos) << failed;
  ASSERT_EQ(failed.find("over CUB's base"), std::string::npos) << failed;
  // As the tune: no base ran with these values, so no speedup over it.
  std::string chosen = run({exe, "select", spec, "-o", out, "--mode", "all-sizes"});
  EXPECT_EQ(chosen.find("CUB's base"), std::string::npos) << chosen;
  EXPECT_EQ(chosen.find("note: CCCL's base variant"), std::string::npos) << chosen;

  // Back to the first values: the tune resumes that base, stored before
  // the failed one, and so do select and report.
  ASSERT_NE(tune_with("{TUNE_ITEMS: 2}").find("geomean speedup over CUB's base policy"), std::string::npos);
  chosen = run({exe, "select", spec, "-o", out, "--mode", "all-sizes"});
  EXPECT_NE(chosen.find("geomean speedup over CUB's base policy: "), std::string::npos) << chosen;
  std::filesystem::remove(dir / "out" / "scale.html");
  run({exe, "report", spec, "-o", out});
  const std::string page = tunekit::testing::read_file(dir / "out" / "scale.html");
  EXPECT_NE(page.find("{TUNE_BASE: 1, TUNE_ITEMS: 2}"), std::string::npos);
  EXPECT_EQ(page.find("TUNE_ITEMS: 3"), std::string::npos);

  // Values never tuned: no base to compare with, and a note says why.
  tunekit::testing::write_file(dir / "spec.yaml", spec_text + "base: {TUNE_ITEMS: 4}\n");
  chosen = run({exe, "select", spec, "-o", out, "--mode", "all-sizes"});
  EXPECT_EQ(chosen.find("over CUB's base"), std::string::npos) << chosen;
  EXPECT_NE(chosen.find("note: CCCL's base variant at {N: 1000}, {N: 4000} is stored only as {TUNE_BASE: 1, "
                        "TUNE_ITEMS: 2} and {TUNE_BASE: 1, TUNE_ITEMS: 3}, measured under other 'base:' values than "
                        "the spec gives now ({TUNE_BASE: 1, TUNE_ITEMS: 4})"),
            std::string::npos)
      << chosen;
}
