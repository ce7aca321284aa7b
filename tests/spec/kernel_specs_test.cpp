// The GPU kernel library's specs (kernels/**.yaml) checked without a GPU:
// each loads, and for every size its constraints evaluate over an H200's
// properties (as `tunekit devices` reports them) to a non-empty space, in
// which the rule config, where the spec has rules, exists. A typo in a
// constraint or a size would otherwise surface only on the GPU machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "tunekit/rules.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace fs = std::filesystem;
using namespace tunekit;

namespace {

Bindings h200() {
  Bindings b;
  b["compute_capability"] = Value(std::int64_t{90});
  b["cc_major"] = Value(std::int64_t{9});
  b["cc_minor"] = Value(std::int64_t{0});
  b["sm_count"] = Value(std::int64_t{132});
  b["l2_bytes"] = Value(std::int64_t{62914560});
  b["max_threads_per_block"] = Value(std::int64_t{1024});
  b["max_threads_per_sm"] = Value(std::int64_t{2048});
  b["max_blocks_per_sm"] = Value(std::int64_t{32});
  b["registers_per_block"] = Value(std::int64_t{65536});
  b["registers_per_sm"] = Value(std::int64_t{65536});
  b["registers_per_thread"] = Value(std::int64_t{255});
  b["shared_memory_per_block"] = Value(std::int64_t{49152});
  b["shared_memory_per_block_optin"] = Value(std::int64_t{232448});
  b["shared_memory_per_sm"] = Value(std::int64_t{233472});
  b["warp_size"] = Value(std::int64_t{32});
  b["memory_bytes"] = Value(std::int64_t{150109880320});
  return b;
}

std::string str(const Bindings& b) {
  std::string out;
  for (const auto& [k, v] : b) out += k + "=" + v.str() + " ";
  return out;
}

std::vector<fs::path> kernel_specs() {
  std::vector<fs::path> specs;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(TUNEKIT_SOURCE_DIR) / "kernels"))
    if (e.path().extension() == ".yaml") specs.push_back(e.path());
  return specs;
}

}  // namespace

TEST(KernelSpecs, EachSizeHasValidConfigsOnAnH200) {
  const auto specs = kernel_specs();
  ASSERT_GE(specs.size(), 6u);  // four GEMMs, softmax, flash decoding
  for (const auto& file : specs) {
    SCOPED_TRACE(file.string());
    const Spec spec = load_spec(file);
    ASSERT_FALSE(spec.sizes.empty());
    // A seed that no size allows would never be tried: a slip in the spec.
    std::vector<bool> seed_used(spec.search.seeds.size(), false);
    for (const auto& size : spec.sizes) {
      Bindings constants = h200();
      for (const auto& [k, v] : size) constants[k] = v;
      const Space space(spec.parameters, spec.constraints, constants);
      EXPECT_GT(space.count(), 0u) << "size " << str(size);
      if (!spec.search.rules.empty()) {
        auto rc = rule_config(space, constants, spec.search.rules, spec.default_config);
        ASSERT_TRUE(rc.has_value()) << "size " << str(size);
        EXPECT_FALSE(space.why_invalid(rc->config).has_value());
      }
      for (std::size_t i = 0; i < seed_used.size(); ++i)
        seed_used[i] = seed_used[i] || space.contains(spec.search.seeds[i]);
    }
    for (std::size_t i = 0; i < seed_used.size(); ++i)
      EXPECT_TRUE(seed_used[i]) << "search.seeds[" << i << "] " << spec.search.seeds[i].str() << " is valid at no size";
  }
}

// A file that a kernel spec's comment cites (for a figure, a finding) is in
// the repository and is about that spec: it names it, as the log of a run
// that tuned it does. gemm_mma.yaml once cited docs/PERFORMANCE.md for
// mma.sync's rate at the large shapes, a figure the page never held.
TEST(KernelSpecs, TheFilesTheirCommentsCiteExistAndNameThem) {
  const fs::path root = TUNEKIT_SOURCE_DIR;
  // A path of this repository, not one inside another's (vLLM's
  // benchmarks/kernels/...).
  const std::regex cited(R"((?:^|[\s(])((?:docs|lab|bench|kernels|examples)/[A-Za-z0-9_./-]*[A-Za-z0-9_]))");
  std::size_t citations = 0;
  for (const auto& file : kernel_specs()) {
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      const auto hash = line.find('#');
      if (hash == std::string::npos || line.find_first_not_of(' ') != hash) continue;
      const std::string comment = line.substr(hash + 1);
      for (std::sregex_iterator m(comment.begin(), comment.end(), cited), end; m != end; ++m) {
        const fs::path path = root / (*m)[1].str();
        const std::string where = file.string() + ":" + std::to_string(number) + ": " + (*m)[1].str();
        ++citations;
        ASSERT_TRUE(fs::is_regular_file(path)) << where;
        std::ifstream text(path, std::ios::binary);
        const std::string body{std::istreambuf_iterator<char>(text), std::istreambuf_iterator<char>()};
        EXPECT_NE(body.find(file.filename().string()), std::string::npos)
            << where << " does not name " << file.filename().string();
      }
    }
  }
  EXPECT_GE(citations, 1u);
}
