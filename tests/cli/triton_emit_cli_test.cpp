// `tunekit tune` then `tunekit emit` on a Triton spec, through the CLI, with
// the fake compiler and runner (no Triton, no GPU): emit writes the header,
// the JSON map, the Python module and the triton.Config list, and the Python
// module dispatches a size.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(TritonEmitCli, TuneThenEmitThePythonFormats) {
  ::setenv("TUNEKIT_TRITON_FAKE", "1", 1);
  const fs::path out = tunekit::testing::fresh_dir();
  const std::string spec = (fs::path(TUNEKIT_SOURCE_DIR) / "tests/backend/data/triton/fake.yaml").string();
  auto tune = detail::run_process(
      {tunekit::testing::tunekit_exe().string(), "tune", spec, "-o", out.string(), "--no-progress", "-j", "2"}, 300s);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  auto emit = detail::run_process(
      {tunekit::testing::tunekit_exe().string(), "emit", spec, "-o", out.string(), "--mode", "cover"}, 120s);
  ::unsetenv("TUNEKIT_TRITON_FAKE");
  ASSERT_EQ(emit.exit_code, 0) << emit.output;
  for (const char* f :
       {"fake_triton_policy.hpp", "fake_triton_policy.json", "fake_triton_policy.py", "fake_triton_triton_configs.py"})
    EXPECT_TRUE(fs::exists(out / f)) << f << "\n" << emit.output;
  auto select = detail::run_process({"python3", "-c",
                                     "import sys; sys.path.insert(0, sys.argv[1]); import fake_triton_policy as p; "
                                     "print(p.select(n=5000)['BLOCK'])",
                                     out.string()},
                                    60s);
  EXPECT_EQ(select.output, "128\n");
}
