// `tunekit resolve`: one config at one size worked out as a trial runs it,
// for harnesses that launch a kernel themselves (bench/kernels/common.py).
// Machine properties come from files in data/, so the results do not depend
// on this machine's caches or on a GPU being here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tunekit::testing::fresh_dir;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;

namespace {

const std::string kRoot = TUNEKIT_SOURCE_DIR;
const std::string kH200 = kRoot + "/tests/cli/data/h200.json";
// A 32 KiB L1d and 1 MiB L2 with AVX2, where matmul.yaml's default config is
// valid (as on any L1d of 32 to 64 KiB and L2 of 0.5 to 2 MiB).
const std::string kCpu = kRoot + "/tests/cli/data/cpu_32k_l1d.json";

detail::ProcessResult tunekit_cli(std::vector<std::string> args) {
  args.insert(args.begin(), tunekit_exe().string());
  return detail::run_process(args, 300s, kRoot);
}

nlohmann::json resolve_json(std::vector<std::string> args) {
  args.insert(args.begin(), "resolve");
  args.push_back("--json");
  auto r = tunekit_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  try {
    return nlohmann::json::parse(r.output);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << r.output;
    return {};
  }
}

const nlohmann::json& argument(const nlohmann::json& j, const std::string& name) {
  for (const auto& a : j["arguments"])
    if (a["name"] == name) return a;
  static const nlohmann::json none;
  ADD_FAILURE() << "no argument " << name << " in " << j["arguments"].dump();
  return none;
}

}  // namespace

TEST(Resolve, TheDefaultConfigAtTheSpecsFirstSize) {
  const auto j = resolve_json({"examples/matmul/matmul.yaml", "--properties", kCpu});
  EXPECT_EQ(j["name"], "matmul");
  EXPECT_EQ(j["language"], "c++");
  EXPECT_EQ(j["device"], "cpu: a 2-core x86-64 with AVX2, 32 KiB L1d, 1 MiB L2");
  EXPECT_EQ(j["spec"], kRoot + "/examples/matmul/matmul.yaml");
  EXPECT_EQ(j["size"], (nlohmann::json{{"M", 512}, {"N", 512}, {"K", 512}}));
  EXPECT_EQ(
      j["config"],
      (nlohmann::json{
          {"MR", 2}, {"NR", 16}, {"KC", 512}, {"MC", 64}, {"NC", 256}, {"UNROLL", 1}, {"LOOP_ORDER", 1}, {"PAR", 0}}));
  for (const auto& [name, from] : j["config_origin"].items()) EXPECT_EQ(from, "default") << name;
  EXPECT_EQ(j["valid"], true);
  EXPECT_FALSE(j.contains("invalid_reason"));
  EXPECT_EQ(j["kernel"]["entry"], "matmul");
  EXPECT_EQ(j["kernel"]["source"], kRoot + "/examples/matmul/matmul.cpp");
  EXPECT_EQ(j["kernel"]["injection"], "defines");
  const auto defines = j["kernel"]["defines"].get<std::vector<std::string>>();
  EXPECT_EQ(defines, (std::vector<std::string>{"MR=2", "NR=16", "KC=512", "MC=64", "NC=256", "UNROLL=1", "LOOP_ORDER=1",
                                               "PAR=0"}));
  EXPECT_EQ(j["kernel"]["flags"], (nlohmann::json{"-O3", "-march=native", "-fopenmp"}));
  EXPECT_TRUE(j["launch"].is_null());  // a CPU kernel is called, not launched
  const auto& a = argument(j, "A");
  EXPECT_EQ(a["type"], "f32");
  EXPECT_EQ(a["role"], "in");
  EXPECT_EQ(a["count"], 512 * 512);
  EXPECT_EQ(a["bytes"], 512 * 512 * 4);
  EXPECT_EQ(argument(j, "C")["role"], "out");
  EXPECT_EQ(argument(j, "K")["role"], "scalar");
  EXPECT_EQ(argument(j, "K")["value"], 512);
  EXPECT_FALSE(j.contains("artifact"));
}

// A %RANGE% source's config reaches it as #define lines; a harness of its
// own gets them as the defines to pass.
TEST(Resolve, ARangeSourcesConfigIsItsDefines) {
  const auto dir = fresh_dir();
  write_file(dir / "saxpy.yaml", "kernel: {source: " + kRoot +
                                     "/examples/saxpy/saxpy.cpp, entry: saxpy}\n"
                                     "arguments:\n  - {name: x, type: f32, size: N}\n"
                                     "  - {name: y, type: f32, size: N, role: inout}\n"
                                     "  - {name: n, type: i32, value: N}\nsizes: {N: 64}\n");
  const auto j = resolve_json({(dir / "saxpy.yaml").string(), "--config", "TUNE_UNROLL=2"});
  EXPECT_EQ(j["kernel"]["injection"], "range");
  EXPECT_THAT(j["kernel"]["defines"].get<std::vector<std::string>>(), ::testing::Contains("TUNE_UNROLL=2"));
}

// An out buffer is poisoned before each verified run, never filled: resolve
// said `fill zeros`, the spec's unused default, for what a trial runs on NaN.
TEST(Resolve, AnOutBufferShowsThePoisonItStartsFromNotAFill) {
  const auto dir = fresh_dir();
  write_file(dir / "copy.cpp", "extern \"C\" void copy(const float* in, float* out, int* hits, int n) {}\n");
  write_file(dir / "copy.yaml",
             "kernel: {source: copy.cpp, entry: copy}\n"
             "arguments:\n  - {name: in, type: f32, size: N}\n"
             "  - {name: out, type: f32, size: N, role: out}\n"
             "  - {name: hits, type: i32, size: N, role: out}\n"
             "  - {name: n, type: i32, value: N}\nsizes: {N: 64}\n");
  const std::string spec = (dir / "copy.yaml").string();
  const auto j = resolve_json({spec, "--properties", kCpu});
  EXPECT_EQ(argument(j, "in")["fill"], "random");
  EXPECT_FALSE(argument(j, "in").contains("poison"));
  EXPECT_EQ(argument(j, "out")["poison"], "nan");
  EXPECT_FALSE(argument(j, "out").contains("fill"));
  EXPECT_EQ(argument(j, "hits")["poison"], "0xa5 bytes");

  auto text = tunekit_cli({"resolve", spec, "--properties", kCpu});
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, ::testing::HasSubstr("64 elements (256 bytes), no fill: nan before each verified run"));
  EXPECT_THAT(text.output,
              ::testing::HasSubstr("64 elements (256 bytes), no fill: 0xa5 bytes before each verified run"));
  EXPECT_THAT(text.output, ::testing::Not(::testing::HasSubstr("fill zeros")));
}

TEST(Resolve, SizeAndConfigFlagsOverrideTheSpec) {
  const auto j = resolve_json(
      {"examples/matmul/matmul.yaml", "--properties", kCpu, "--size", "M=1024", "--config", "KC=256,UNROLL=4"});
  EXPECT_EQ(j["size"]["M"], 1024);
  EXPECT_EQ(j["size"]["N"], 512);
  EXPECT_EQ(j["config"]["KC"], 256);
  EXPECT_EQ(j["config"]["UNROLL"], 4);
  EXPECT_EQ(j["config"]["MR"], 2);
  EXPECT_EQ(j["config_origin"]["KC"], "--config");
  EXPECT_EQ(j["config_origin"]["MR"], "default");
  EXPECT_EQ(argument(j, "A")["count"], 1024 * 512);
  EXPECT_EQ(argument(j, "M")["value"], 1024);
}

TEST(Resolve, ACudaSpecsLaunchGeometryNeedsNoGpu) {
  const auto j =
      resolve_json({"kernels/flash_decode/flash_decode.yaml", "--properties", kH200, "-s", "B=1,Hq=4,Hkv=1,L=2048",
                    "-c", "SPLIT=8,WARPS=8,KPW=16,SMEM=1,STAGES=2,SCHED=0,BPS=1,COMBINE=0,PREFETCH=256,CLUSTER=1"});
  EXPECT_EQ(j["language"], "cuda");
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["kernel"]["entry"], "flash_decode");
  // grid (SPLIT, Hkv, B); the SPLIT blocks of a head are one cluster
  EXPECT_EQ(j["launch"]["grid"], (nlohmann::json{8, 1, 1}));
  EXPECT_EQ(j["launch"]["block"], (nlohmann::json{256, 1, 1}));
  EXPECT_EQ(j["launch"]["cluster"], (nlohmann::json{8, 1, 1}));
  EXPECT_EQ(j["launch"]["clustered"], true);
  // The spec's formula by hand, G = Hq / Hkv = 4: the staged ring, the warps'
  // partials, the split bookkeeping, the merge, and the cluster's exchange.
  const int G = 4, SPLIT = 8, WARPS = 8;
  const int ring = std::max(1 * WARPS * 2 * 16 * 512, WARPS * G * 512);
  const int cluster = SPLIT * ((G * 32 + SPLIT - 1) / SPLIT) * 16 + SPLIT * G * 8;
  EXPECT_EQ(j["launch"]["shared_memory"], ring + WARPS * 128 + (G * SPLIT + 3) / 4 * 16 + WARPS * 512 + cluster);
  EXPECT_EQ(argument(j, "k")["count"], 1 * 1 * 2048 * 128);
  EXPECT_EQ(argument(j, "k")["type"], "bf16");
  EXPECT_EQ(argument(j, "workspace")["count"], 1 * 4 * SPLIT * 130);
  EXPECT_EQ(argument(j, "workspace")["fill"], "zeros");
  EXPECT_EQ(argument(j, "L")["value"], 2048);
}

TEST(Resolve, TensorMapsAndAParameterPinnedToTheSize) {
  const auto j = resolve_json({"kernels/gemm/wgmma_swap.yaml", "--properties", kH200, "-s", "M=16,K=4096,N=4096", "-c",
                               "BN=64,STAGES=8,KSUB=2,SPLIT_K=1,EVICT=1"});
  EXPECT_EQ(j["name"], "gemm_wgmma_swap");
  // BM == (8 if M <= 8 else 16 if M <= 16 ...): computed for M = 16, not the default's 8
  EXPECT_EQ(j["config"]["BM"], 16);
  EXPECT_EQ(j["config_origin"]["BM"], "pinned");
  EXPECT_EQ(j["config_origin"]["CONSUMERS"], "default");
  EXPECT_EQ(j["kernel"]["flags"], (nlohmann::json{"-DSWAP_AB=1"}));
  EXPECT_EQ(j["launch"]["grid"], (nlohmann::json{4096 / 64, 1, 1}));
  EXPECT_EQ(j["launch"]["block"], (nlohmann::json{256, 1, 1}));
  EXPECT_EQ(j["launch"]["clustered"], false);
  EXPECT_EQ(j["launch"]["shared_memory"], 8 * 2 * (16 + 64) * 128 + 1024);
  const auto& b = argument(j, "tmap_b");
  EXPECT_EQ(b["role"], "tensor_map");
  EXPECT_EQ(b["type"], "bf16");  // its buffer's element type
  EXPECT_EQ(b["tensor_map"]["of"], "B");
  EXPECT_EQ(b["tensor_map"]["dims"], (nlohmann::json{4096, 4096}));
  EXPECT_EQ(b["tensor_map"]["box"], (nlohmann::json{64, 64}));
  EXPECT_EQ(b["tensor_map"]["swizzle"], 128);
  EXPECT_EQ(b["tensor_map"]["oob"], "zero");
  EXPECT_EQ(b["tensor_map"]["l2_promotion"], 128);
  EXPECT_EQ(argument(j, "tmap_a")["tensor_map"]["box"], (nlohmann::json{64, 16}));
}

TEST(Resolve, BadInputIsNamedWithWhatWasMeant) {
  const std::string spec = "kernels/gemm/wgmma_swap.yaml";
  auto param = tunekit_cli({"resolve", spec, "--properties", kH200, "--config", "BNN=64"});
  EXPECT_EQ(param.exit_code, 1) << param.output;
  EXPECT_NE(param.output.find("--config BNN=64: 'BNN' is not a parameter"), std::string::npos) << param.output;
  EXPECT_NE(param.output.find("did you mean 'BN'?"), std::string::npos) << param.output;

  auto size = tunekit_cli({"resolve", spec, "--properties", kH200, "--size", "MM=4"});
  EXPECT_EQ(size.exit_code, 1) << size.output;
  EXPECT_NE(size.output.find("'MM' is not a size"), std::string::npos) << size.output;
  EXPECT_NE(size.output.find("did you mean 'M'?"), std::string::npos) << size.output;
  // A size that is not a number is the flag's fault, not the spec's.
  auto word = tunekit_cli({"resolve", spec, "--properties", kH200, "--size", "M=abc"});
  EXPECT_EQ(word.exit_code, 1) << word.output;
  EXPECT_NE(word.output.find("--size M=abc: 'abc' is not a number"), std::string::npos) << word.output;

  auto value = tunekit_cli({"resolve", spec, "--properties", kH200, "--config", "BN=48"});
  EXPECT_EQ(value.exit_code, 1) << value.output;
  EXPECT_NE(value.output.find("BN=48 is not one of its values (16, 32, 64, 128)"), std::string::npos) << value.output;

  // A config outside the space: the constraint it breaks, where the spec has it.
  const std::vector<std::string> too_deep{"resolve", spec, "--properties", kH200, "--config", "SPLIT_K=1,KSUB=8"};
  auto outside = tunekit_cli(too_deep);
  EXPECT_EQ(outside.exit_code, 1) << outside.output;
  EXPECT_NE(outside.output.find("wgmma_swap.yaml:"), std::string::npos) << outside.output;
  EXPECT_NE(outside.output.find("the constraint 'STAGES * KSUB * (BM + max(BN, 64)) * 128 + 1024 + 16 * STAGES <= "
                                "shared_memory_per_block_optin' does not hold"),
            std::string::npos)
      << outside.output;

  // ... which --ignore-constraints resolves anyway, saying so.
  auto args = too_deep;
  args.erase(args.begin());
  args.push_back("--ignore-constraints");
  const auto j = resolve_json(args);
  EXPECT_EQ(j["valid"], false);
  EXPECT_NE(j["invalid_reason"].get<std::string>().find("shared_memory_per_block_optin"), std::string::npos);
  EXPECT_EQ(j["config"]["KSUB"], 8);

  auto bare = tunekit_cli({"resolve", kRoot + "/examples/saxpy/saxpy.cpp"});
  EXPECT_EQ(bare.exit_code, 1) << bare.output;
  EXPECT_NE(bare.output.find("resolve takes a spec file"), std::string::npos) << bare.output;
}

TEST(Resolve, BuildReportsTheArtefactFromTunesCache) {
  const auto out = fresh_dir();
  const std::vector<std::string> args{
      "examples/matmul/matmul.yaml", "--properties", kCpu, "--build", "-o", out.string()};
  const auto first = resolve_json(args);
  ASSERT_TRUE(first.contains("artifact")) << first.dump();
  const std::filesystem::path path = first["artifact"]["path"].get<std::string>();
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(path.string().rfind((out / "cache").string(), 0), 0u) << path;
  EXPECT_EQ(first["artifact"]["cached"], false);
  const auto again = resolve_json(args);
  EXPECT_EQ(again["artifact"]["path"], first["artifact"]["path"]);
  EXPECT_EQ(again["artifact"]["cached"], true);
}

TEST(Resolve, AVariantThatDoesNotCompileIsExplained) {
  const auto dir = fresh_dir();
  write_file(
      dir / "k.cpp",
      "#if X == 2\n#error X = 2 is not supported\n#endif\nextern \"C\" void k(float* y, int n) { for (int i = 0; "
      "i < n; ++i) y[i] = X; }\n");
  write_file(dir / "k.yaml",
             "name: k\nkernel: {source: k.cpp, entry: k, language: c++, flags: [-O1]}\narguments:\n"
             "  - {name: y, type: f32, size: n, role: out}\n  - {name: n, type: i32, value: n}\n"
             "sizes: [{n: 16}]\nparameters: {X: [1, 2]}\n");
  auto ok = tunekit_cli({"resolve", (dir / "k.yaml").string(), "--build", "-o", (dir / "out").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("artifact:"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("X (first value)"), std::string::npos) << ok.output;  // no default: the first value

  auto bad =
      tunekit_cli({"resolve", (dir / "k.yaml").string(), "--config", "X=2", "--build", "-o", (dir / "out").string()});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("{X: 2} at n=16 does not compile (compile_error)"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("X = 2 is not supported"), std::string::npos) << bad.output;
}

// A spec that lists its configs (msKPP): --config takes values with commas
// of their own, the others come from the first listed config that has the
// values given, and a config not in the list is not called valid.
TEST(Resolve, AListedConfigFromValuesWithCommas) {
  const std::string spec = "examples/mskpp_matmul_app/matmul_app.yaml";
  auto j = resolve_json({spec, "-c", "L1TileShape=GemmShape<64, 64, 128>"});
  EXPECT_EQ(j["config"]["L1TileShape"], "GemmShape<64, 64, 128>");
  EXPECT_EQ(j["config"]["L0_TILE"], "using L0TileShape = GemmShape<4, 32, 64>;");  // the listed config's
  EXPECT_EQ(j["config_origin"]["L0_TILE"], "listed config");
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["workdir"], kRoot + "/examples/mskpp_matmul_app");
  j = resolve_json(
      {spec, "-c", "L1TileShape=GemmShape<64, 64, 128>,L0_TILE=using L0TileShape = GemmShape<4, 32, 64>;"});
  EXPECT_EQ(j["config"]["L1TileShape"], "GemmShape<64, 64, 128>");
  EXPECT_EQ(j["valid"], true);

  auto r = tunekit_cli({"resolve", spec, "-c", "L1TileShape=GemmShape<64, 64, 128>", "-c",
                        "L0_TILE=using L0TileShape = GemmShape<4, 16, 64>;"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("it is not one of the spec's listed configs (configs:)"), std::string::npos) << r.output;
  // The command as a shell would need it: its argv runs without one.
  const fs::path dir = fresh_dir();
  write_file(dir / "app.sh", "echo time=5\n");
  write_file(dir / "c.yaml", R"yaml(name: c
kernel: {language: command, source: app.sh}
application:
  run: ["sh", "{source}", "a b; $(echo hi)", "{A}"]
  time: {regex: 'time=([0-9.]+)', unit: us}
configs: [{A: 1}, {A: 3}]
)yaml");
  r = tunekit_cli({"resolve", (dir / "c.yaml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" 'a b; $(echo hi)' 1\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("workdir:   " + dir.string() + "\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("entry:"), std::string::npos) << r.output;  // a program has none

  // Its --build artefact is the variant's folder: the source written there
  // and what the build command made.
  write_file(dir / "b.yaml", R"yaml(name: b
kernel: {language: command, source: app.sh}
application:
  build: ["cp", "{source}", "{binary}"]
  run: ["sh", "{binary}", "{A}"]
  time: {regex: 'time=([0-9.]+)', unit: us}
configs: [{A: 1}, {A: 3}]
)yaml");
  const auto built = resolve_json({(dir / "b.yaml").string(), "--build", "-o", (dir / "out").string()});
  ASSERT_TRUE(built.contains("artifact")) << built.dump();
  const fs::path folder = built["artifact"]["path"].get<std::string>();
  EXPECT_TRUE(fs::is_directory(folder)) << folder;
  EXPECT_EQ(built["artifact"]["files"], (std::vector<std::string>{"app", "app.sh"}));
  EXPECT_TRUE(fs::exists(folder / "app"));
}

// A value given as an equal number of another type (1 for 1.0) is the
// listed value: the variant a tune built, not another.
TEST(Resolve, AValueIsTheOneTheSpaceLists) {
  const fs::path dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = SCALE; }\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f}
arguments:
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 8}
parameters: {SCALE: [0.5, 1.0, 3]}
default: {SCALE: 1}
reference: none
)");
  auto j = resolve_json({(dir / "k.yaml").string()});
  EXPECT_EQ(j["kernel"]["defines"], (nlohmann::json{"SCALE=1.0"}));
  j = resolve_json({(dir / "k.yaml").string(), "-c", "SCALE=3.0"});
  EXPECT_EQ(j["kernel"]["defines"], (nlohmann::json{"SCALE=3"}));
}

// A Triton kernel takes its config as keyword arguments: tl.constexprs
// (with kernel.constexprs) and launch options, on a grid of programs. resolve
// printed a CUDA block of 1x1x1 and -D defines, which mean nothing to it; it
// works without Triton installed.
TEST(Resolve, ATritonKernelShowsItsConstexprsLaunchOptionsAndGrid) {
  const std::vector<std::string> moe{
      "kernels/fused_moe/fused_moe.yaml", "--properties", kH200, "-s", "M=64", "-c", "BLOCK_SIZE_M=64"};
  const auto j = resolve_json(moe);
  EXPECT_EQ(j["language"], "triton");
  EXPECT_EQ(j["kernel"]["constexprs"],
            (nlohmann::json{{"BLOCK_SIZE_M", 64}, {"BLOCK_SIZE_N", 64}, {"BLOCK_SIZE_K", 64}, {"GROUP_SIZE_M", 1}}));
  EXPECT_EQ(j["kernel"]["launch_options"], (nlohmann::json{{"num_warps", 4}, {"num_stages", 3}}));
  EXPECT_FALSE(j["kernel"].contains("defines"));
  EXPECT_FALSE(j["kernel"].contains("injection"));
  // ceil_div(min(64 * 2 * 64, 64 * 2 + 8 * 63), 64) * ceil_div(14336, 64) programs
  EXPECT_EQ(j["launch"], (nlohmann::json{{"grid", {10 * 224, 1, 1}}}));
  EXPECT_EQ(argument(j, "a")["shape"], (nlohmann::json{64, 4096}));
  EXPECT_EQ(argument(j, "gating")["passed"], false);
  EXPECT_FALSE(argument(j, "a").contains("passed"));
  EXPECT_TRUE(argument(j, "topk_weights")["setup"].get<std::string>().ends_with("fused_moe.py:moe_setup"))
      << argument(j, "topk_weights");
  EXPECT_FALSE(argument(j, "topk_weights").contains("fill"));

  std::vector<std::string> text_args{"resolve"};
  text_args.insert(text_args.end(), moe.begin(), moe.end());
  auto text = tunekit_cli(text_args);
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output,
              ::testing::HasSubstr("constexpr: BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, GROUP_SIZE_M=1 "
                                   "(tl.constexpr keyword arguments)\n"
                                   "options:   num_warps=4, num_stages=3 (launch options)\n"
                                   "launch:    grid (2240, 1, 1), the arguments, constexprs and options by name\n"));
  EXPECT_THAT(text.output, ::testing::HasSubstr("shape [64, 4096]: 262144 elements (524288 bytes), fill random\n"));
  EXPECT_THAT(text.output, ::testing::HasSubstr(", not passed to the kernel (pass: false)\n"));
  EXPECT_THAT(text.output, ::testing::HasSubstr("fused_moe.py:moe_setup for each config\n"));
  for (const char* cuda : {"defines:", "-D", "block ", "dynamic shared memory"})
    EXPECT_THAT(text.output, ::testing::Not(::testing::HasSubstr(cuda))) << cuda;

  // kernel.constexprs are the kernel's too, evaluated at the size; a launch
  // option the config does not give is Triton's default.
  const auto decode = resolve_json({"kernels/decode_attention_triton/decode_attention.yaml", "--properties", kH200});
  EXPECT_EQ(decode["kernel"]["constexprs"],
            (nlohmann::json{{"SPLITS", 4}, {"BLOCK_N", 64}, {"HEAD_DIM", 128}, {"GROUP_PAD", 16}}));
  EXPECT_EQ(decode["kernel"]["launch_options"], (nlohmann::json{{"num_warps", 4}, {"num_stages", 2}}));
  EXPECT_EQ(decode["launch"]["grid"], (nlohmann::json{4, 1, 1}));  // (SPLITS, Hkv, B)
}
