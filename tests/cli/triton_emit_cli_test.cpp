// `tunekit tune` then `tunekit emit` on a Triton spec, through the CLI, with
// the fake compiler and runner (no Triton, no GPU): emit writes the header,
// the JSON map, the Python module and the triton.Config list, and the Python
// module dispatches a size.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A fused-MoE-shaped Triton spec for the fake backend in `dir` (moe.py,
// moe.yaml): two configs, BLOCK_SIZE_N 64 or 128, the wider one faster, at
// M = 1 and 64.
void write_moe(const fs::path& dir) {
  tunekit::testing::write_file(dir / "moe.py",
                               R"PY(def moe(x, out, n, BLOCK_SIZE_M: "tl.constexpr", BLOCK_SIZE_N: "tl.constexpr",
        BLOCK_SIZE_K: "tl.constexpr", GROUP_SIZE_M: "tl.constexpr"):
    pass
def behaviour(config):
    return {"time_us": 100.0 / config["BLOCK_SIZE_N"]}
)PY");
  tunekit::testing::write_file(dir / "moe.yaml", R"Y(name: moe
kernel: {language: triton, source: moe.py, entry: moe, grid: ["ceil_div(M, BLOCK_SIZE_M)"]}
arguments:
  - {name: x, type: f32, shape: [M]}
  - {name: out, type: f32, shape: [M], role: out}
  - {name: n, type: i32, value: M}
sizes:
  - grid: {E: [8], N: [14336], M: [1, 64]}
parameters:
  BLOCK_SIZE_M: [16]
  BLOCK_SIZE_N: [64, 128]
  BLOCK_SIZE_K: [128]
  GROUP_SIZE_M: [1]
  num_warps: [4]
  num_stages: [3]
reference: {python: moe.py, entry: behaviour}
measure: {warmup: 0ms, min_samples: 3, max_samples: 5, timeout: 60s}
)Y");
}

}  // namespace

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

// vLLM names the files of block-quantised fp8 weights with the block shape
// after the dtype (get_config_file_name: ",block_shape=[128,128]");
// --vllm-block-shape says it, and a value that is not two positive integers
// is refused at the flag, saying what was expected.
TEST(TritonEmitCli, VllmBlockShapeNamesTheFilesAsVllmDoes) {
  const fs::path dir = tunekit::testing::fresh_dir();
  write_moe(dir);
  const std::string exe = tunekit::testing::tunekit_exe().string(), spec = (dir / "moe.yaml").string(),
                    out = (dir / "out").string(), vllm = (dir / "vllm").string();
  ::setenv("TUNEKIT_TRITON_FAKE", "1", 1);
  auto tune = detail::run_process({exe, "tune", spec, "-o", out, "--no-progress", "-j", "1"}, 300s);
  auto emit = [&](std::vector<std::string> flags) {
    std::vector<std::string> argv{exe, "emit", spec, "-o", out};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return detail::run_process(argv, 120s);
  };
  auto named = emit({"--vllm", vllm, "--vllm-dtype", "fp8_w8a8", "--vllm-block-shape", "128,128"});
  // Its tensors are f32, whose files vLLM names dtype=float32.
  auto f32 = emit({"--vllm", vllm});
  std::vector<std::pair<std::vector<std::string>, std::string>> refused{
      {{"--vllm-block-shape", "128,128"}, "--vllm-block-shape: shapes the files of --vllm FOLDER, which is not given"},
      {{"--vllm", vllm, "--vllm-block-shape", "128"},
       "--vllm-block-shape: expected two positive integers BLOCK_N,BLOCK_K (128,128: the block-quantised weights' "
       "block), got '128': 1 value"},
      {{"--vllm", vllm, "--vllm-block-shape", "128,x"}, "got '128,x': 'x' is no integer"},
      {{"--vllm", vllm, "--vllm-block-shape", "0,128"}, "got '0,128': 0 is not positive"},
      {{"--vllm", vllm, "--vllm-block-shape", ""}, "--vllm-block-shape: expected two positive integers"},
      // vLLM reads no file named by a bf16 dtype, nor one it has no name for.
      {{"--vllm", vllm, "--vllm-dtype", "bf16"}, "--vllm-dtype: vLLM names no dtype in the file of a bf16 MoE"},
      {{"--vllm", vllm, "--vllm-dtype", "fp8_w8a9"},
       "--vllm-dtype: 'fp8_w8a9' is not a dtype vLLM names its fused-MoE files by; expected fp8_w8a8, "}};
  std::vector<detail::ProcessResult> refusals;
  for (const auto& [flags, said] : refused) refusals.push_back(emit(flags));
  ::unsetenv("TUNEKIT_TRITON_FAKE");
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  ASSERT_EQ(named.exit_code, 0) << named.output;
  EXPECT_TRUE(fs::exists(fs::path(vllm) / "E=8,N=7168,device_name=fake_GPU,dtype=fp8_w8a8,block_shape=[128,128].json"))
      << named.output;
  ASSERT_EQ(f32.exit_code, 0) << f32.output;
  EXPECT_TRUE(fs::exists(fs::path(vllm) / "E=8,N=7168,device_name=fake_GPU,dtype=float32.json")) << f32.output;
  for (std::size_t i = 0; i < refused.size(); ++i) {
    EXPECT_EQ(refusals[i].exit_code, 1) << refusals[i].output;
    EXPECT_NE(refusals[i].output.find(refused[i].second), std::string::npos) << refused[i].second << "\n"
                                                                             << refusals[i].output;
  }
}

// A batch size whose size was tuned in part (here M = 64, one of its two
// valid configs measured) cannot be marked in vLLM's files: vLLM reads every
// key as a batch size and passes a config's keys to its kernel. emit says
// so on stderr, naming the file and the batch size, and the file holds only
// what vLLM reads.
TEST(TritonEmitCli, VllmFilesOfASizeTunedInPartAreNotedOnStderr) {
  const fs::path dir = tunekit::testing::fresh_dir();
  write_moe(dir);
  const std::string exe = tunekit::testing::tunekit_exe().string(), spec = (dir / "moe.yaml").string(),
                    out = (dir / "out").string(), vllm = (dir / "vllm").string(), err = (dir / "stderr").string();
  ::setenv("TUNEKIT_TRITON_FAKE", "1", 1);
  auto in_part = detail::run_process(
      {exe, "tune", spec, "-o", out, "--no-progress", "-j", "1", "-a", "M=[64]", "--max-evals", "1"}, 300s);
  auto whole = detail::run_process({exe, "tune", spec, "-o", out, "--no-progress", "-j", "1", "-a", "M=[1]"}, 300s);
  // Its stdout in `output`, its stderr in a file of its own.
  auto emit = detail::run_process(
      {"bash", "-c", "exec \"$@\" 2>\"$0\"", err, exe, "emit", spec, "-o", out, "--vllm", vllm}, 120s);
  ::unsetenv("TUNEKIT_TRITON_FAKE");
  ASSERT_EQ(in_part.exit_code, 0) << in_part.output;
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  ASSERT_EQ(emit.exit_code, 0) << emit.output;
  const fs::path file = fs::path(vllm) / "E=8,N=7168,device_name=fake_GPU,dtype=float32.json";
  const std::string stderr_text = tunekit::testing::read_file(err);
  EXPECT_NE(stderr_text.find("note: " + file.string() +
                             " holds batch size 64 from sizes tuned in part (their configs are the best of those "
                             "measured); vLLM's format has no place to mark them, the header, JSON and Python files "
                             "do\n"),
            std::string::npos)
      << stderr_text;
  EXPECT_EQ(emit.output.find("holds batch size"), std::string::npos) << emit.output;  // not on stdout
  // The other files mark it at its entry; the vLLM file has no room.
  EXPECT_NE(tunekit::testing::read_file(fs::path(out) / "moe_policy.json").find("\"tuned_in_part\""),
            std::string::npos);
  const auto configs = nlohmann::json::parse(tunekit::testing::read_file(file));
  std::set<std::string> batches;
  for (const auto& [batch, config] : configs.items()) {
    batches.insert(batch);
    std::set<std::string> keys;
    for (const auto& [key, value] : config.items()) keys.insert(key);
    EXPECT_EQ(keys, (std::set<std::string>{"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps",
                                           "num_stages"}))
        << batch << ": " << config.dump();
  }
  EXPECT_EQ(batches, (std::set<std::string>{"1", "64"})) << configs.dump();
}
