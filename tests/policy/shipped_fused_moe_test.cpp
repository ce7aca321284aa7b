// The fused-MoE policy shipped in kernels/fused_moe/tuned (one H200 tune,
// emitted in every format): vLLM's per-batch-size file, the Python module
// and the JSON map give the same config at every tuned batch size, and a
// batch size never tuned gets a tuned one. A format emitted again from
// another tune without the others fails here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
const fs::path kTuned = fs::path(TUNEKIT_SOURCE_DIR) / "kernels" / "fused_moe" / "tuned";
}

TEST(ShippedFusedMoe, EveryFormatGivesTheSameConfigAtEachBatchSize) {
  const auto vllm =
      nlohmann::json::parse(tunekit::testing::read_file(kTuned / "E=8,N=7168,device_name=NVIDIA_H200.json"));
  const auto map = nlohmann::json::parse(tunekit::testing::read_file(kTuned / "fused_moe_policy.json"));
  ASSERT_EQ(map.at("entries").size(), vllm.size());
  for (const auto& e : map.at("entries")) {
    const auto& size = e.at("size");
    EXPECT_EQ(size.at("E"), 8);
    EXPECT_EQ(size.at("N"), 14336);  // the gate-up GEMM's: vLLM's file name halves it
    const std::string m = std::to_string(size.at("M").get<int>());
    ASSERT_TRUE(vllm.contains(m)) << m;
    EXPECT_EQ(vllm.at(m), e.at("config")) << "M = " << m;
  }
  // The Python module: each tuned batch size, and two never tuned (3 sits
  // between 2 and 4; 8192 beyond the largest), as JSON lines.
  const std::string script =
      "import json, sys; sys.path.insert(0, sys.argv[1]); import fused_moe_policy as p\n"
      "for m in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 3, 8192]:\n"
      "    print(json.dumps([m, p.select(E=8, topk=2, N=14336, K=4096, M=m)]))\n";
  auto run = tunekit::detail::run_process({"python3", "-c", script, kTuned.string()}, 120s);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::size_t lines = 0;
  std::istringstream out(run.output);
  for (std::string line; std::getline(out, line); ++lines) {
    const auto row = nlohmann::json::parse(line);
    const int m = row.at(0);
    const auto& config = row.at(1);
    if (m == 3) EXPECT_TRUE(config == vllm.at("2") || config == vllm.at("4")) << config.dump();
    else if (m == 8192) EXPECT_EQ(config, vllm.at("4096"));
    else EXPECT_EQ(config, vllm.at(std::to_string(m))) << "M = " << m;
  }
  EXPECT_EQ(lines, 15u) << run.output;
}
