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
  run({exe, "emit", spec, "-o", out.string(), "--mode", "all-sizes", "--header", header});
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

// CCCL's base variant, once tuned, is what `select --mode all-sizes`
// compares the one config with, as the tune's summary does, and `report`
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
  std::filesystem::remove(dir / "out" / "scale.html");
  run({exe, "report", spec, "-o", out});
  const std::string page = tunekit::testing::read_file(dir / "out" / "scale.html");
  EXPECT_NE(page.find("(CUB's base)"), std::string::npos);
}
