// The five published search spaces (tests/space/data/spaces/*.json): exact Cartesian
// sizes and valid counts.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/space.hpp"

using tunekit::Expression;
using tunekit::Parameter;
using tunekit::SourceLocation;
using tunekit::Space;
using tunekit::Value;

namespace {

namespace fs = std::filesystem;

// Five published spaces with their exact counts (copied from the team's
// shared folder: data a test needs lives in the repository).
fs::path spaces_dir() { return fs::path(std::string(TUNEKIT_SOURCE_DIR) + "/tests/space/data/spaces"); }

struct Published {
  std::string name;
  std::vector<Parameter> params;
  std::vector<Expression> constraints;
  std::uint64_t cartesian = 0;
  std::uint64_t valid = 0;
};

Published load(const std::string& file) {
  fs::path path = spaces_dir() / file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  nlohmann::json j = nlohmann::json::parse(in);
  Published out;
  out.name = j.at("name").get<std::string>();
  for (const auto& p : j.at("parameters")) {
    Parameter param{p.at("name").get<std::string>(), {}, SourceLocation{path.string(), 0, 0}};
    for (const auto& v : p.at("values")) {
      if (v.is_number_integer()) param.values.emplace_back(v.get<std::int64_t>());
      else if (v.is_number_float()) param.values.emplace_back(v.get<double>());
      else param.values.emplace_back(v.get<std::string>());
    }
    out.params.push_back(std::move(param));
  }
  for (const auto& c : j.at("constraints"))
    out.constraints.push_back(Expression::parse(c.get<std::string>(), SourceLocation{path.string(), 0, 0}));
  out.cartesian = j.at("expected").at("cartesian").get<std::uint64_t>();
  out.valid = j.at("expected").at("valid").get<std::uint64_t>();
  return out;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

class SharedSpace : public testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(SharedSpace, ExactCounts) {
  ASSERT_TRUE(fs::is_directory(spaces_dir())) << spaces_dir() << " is missing from the repository";
  Published p = load(GetParam());
  auto t0 = std::chrono::steady_clock::now();
  Space space(p.params, p.constraints);
  EXPECT_EQ(space.cartesian_size(), p.cartesian);
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(space.count(), p.valid);
  double count_ms = ms_since(t1);

  auto t2 = std::chrono::steady_clock::now();
  std::uint64_t visited = 0;
  std::vector<std::uint32_t> previous;
  bool ordered = true;
  space.for_each([&](std::span<const std::uint32_t> ix) {
    ++visited;
    std::vector<std::uint32_t> current(ix.begin(), ix.end());
    if (!previous.empty() && !(previous < current)) ordered = false;
    previous = std::move(current);
    return true;
  });
  double for_each_ms = ms_since(t2);
  EXPECT_EQ(visited, p.valid);
  EXPECT_TRUE(ordered) << "for_each is not in lexicographic order";
  (void)t0;

  // A few enumerated configs are contained; their neighbours agree with why_invalid.
  for (const auto& c : space.enumerate(50)) EXPECT_TRUE(space.contains(c)) << c.str();

  std::printf("[ shared   ] %-13s cartesian %10llu valid %8llu  count %7.2f ms  for_each %7.2f ms\n", p.name.c_str(),
              static_cast<unsigned long long>(p.cartesian), static_cast<unsigned long long>(p.valid), count_ms,
              for_each_ms);
}

INSTANTIATE_TEST_SUITE_P(Published, SharedSpace,
                         testing::Values("dedispersion.json", "expdist.json", "gemm.json", "hotspot.json",
                                         "microhh.json"),
                         [](const testing::TestParamInfo<const char*>& param_info) {
                           std::string name = param_info.param;
                           return name.substr(0, name.find('.'));
                         });

// Dedispersion is small enough to check config by config against a
// brute-force loop that calls Expression::test.
TEST(SharedSpaceBruteForce, DedispersionMatchesConfigByConfig) {
  ASSERT_TRUE(fs::is_directory(spaces_dir())) << spaces_dir() << " is missing from the repository";
  Published p = load("dedispersion.json");
  Space space(p.params, p.constraints);
  std::vector<std::vector<std::uint32_t>> want;
  std::vector<std::uint32_t> ix(p.params.size(), 0);
  std::vector<Value> args;
  while (true) {
    bool ok = true;
    for (const auto& c : p.constraints) {
      args.clear();
      for (const auto& name : c.variables())
        for (std::size_t k = 0; k < p.params.size(); ++k)
          if (p.params[k].name == name) args.push_back(p.params[k].values[ix[k]]);
      ok = ok && c.test(args);
    }
    if (ok) want.push_back(ix);
    std::size_t k = ix.size();
    bool done = true;
    while (k > 0) {
      --k;
      if (++ix[k] < p.params[k].values.size()) {
        done = false;
        break;
      }
      ix[k] = 0;
    }
    if (done) break;
  }
  EXPECT_EQ(want.size(), p.valid);
  std::vector<std::vector<std::uint32_t>> got;
  space.for_each([&](std::span<const std::uint32_t> v) {
    got.emplace_back(v.begin(), v.end());
    return true;
  });
  EXPECT_EQ(got, want);
}

// ExpDist's count needs Kernel Tuner's implicit block-size restriction,
// which the file lists as its fifth constraint.
TEST(SharedSpaceBruteForce, ExpdistNeedsTheImplicitBlockSizeConstraint) {
  ASSERT_TRUE(fs::is_directory(spaces_dir())) << spaces_dir() << " is missing from the repository";
  Published p = load("expdist.json");
  ASSERT_EQ(p.constraints.size(), 5u);
  EXPECT_EQ(p.constraints[4].text(), "block_size_x * block_size_y <= 1024");
  std::vector<Expression> first_four(p.constraints.begin(), p.constraints.begin() + 4);
  EXPECT_EQ(Space(p.params, first_four).count(), 504000u);
}
