// `tunekit devices --json` and `tunekit space --properties`: a machine's
// description written on one machine, read on another, so a CUDA spec's
// space can be counted where there is no GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;
using tunekit::testing::tunekit_cli;
using namespace std::chrono_literals;
using tunekit::testing::fresh_dir;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;

namespace {

// The "valid: N" line of `tunekit space`.
std::string valid_line(const std::string& output) {
  const auto at = output.find("valid:");
  return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

const std::string kRoot = TUNEKIT_SOURCE_DIR;

}  // namespace

TEST(SpaceProperties, DevicesJsonRoundTripsThroughSpace) {
  auto devices = tunekit_cli({"devices", "--json"});
  ASSERT_EQ(devices.exit_code, 0) << devices.output;
  auto j = nlohmann::json::parse(devices.output);
  nlohmann::json cpu;
  for (const auto& b : j["backends"]) {
    EXPECT_TRUE(b.contains("backend") && b["devices"].is_array() && b["unavailable"].is_string()) << b.dump();
    if (b["backend"] == "cpu" && !b["devices"].empty()) cpu = b["devices"][0];
  }
  ASSERT_TRUE(cpu.is_object()) << devices.output;
  EXPECT_TRUE(cpu["device"].is_string());
  EXPECT_GT(cpu["cores"].get<int>(), 0);

  // This machine's own description, read back, gives the space this machine gives.
  const auto dir = fresh_dir();
  write_file(dir / "cpu.json", cpu.dump());
  const std::string spec = kRoot + "/examples/matmul/matmul.yaml";
  auto own = tunekit_cli({"space", spec});
  auto read = tunekit_cli({"space", spec, "--properties", (dir / "cpu.json").string()});
  ASSERT_EQ(own.exit_code, 0) << own.output;
  ASSERT_EQ(read.exit_code, 0) << read.output;
  EXPECT_FALSE(valid_line(own.output).empty());
  EXPECT_EQ(valid_line(read.output), valid_line(own.output));
}

TEST(SpaceProperties, ACudaSpecCountsWithAGpusPropertiesAnywhere) {
  const auto dir = fresh_dir();
  const MachineInfo h200{"cuda: NVIDIA H200 (sm_90, 132 SMs, 140 GiB)",
                         {{"compute_capability", Value(90)},
                          {"max_threads_per_block", Value(1024)},
                          {"shared_memory_per_block_optin", Value(232448)},
                          {"sm_count", Value(132)}}};
  write_file(dir / "h200.json", machine_to_json(h200));
  const std::string spec = kRoot + "/kernels/gemm/wgmma_gemm.yaml";
  auto r = tunekit_cli({"space", spec, "--properties", (dir / "h200.json").string(), "-s", "M=4096", "-s", "N=4096",
                        "-s", "K=4096", "-s", "B_NK=1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Bindings constants = h200.properties;
  for (const auto& [k, v] : Bindings{{"M", Value(4096)}, {"N", Value(4096)}, {"K", Value(4096)}, {"B_NK", Value(1)}})
    constants[k] = v;
  const Spec s = load_spec(spec);
  const Space expected(s.parameters, s.constraints, constants);
  ASSERT_GT(expected.count(), 0u);
  EXPECT_EQ(valid_line(r.output), "valid:       " + std::to_string(expected.count()));
  // The size counted, and that it is one of several (constraints over the
  // sizes make each its own space).
  ASSERT_GT(s.sizes.size(), 1u);
  EXPECT_NE(r.output.find("size:        {B_NK: 1, K: 4096, M: 4096, N: 4096}"), std::string::npos) << r.output;
  // With --size, the size counted is not the spec's first as written.
  EXPECT_NE(r.output.find("(--size over the first of the spec's " + std::to_string(s.sizes.size()) + " sizes)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("--size NAME=VALUE for another"), std::string::npos) << r.output;
  auto first = tunekit_cli({"space", spec, "--properties", (dir / "h200.json").string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("(the first of the spec's " + std::to_string(s.sizes.size()) +
                              " sizes; --size NAME=VALUE for another)"),
            std::string::npos)
      << first.output;
  auto j = tunekit_cli({"space", spec, "--properties", (dir / "h200.json").string(), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  const auto counted = nlohmann::json::parse(j.output);
  EXPECT_EQ(counted["sizes"], s.sizes.size());
  EXPECT_EQ(counted["size"]["M"], s.sizes.front().at("M").as_int());

  // A file that is not one device object: the file and what was expected.
  write_file(dir / "bad.json", "[{\"sm_count\": 132}]");
  auto bad = tunekit_cli({"space", spec, "--properties", (dir / "bad.json").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find((dir / "bad.json").string() + ": a machine description must be a JSON object"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("one device object of `tunekit devices --json`"), std::string::npos);

  // A file that lacks a property the constraints read: the spec's location,
  // and the file the properties came from.
  write_file(dir / "short.json", "{\"device\": \"cuda: x\", \"sm_count\": 132}");
  auto lacking = tunekit_cli({"space", spec, "--properties", (dir / "short.json").string(), "-s", "M=4096", "-s",
                              "N=4096", "-s", "K=4096", "-s", "B_NK=1"});
  EXPECT_EQ(lacking.exit_code, 1) << lacking.output;
  EXPECT_NE(lacking.output.find("wgmma_gemm.yaml:"), std::string::npos) << lacking.output;
  EXPECT_NE(lacking.output.find("the machine properties are those of --properties " + (dir / "short.json").string() +
                                ", which may lack it"),
            std::string::npos)
      << lacking.output;

  // Without a GPU and without --properties, the error says how to go on.
  bool gpu = false;
  for (const auto& l : list_devices()) gpu = gpu || (l.backend == "cuda" && !l.devices.empty());
  if (!gpu) {
    auto none = tunekit_cli({"space", spec, "-s", "M=4096", "-s", "N=4096", "-s", "K=4096", "-s", "B_NK=1"});
    EXPECT_EQ(none.exit_code, 1);
    EXPECT_NE(none.output.find("--properties FILE"), std::string::npos) << none.output;
  }
}

// A count written as a string ("1024") would compare unequal with every
// number in a constraint and empty the space unseen; each command that
// reads --properties refuses it, naming the file and the property.
TEST(SpaceProperties, AQuotedNumberIsRefusedWhereverPropertiesAreRead) {
  const auto dir = fresh_dir();
  const std::string file = (dir / "h200.json").string();
  write_file(file, R"({"device": "cuda: x", "arch": "sm_90a", "max_threads_per_block": "1024", "sm_count": 132})");
  const std::string spec = kRoot + "/kernels/gemm/wgmma_gemm.yaml";
  for (const std::vector<std::string>& command : {std::vector<std::string>{"space", spec, "--properties", file},
                                                  std::vector<std::string>{"resolve", spec, "--properties", file}}) {
    auto r = tunekit_cli(command);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.output;
    EXPECT_NE(r.output.find(file + ": property 'max_threads_per_block' is the string \"1024\"; write the number "
                                   "without quotes"),
              std::string::npos)
        << command[0] << ": " << r.output;
  }
  // A string that is not a number ("sm_90a") stays a string.
  write_file(file, R"({"device": "cuda: x", "arch": "sm_90a", "max_threads_per_block": 1024, "sm_count": 132,
                       "compute_capability": 90, "shared_memory_per_block_optin": 232448})");
  auto ok = tunekit_cli(
      {"space", spec, "--properties", file, "-s", "M=4096", "-s", "N=4096", "-s", "K=4096", "-s", "B_NK=1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

// An msKPP source's `// tunable` lines say what a config replaces, not the
// values to try: `space` says where those are, not that the file has none.
TEST(SpaceProperties, ATunableSourcePointsToItsSpec) {
  auto r = tunekit_cli({"space", kRoot + "/examples/mskpp_matmul/matmul.cpp"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("its `// tunable` lines name what a config replaces"), std::string::npos) << r.output;
}
