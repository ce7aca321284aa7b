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
