// The formats `tunekit emit` writes for Python kernels, each loaded the way
// its user loads it and asked for a size: the Python module (python3), the
// triton.Config list (python3, with a stand-in triton module, as CI has no
// triton), and vLLM's fused-MoE files (nlohmann, looked up as vLLM does:
// the nearest batch size).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"
#include "tunekit/policy.hpp"

using namespace tunekit;
namespace fs = std::filesystem;

namespace {

Config moe_config(int bm, int bn, int bk, int g, int w, int s) {
  return Config({{"BLOCK_SIZE_M", Value(bm)},
                 {"BLOCK_SIZE_N", Value(bn)},
                 {"BLOCK_SIZE_K", Value(bk)},
                 {"GROUP_SIZE_M", Value(g)},
                 {"num_warps", Value(w)},
                 {"num_stages", Value(s)}});
}

Policy moe_policy() {
  Policy p;
  p.kernel = "fused_moe";
  p.selection = "per-size";
  for (auto [m, c] : {std::pair{1, moe_config(16, 64, 256, 1, 4, 2)}, std::pair{64, moe_config(32, 256, 128, 16, 4, 2)},
                      std::pair{4096, moe_config(128, 128, 64, 32, 8, 3)}})
    p.entries.push_back({Bindings{{"E", Value(8)}, {"N", Value(14336)}, {"K", Value(4096)}, {"M", Value(m)}}, c,
                         Microseconds(10.0 * m)});
  return p;
}

std::string run_python(const fs::path& dir, const std::string& code) {
  const fs::path script = dir / "probe.py";
  tunekit::testing::write_file(script, code);
  const std::string cmd = "cd '" + dir.string() + "' && python3 probe.py 2>&1";
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    ::pclose(f);
  }
  return out;
}

}  // namespace

TEST(PythonPolicy, TheModuleDispatchesTunedAndUntunedSizes) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "moe_policy.py", emit_python(moe_policy()));
  const std::string out = run_python(dir, R"Y(import moe_policy
print(moe_policy.select(E=8, N=14336, K=4096, M=64)["BLOCK_SIZE_N"])
print(moe_policy.select(E=8, N=14336, K=4096, M=3000)["BLOCK_SIZE_M"])
print(moe_policy.select(E=8, N=14336, K=4096, M=2)["num_stages"])
)Y");
  EXPECT_EQ(out, "256\n128\n2\n");
}

TEST(PythonPolicy, TritonConfigsHoldMetaParametersAndLaunchOptionsApart) {
  const fs::path dir = tunekit::testing::fresh_dir();
  Policy p = moe_policy();
  p.entries.push_back(p.entries.front());  // a repeated config is listed once
  p.entries.back().size["M"] = Value(2);
  tunekit::testing::write_file(dir / "triton.py", R"Y(class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, **rest):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages
)Y");
  tunekit::testing::write_file(dir / "moe_configs.py", emit_triton_configs(p));
  const std::string out = run_python(dir, R"Y(import moe_configs
print(len(moe_configs.CONFIGS))
c = moe_configs.CONFIGS[2]
print(sorted(c.kwargs), c.num_warps, c.num_stages)
)Y");
  EXPECT_EQ(out, "3\n['BLOCK_SIZE_K', 'BLOCK_SIZE_M', 'BLOCK_SIZE_N', 'GROUP_SIZE_M'] 8 3\n");
  EXPECT_TRUE(is_triton_launch_option("num_warps"));
  EXPECT_FALSE(is_triton_launch_option("BLOCK_SIZE_M"));
}

// triton.Config's own arguments are num_warps, num_stages, num_ctas and
// maxnreg (triton 3.x): another tuned launch option given as one would stop
// the module importing; in its kwargs it reaches the launch.
TEST(PythonPolicy, TritonConfigsTakeOtherLaunchOptionsInTheirKwargs) {
  const fs::path dir = tunekit::testing::fresh_dir();
  Policy p = moe_policy();
  for (auto& e : p.entries) {
    e.config.set("maxnreg", Value(128));
    e.config.set("enable_fp_fusion", Value(0));
  }
  tunekit::testing::write_file(dir / "triton.py", R"Y(class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None, ir_override=None):
        self.kwargs, self.num_warps, self.maxnreg = kwargs, num_warps, maxnreg
)Y");
  tunekit::testing::write_file(dir / "moe_configs.py", emit_triton_configs(p));
  const std::string out = run_python(dir, R"Y(import moe_configs
c = moe_configs.CONFIGS[0]
print(c.kwargs["enable_fp_fusion"], c.maxnreg, c.num_warps)
)Y");
  EXPECT_EQ(out, "0 128 4\n");
}

TEST(PythonPolicy, VllmFilesAreNamedAndKeyedAsVllmReadsThem) {
  Policy p = moe_policy();
  p.entries.push_back({Bindings{{"E", Value(64)}, {"N", Value(2816)}, {"K", Value(2048)}, {"M", Value(16)}},
                       moe_config(16, 64, 128, 1, 4, 3), std::nullopt});
  auto files = emit_vllm_moe(p, "NVIDIA H200 (triton 3.6.0, torch 2.11.0)", "");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].name, "E=8,N=7168,device_name=NVIDIA_H200.json");
  EXPECT_EQ(files[1].name, "E=64,N=1408,device_name=NVIDIA_H200.json");
  const auto j = nlohmann::json::parse(files[0].text);
  ASSERT_EQ(j.size(), 3u);
  // vLLM picks the tuned batch size nearest to the number of tokens
  auto lookup = [&](int tokens) {
    std::string best;
    long gap = -1;
    for (const auto& [key, value] : j.items()) {
      const long d = std::labs(std::stol(key) - tokens);
      if (gap < 0 || d < gap) gap = d, best = key;
    }
    return j.at(best);
  };
  EXPECT_EQ(lookup(50)["BLOCK_SIZE_N"], 256);
  EXPECT_EQ(lookup(3000)["num_warps"], 8);
  for (const char* k : {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"})
    EXPECT_TRUE(lookup(1).contains(k)) << k;
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA H200", "fp8_w8a8")[0].name,
            "E=8,N=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8.json");
  // vLLM names every card of the H200 family's file NVIDIA_H200; another
  // card keeps its own name, H20 and H200-like words included.
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA H200 NVL (triton 3.6.0)", "")[0].name, "E=8,N=7168,device_name=NVIDIA_H200.json");
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA H20", "")[0].name, "E=8,N=7168,device_name=NVIDIA_H20.json");
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA H100 80GB HBM3", "")[0].name, "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json");
  // A GPU's own name may hold " (": only the Triton backend's suffix goes.
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA A100 (rev 1) (triton 3.6.0, torch 2.11.0)", "")[0].name,
            "E=8,N=7168,device_name=NVIDIA_A100_(rev_1).json");
  // Block-quantised weights: vLLM's get_config_file_name appends
  // f",block_shape={block_shape}" with the spaces dropped, after the dtype
  // (int8_w8a8 has no dtype part there, and still a block shape).
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA H200", "fp8_w8a8", "M", {128, 128})[0].name,
            "E=8,N=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
  EXPECT_EQ(emit_vllm_moe(p, "NVIDIA H200", "", "M", {64, 128})[0].name,
            "E=8,N=7168,device_name=NVIDIA_H200,block_shape=[64,128].json");
  EXPECT_THROW(emit_vllm_moe(p, "NVIDIA H200", "fp8_w8a8", "M", {128}), std::invalid_argument);
  EXPECT_THROW(emit_vllm_moe(p, "NVIDIA H200", "fp8_w8a8", "M", {0, 128}), std::invalid_argument);
  Policy no_e = p;
  no_e.entries[0].size.erase("E");
  EXPECT_THROW(emit_vllm_moe(no_e, "NVIDIA H200", ""), std::runtime_error);
  // Two sizes that differ only in K would share an entry, and one would be
  // lost without a word: refused, naming both.
  Policy two_k = p;
  two_k.entries.push_back(two_k.entries.back());
  two_k.entries.back().size["K"] = Value(4096);
  try {
    (void)emit_vllm_moe(two_k, "NVIDIA H200", "");
    ADD_FAILURE() << "two configs for one file entry";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("differ only in other axes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("K=4096"), std::string::npos) << e.what();
  }
  // What vLLM's form cannot hold is refused, naming it: a value that is no
  // integer, an N that is not twice an intermediate size.
  auto refusal = [](const Policy& policy) -> std::string {
    try {
      (void)emit_vllm_moe(policy, "NVIDIA H200", "");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(emitted)";
  };
  Policy real_stages = p;
  real_stages.entries[0].config = Config({{"BLOCK_SIZE_M", Value(16)},
                                          {"BLOCK_SIZE_N", Value(64)},
                                          {"BLOCK_SIZE_K", Value(128)},
                                          {"GROUP_SIZE_M", Value(1)},
                                          {"num_warps", Value(4)},
                                          {"num_stages", Value(2.5)}});
  EXPECT_NE(refusal(real_stages).find("vLLM's MoE files hold integers; num_stages is 2.5 in {"), std::string::npos)
      << refusal(real_stages);
  Policy odd_n = p;
  odd_n.entries[0].size["N"] = Value(7);
  EXPECT_NE(refusal(odd_n).find("has an odd N"), std::string::npos) << refusal(odd_n);
}

// vLLM launches its fused_moe_kernel with the config's entries as keyword
// arguments: a tuned launch option beyond num_warps and num_stages is part
// of what was measured and goes into the file; a parameter vLLM's kernel
// does not take is refused, naming it, not left out without a word.
TEST(PythonPolicy, VllmFilesKeepEveryTunedLaunchOptionAndRefuseOtherParameters) {
  Policy p = moe_policy();
  for (auto& e : p.entries) e.config.set("maxnreg", Value(128));
  const auto j = nlohmann::json::parse(emit_vllm_moe(p, "NVIDIA H200", "")[0].text);
  for (const auto& [m, config] : j.items()) EXPECT_EQ(config.value("maxnreg", 0), 128) << m;
  Policy swizzle = moe_policy();
  swizzle.entries[1].config.set("SWIZZLE", Value(2));
  try {
    (void)emit_vllm_moe(swizzle, "NVIDIA H200", "");
    ADD_FAILURE() << "a parameter vLLM's kernel does not take was emitted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the tuned parameter SWIZZLE is none of these"), std::string::npos)
        << e.what();
  }
}

// A size tuned in part (a budget, a stop) is marked at its entry in every
// format that has room: a comment in the header and the Python module, a
// field in the JSON; vLLM's files have none (a key is a batch size, a
// config's keys go to the kernel), so emit_vllm_moe names its batch sizes
// for the caller to say, and adds nothing to the file.
TEST(PythonPolicy, ASizeTunedInPartIsMarkedInEveryFormat) {
  Policy p = moe_policy();
  p.entries[1].tuned_in_part = PartialTune{12, 40};
  const std::string header = emit_header(p);
  EXPECT_NE(header.find("// 1 of the 3 tuned sizes were tuned in part"), std::string::npos) << header;
  EXPECT_NE(header.find("{8, 4096, 64, 14336},  // tuned in part: 12 of 40 valid configs measured\n"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("{32, 256, 128, 16, 4, 2},  // tuned in part: 12 of 40 valid configs measured\n"),
            std::string::npos)
      << header;
  const std::string whole = emit_header(moe_policy());
  EXPECT_EQ(std::count(header.begin(), header.end(), '\n') - std::count(whole.begin(), whole.end(), '\n'), 2)
      << "the summary's two lines; the rows' comments share their rows' lines";

  const auto j = nlohmann::json::parse(emit_json(p));
  EXPECT_EQ(j["entries"][1]["tuned_in_part"], (nlohmann::json{{"measured", 12}, {"valid", 40}}));
  EXPECT_FALSE(j["entries"][0].contains("tuned_in_part"));
  EXPECT_FALSE(j["entries"][2].contains("tuned_in_part"));

  const std::string module = emit_python(p);
  EXPECT_NE(module.find("# 1 of the 3 tuned sizes were tuned in part"), std::string::npos) << module;
  EXPECT_NE(module.find("\"num_stages\": 2}),  # tuned in part: 12 of 40 valid configs measured\n"), std::string::npos)
      << module;
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "moe_policy.py", module);
  EXPECT_EQ(
      run_python(dir, "import moe_policy\nprint(moe_policy.select(E=8, N=14336, K=4096, M=64)['BLOCK_SIZE_N'])\n"),
      "256\n");

  const auto files = emit_vllm_moe(p, "NVIDIA H200", "");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].tuned_in_part, std::vector<std::int64_t>{64});
  EXPECT_EQ(files[0].text, emit_vllm_moe(moe_policy(), "NVIDIA H200", "")[0].text);
  EXPECT_TRUE(emit_vllm_moe(moe_policy(), "NVIDIA H200", "")[0].tuned_in_part.empty());
}

// What emit may replace: a file of the kind it writes, and no other (a
// tune's report, a hand-written file, another kind emit writes); and what
// the other outputs may not (emitted_kind_of(): any of emit's).
TEST(PythonPolicy, EachEmittedFileIsToldByItsKind) {
  const Policy p = moe_policy();
  const std::vector<std::pair<EmittedKind, std::string>> files = {
      {EmittedKind::header, emit_header(p)},
      {EmittedKind::json, emit_json(p)},
      {EmittedKind::python, emit_python(p)},
      {EmittedKind::triton_configs, emit_triton_configs(p)},
      {EmittedKind::vllm_moe, emit_vllm_moe(p, "NVIDIA H200", "")[0].text}};
  for (const auto& [kind, text] : files) {
    EXPECT_EQ(emitted_kind_of(text), kind) << emitted_kind_name(kind);
    for (const auto& [other, ignored] : files)
      EXPECT_EQ(is_emitted(text, other), kind == other)
          << emitted_kind_name(kind) << " as " << emitted_kind_name(other);
  }
  // online.hpp's new file (after a byte order mark too); a tune's JSON
  // report, CSV and page, none of emit's; a hand-written header.
  EXPECT_TRUE(is_emitted(R"({"kernel": "", "selection": "online", "entries": []})", EmittedKind::json));
  EXPECT_TRUE(
      is_emitted("\xEF\xBB\xBF\n {\"kernel\": \"\", \"selection\": \"online\", \"entries\": []}", EmittedKind::json));
  EXPECT_FALSE(is_emitted(R"({"kernel": "k", "device": "cpu", "sizes": []})", EmittedKind::json));
  for (const char* report : {R"({"kernel": "k", "device": "cpu", "sizes": []})", "Size,Config,Status\n",
                             "<!DOCTYPE html>\n<html lang=\"en\">", "", "{"})
    EXPECT_EQ(emitted_kind_of(report), std::nullopt) << report;
  EXPECT_FALSE(is_emitted("#pragma once\n// Generated by tunekit: the tuned configs of", EmittedKind::header));
  EXPECT_FALSE(is_emitted("{}", EmittedKind::vllm_moe));
}
