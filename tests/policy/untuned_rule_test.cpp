// The rule for a size never tuned, in the three places `tunekit emit` puts
// it: the C++ header (the reference: compiled and run), the Python module
// (run by python3) and the JSON that online.hpp's lookup reads. For every
// size asked, all three must pick the same config, the spec's checks and
// pinned parameters applied.
#include <gtest/gtest.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/online.hpp"
#include "tunekit/policy.hpp"

using namespace tunekit;
namespace fs = std::filesystem;

namespace {

struct Probe {
  std::vector<std::pair<std::string, std::vector<Value>>> axes;  // each size's values (ints or floats), crossed
};

// A size's value as C++, Python and a label write it: 5, 0.5.
std::string text_of(const Value& v) {
  return v.is_int() ? std::to_string(v.as_int()) : fmt::format("{}", v.to_double());
}

// Every combination of the axes' values, as (name, value) lists.
std::vector<std::vector<std::pair<std::string, Value>>> grid(const Probe& probe) {
  std::vector<std::vector<std::pair<std::string, Value>>> out{{}};
  for (const auto& [name, values] : probe.axes) {
    std::vector<std::vector<std::pair<std::string, Value>>> next;
    for (const auto& partial : out)
      for (auto v : values) {
        next.push_back(partial);
        next.back().emplace_back(name, v);
      }
    out = std::move(next);
  }
  return out;
}

std::string run(const std::vector<std::string>& argv, const fs::path& cwd = {}) {
  auto r = detail::run_process(argv, std::chrono::seconds(120), cwd);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// "M=5 N=64: BM=8 ..." for each size of the grid, from the compiled header.
// `params` are printed in this order; the header takes the sizes in `order`.
std::string from_header(const fs::path& dir, const Policy& p, const Probe& probe, const std::vector<std::string>& order,
                        const std::vector<std::string>& params) {
  std::string body;
  for (const auto& size : grid(probe)) {
    std::vector<std::string> args, label;
    for (const auto& n : order)
      for (const auto& [k, v] : size)
        if (k == n) args.push_back(v.is_int() ? text_of(v) + "LL" : text_of(v));
    for (const auto& [k, v] : size) label.push_back(fmt::format("{}={}", k, text_of(v)));
    std::string fmtstr = fmt::format("{}:", fmt::join(label, " ")), values;
    for (const auto& q : params) {
      fmtstr += " " + q + "=%s";
      values += fmt::format(", str(c.{})", q);
    }
    body += fmt::format(
        "  {{ const auto c = {0}_select({1}); if (!{0}_has_config({1})) std::printf(\"{4} none\\n\"); else "
        "std::printf(\"{2}\\n\"{3}); }}\n",
        p.kernel, fmt::join(args, ", "), fmtstr, values, fmt::format("{}:", fmt::join(label, " ")));
  }
  tunekit::testing::write_file(dir / "policy.hpp", emit_header(p));
  tunekit::testing::write_file(dir / "main.cpp", R"(#include <cstdio>
#include <cstdint>
#include <string>
#include "policy.hpp"
using namespace tunekit_policy;
// As Python's str() and JSON write them: 64, 1.25, row.
std::string str(std::int64_t v) { return std::to_string(v); }
std::string str(const char* v) { return v; }
std::string str(double v) { char b[32]; std::snprintf(b, sizeof b, "%g", v); return b; }
#define str(x) str(x).c_str()
int main() {
)" + body + "}\n");
  run({"c++", "-std=c++17", "-o", (dir / "main").string(), (dir / "main.cpp").string()});
  return run({(dir / "main").string()});
}

std::string from_python(const fs::path& dir, const Policy& p, const Probe& probe,
                        const std::vector<std::string>& params) {
  tunekit::testing::write_file(dir / (p.kernel + "_policy.py"), emit_python(p));
  std::string code = "import " + p.kernel + "_policy as policy\n";
  code += "def show(v):\n    return '%g' % v if isinstance(v, float) else str(v)\n";
  for (const auto& size : grid(probe)) {
    std::vector<std::string> kwargs, label;
    for (const auto& [k, v] : size) {
      kwargs.push_back(fmt::format("{}={}", k, text_of(v)));
      label.push_back(fmt::format("{}={}", k, text_of(v)));
    }
    std::vector<std::string> shown;
    for (const auto& q : params) shown.push_back(fmt::format("' {0}=' + show(c['{0}'])", q));
    code += fmt::format("c = policy.select({0})\nprint('{1}: none' if c is None else '{1}:' + {2})\n",
                        fmt::join(kwargs, ", "), fmt::join(label, " "), fmt::join(shown, " + "));
  }
  tunekit::testing::write_file(dir / "probe.py", code);
  return run({"python3", "probe.py"}, dir);
}

std::string from_online(const fs::path& dir, const Policy& p, const Probe& probe,
                        const std::vector<std::string>& params) {
  tunekit::testing::write_file(dir / "policy.json", emit_json(p));
  online::Tuner tuner(dir / "policy.json", online::Mode::lookup_only);
  std::string out;
  for (const auto& size : grid(probe)) {
    online::Size s;
    std::vector<std::string> label;
    for (const auto& [k, v] : size) {
      s[k] = v.is_int() ? online::SizeValue(v.as_int()) : online::SizeValue(v.to_double());
      label.push_back(fmt::format("{}={}", k, text_of(v)));
    }
    out += fmt::format("{}:", fmt::join(label, " "));
    if (!tuner.find(s) && !tuner.nearest(s)) {
      EXPECT_THROW((void)tuner.get(s, nullptr), online::NoConfigError);
      out += " none\n";
      continue;
    }
    const auto c = tuner.get(s, nullptr).params;
    for (const auto& q : params) {
      const auto& v = c.at(q);
      char b[32];
      if (v.is_float()) std::snprintf(b, sizeof b, "%g", v.as_float());
      out += " " + q + "=" + (v.is_float() ? std::string(b) : v.is_string() ? v.as_string() : v.str());
    }
    out += "\n";
  }
  return out;
}

void expect_all_agree(const Policy& p, const Probe& probe, const std::vector<std::string>& order,
                      const std::vector<std::string>& params) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const std::string header = from_header(dir, p, probe, order, params);
  ASSERT_FALSE(header.empty());
  EXPECT_EQ(from_python(dir, p, probe, params), header) << "the Python module against the header";
  EXPECT_EQ(from_online(dir, p, probe, params), header) << "online.hpp's lookup against the header";
}

PolicyEntry entry(Bindings size, Config config) { return {std::move(size), std::move(config), Microseconds(1.0)}; }

}  // namespace

TEST(UntunedRule, PythonAndOnlineSkipConfigsTheConstraintsRejectAsTheHeaderDoes) {
  // QA's repro: T = 4 tuned at n = 4 breaks T <= n at n = 2, so n = 2 gets
  // n = 256's T = 2 (the Python module and online.hpp gave 4).
  Policy p;
  p.kernel = "kp";
  p.selection = "per-size";
  p.size_order = {"n"};
  p.entries = {entry({{"n", Value(4)}}, Config({{"T", Value(4)}})),
               entry({{"n", Value(256)}}, Config({{"T", Value(2)}}))};
  p.checks = policy_checks({Expression::parse("T <= n")}, {}, p, {});
  ASSERT_EQ(p.checks.constraints.size(), 1u);
  const fs::path dir = tunekit::testing::fresh_dir();
  EXPECT_EQ(from_python(dir, p, {{{"n", {2}}}}, {"T"}), "n=2: T=2\n");
  EXPECT_EQ(from_online(dir, p, {{{"n", {2}}}}, {"T"}), "n=2: T=2\n");
  expect_all_agree(p, {{{"n", {1, 2, 3, 4, 5, 16, 100, 256, 1000}}}}, {"n"}, {"T"});
}

TEST(UntunedRule, PythonAndOnlineRecomputePinnedParametersAsTheHeaderDoes) {
  // QA's repro, the transpose tutorial's TILE_I pinned to n: n = 20 needs 16
  // and n = 100 needs 32 whatever the nearest tuned size had (they gave 8 and 16).
  Policy p;
  p.kernel = "transpose";
  p.selection = "per-size";
  p.size_order = {"n"};
  for (auto [n, tile, tj] : {std::tuple{16, 8, 4}, std::tuple{64, 16, 8}, std::tuple{256, 32, 8}})
    p.entries.push_back(entry({{"n", Value(n)}}, Config({{"TILE_I", Value(tile)}, {"TILE_J", Value(tj)}})));
  p.pinned = pinned_parameters({Expression::parse("TILE_I == (8 if n <= 16 else (16 if n <= 64 else 32))")}, p);
  ASSERT_EQ(p.pinned.size(), 1u);
  const fs::path dir = tunekit::testing::fresh_dir();
  EXPECT_EQ(from_python(dir, p, {{{"n", {20, 100}}}}, {"TILE_I"}), "n=20: TILE_I=16\nn=100: TILE_I=32\n");
  EXPECT_EQ(from_online(dir, p, {{{"n", {20, 100}}}}, {"TILE_I"}), "n=20: TILE_I=16\nn=100: TILE_I=32\n");
  expect_all_agree(p, {{{"n", {1, 15, 17, 20, 40, 63, 65, 100, 200, 300, 5000}}}}, {"n"}, {"TILE_I", "TILE_J"});
}

TEST(UntunedRule, PythonBreaksExactTiesAsTheHeader) {
  // 8/3 * 9 and 8 * 3 are both 24 in doubles: a tie, to the earlier entry.
  // A sum of logarithms rounds them apart (the module gave T = 2).
  Policy p;
  p.kernel = "tie";
  p.selection = "per-size";
  p.entries = {entry({{"M", Value(3)}, {"N", Value(1)}}, Config({{"T", Value(1)}})),
               entry({{"M", Value(1)}, {"N", Value(3)}}, Config({{"T", Value(2)}}))};
  const fs::path dir = tunekit::testing::fresh_dir();
  EXPECT_EQ(from_python(dir, p, {{{"M", {8}}, {"N", {9}}}}, {"T"}), "M=8 N=9: T=1\n");
  expect_all_agree(p, {{{"M", {1, 2, 8, 9, 27}}, {"N", {1, 3, 8, 9, 24}}}}, {"M", "N"}, {"T"});
}

TEST(UntunedRule, AllThreeAgreeOverEveryOperatorTheChecksMayUse) {
  // Sizes declared N before M; float and string parameters ride along; a
  // machine property caps BM; BK is pinned; the checks use each operator
  // the header writes, and some sizes leave no config allowed.
  Policy p;
  p.kernel = "mix";
  p.selection = "per-size";
  p.size_order = {"N", "M"};
  auto cfg = [](int bm, int cl, int bk, double f, const char* s) {
    return Config(
        {{"BM", Value(bm)}, {"CL", Value(cl)}, {"BK", Value(bk)}, {"F", Value(f)}, {"S", Value(std::string(s))}});
  };
  p.entries = {entry({{"M", Value(64)}, {"N", Value(64)}}, cfg(64, 2, 8, 0.5, "a")),
               entry({{"M", Value(1024)}, {"N", Value(64)}}, cfg(128, 1, 16, 1.25, "b")),
               entry({{"M", Value(4096)}, {"N", Value(64)}}, cfg(256, 1, 32, 2.0, "c")),
               entry({{"M", Value(16)}, {"N", Value(4096)}}, cfg(16, 1, 8, -1.5, "d")),
               entry({{"M", Value(300)}, {"N", Value(300)}}, cfg(32, 2, 16, 3.0, "e"))};
  const std::vector<Expression> constraints = {
      Expression::parse("CL == 1 or ceil_div(M, BM) % 2 == 0"),
      Expression::parse("BM * 1000 <= smem_bytes"),
      Expression::parse("BK == (8 if M <= 64 else (16 if M <= 1024 else 32))"),
      Expression::parse("max(BM, BK, 1) // min(BM, BK) >= 2 and abs(N - BM) >= 0"),
      Expression::parse("BM not in [512] and CL in [1, 2] and not (BM == 3)"),
      Expression::parse("(N >> 6) << 6 == N or N < 64 or N % 100 == 0"),
      Expression::parse("(~BM & 1) == 1 or -CL < 0"),
      Expression::parse("1 <= CL < CL + 1 <= 3 and (BM | 1) ^ 1 >= BM - 1"),
      Expression::parse("F * BM > 1"),  // a float: unchecked, everywhere
  };
  p.pinned = pinned_parameters(constraints, p);
  ASSERT_EQ(p.pinned.size(), 1u);
  p.checks = policy_checks(constraints, {}, p, {{"smem_bytes", Value(150000)}});
  ASSERT_EQ(p.checks.constraints.size(), 8u);
  expect_all_agree(p,
                   {{{"M", {1, 3, 5, 17, 63, 65, 100, 130, 500, 1000, 2000, 3000, 5000, 100000}},
                     {"N", {1, 32, 63, 64, 65, 100, 128, 300, 4000, 4096, 10000}}}},
                   {"N", "M"}, {"BM", "CL", "BK", "F", "S"});
}

// A rule may compute a pinned value that no config has (V == n // 1000 is 0
// below 1000): the header's _allowed says so, as the spec's values do,
// whether the values are a step range or a list; the three still agree.
TEST(UntunedRule, APinnedValueOutsideItsParametersValuesIsNotAllowed) {
  for (const bool range : {true, false}) {
    Policy p;
    p.kernel = "tile";
    p.selection = "per-size";
    p.size_order = {"n"};
    for (auto [n, v] : {std::pair{1000, 1}, std::pair{4000, 4}, std::pair{9000, 8}})
      p.entries.push_back(entry({{"n", Value(n)}}, Config({{"V", Value(v)}, {"X", Value(n / 1000)}})));
    const std::vector<Expression> constraints = {Expression::parse("V == (n // 1000 if n < 8000 else 8)")};
    p.pinned = pinned_parameters(constraints, p);
    ASSERT_EQ(p.pinned.size(), 1u);
    Parameter v{"V", {}, {}};
    for (int x : range ? std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8} : std::vector<int>{1, 2, 4, 8})
      v.values.emplace_back(x);
    std::vector<Expression> checked = constraints;
    for (auto& c : pinned_value_checks({v}, p.pinned)) checked.push_back(std::move(c));
    ASSERT_EQ(checked.size(), 2u);
    EXPECT_EQ(checked[1].text(), range ? "V >= 1 and V <= 8 and (V - 1) % 1 == 0" : "V in [1, 2, 4, 8]");
    p.checks = policy_checks(constraints, {v}, p, {});
    ASSERT_EQ(p.checks.constraints.size(), 2u);
    const fs::path dir = tunekit::testing::fresh_dir();
    tunekit::testing::write_file(dir / "policy.hpp", emit_header(p));
    tunekit::testing::write_file(dir / "main.cpp", R"(#include <cstdio>
#include "policy.hpp"
using namespace tunekit_policy;
int main() {
  std::printf("%d %d %d %d\n", tile_allowed({0, 0}, 800), tile_allowed({1, 1}, 1000), tile_allowed({3, 3}, 3000),
              tile_allowed({8, 9}, 9500));
}
)");
    run({"c++", "-std=c++17", "-o", (dir / "main").string(), (dir / "main.cpp").string()});
    EXPECT_EQ(run({(dir / "main").string()}), range ? "0 1 1 1\n" : "0 1 0 1\n");
    expect_all_agree(p, {{{"n", {500, 800, 1000, 3000, 5000, 9000, 20000}}}}, {"n"}, {"V", "X"});
  }
}

// The reviewer's case: P == M // 16 gives P = 62 at M = 1000, a value no
// build had, and the checks (P's own values) reject every tuned config
// there. All three say there is no config rather than hand that one back:
// the header's _has_config is false (its _select returns the nearest as it
// was built), the module's select returns None, online.hpp's nearest() none.
TEST(UntunedRule, ASizeWhereTheChecksAllowNoTunedConfigHasNoConfig) {
  Policy p;
  p.kernel = "pm";
  p.selection = "per-size";
  p.size_order = {"M"};
  for (int m : {256, 512, 1024})
    p.entries.push_back(entry({{"M", Value(m)}}, Config({{"P", Value(m / 16)}, {"W", Value(m / 256)}})));
  const std::vector<Expression> constraints = {Expression::parse("P == M // 16")};
  p.pinned = pinned_parameters(constraints, p);
  ASSERT_EQ(p.pinned.size(), 1u);
  const Parameter values{"P", {Value(16), Value(32), Value(64)}, {}};
  p.checks = policy_checks(constraints, {values}, p, {});
  ASSERT_EQ(p.checks.constraints.size(), 2u);

  const fs::path dir = tunekit::testing::fresh_dir();
  const std::string header = emit_header(p);
  EXPECT_NE(header.find("pm_has_config() is false"), std::string::npos) << header;
  tunekit::testing::write_file(dir / "policy.hpp", header);
  tunekit::testing::write_file(dir / "main.cpp", R"(#include <cstdio>
#include "policy.hpp"
using namespace tunekit_policy;
static_assert(!pm_has_config(1000) && pm_has_config(260) && pm_has_config(512), "constexpr");
static_assert(pm_has_config(pm_size{1024}), "by named fields");
int main() {
  const pm_config none = pm_select(1000), some = pm_select(260);
  std::printf("%lld %lld|%lld %lld\n", (long long)none.P, (long long)none.W, (long long)some.P, (long long)some.W);
}
)");
  run({"c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", (dir / "main").string(), (dir / "main.cpp").string()});
  EXPECT_EQ(run({(dir / "main").string()}), "64 4|16 1\n");  // M = 1024's as built, not P = 62

  EXPECT_EQ(from_python(dir, p, {{{"M", {1000, 260}}}}, {"P"}), "M=1000: none\nM=260: P=16\n");
  tunekit::testing::write_file(dir / "policy.json", emit_json(p));
  online::Tuner tuner(dir / "policy.json", online::Mode::lookup_only);
  EXPECT_FALSE(tuner.nearest({{"M", 1000}}).has_value());
  try {
    (void)tuner.get({{"M", 1000}}, nullptr);
    ADD_FAILURE() << "expected NoConfigError";
  } catch (const online::NoConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("has no config for {M=1000}: the spec's checks it carries allow none"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(tuner.get({{"M", 260}}, nullptr).params.at("P"), 16);
  expect_all_agree(p, {{{"M", {1, 100, 256, 260, 300, 512, 1000, 1024, 1030, 5000}}}}, {"M"}, {"P", "W"});
}

// A size axis of floats (a sparsity of 0.5) beside an integer one: the
// header takes it as a double, the module as a float, and online.hpp, which
// once refused the file ("expected a 64-bit integer"), reads and compares
// it alike; the checks and pins over the integer axis still apply, and a
// constraint that reads the float axis is left unchecked by all three.
TEST(UntunedRule, AFloatSizeAxisIsLookedUpAlikeByAllThree) {
  Policy p;
  p.kernel = "sp";
  p.selection = "per-size";
  p.size_order = {"M", "S"};
  auto add = [&](int m, double s, int t) {
    p.entries.push_back(entry({{"M", Value(m)}, {"S", Value(s)}}, Config({{"T", Value(t)}, {"B", Value(m / 64)}})));
  };
  add(64, 0.5, 1);
  add(64, 0.875, 2);
  add(1024, 0.5, 64);
  add(1024, 0.25, 8);
  const std::vector<Expression> constraints = {Expression::parse("B == M // 64"), Expression::parse("T <= M // 16"),
                                               Expression::parse("S < 1")};
  p.pinned = pinned_parameters(constraints, p);
  ASSERT_EQ(p.pinned.size(), 1u);
  p.checks = policy_checks(constraints, {}, p, {});
  EXPECT_EQ(p.checks.unchecked, std::vector<std::string>{"S < 1"});
  const fs::path dir = tunekit::testing::fresh_dir();
  EXPECT_EQ(from_online(dir, p, {{{"M", {64}}, {"S", {Value(0.5), Value(0.8), Value(0.3)}}}}, {"T", "B"}),
            "M=64 S=0.5: T=1 B=1\nM=64 S=0.8: T=2 B=1\nM=64 S=0.3: T=1 B=1\n");
  expect_all_agree(
      p,
      {{{"M", {1, 64, 100, 300, 1024, 5000}},
        {"S", {Value(0.1), Value(0.25), Value(0.3), Value(0.5), Value(0.7), Value(0.875), Value(1), Value(2.5)}}}},
      {"M", "S"}, {"T", "B"});

  // A float where the file holds integers: refused, as the module's
  // select() refuses it, rather than rounded.
  online::Tuner tuner(dir / "policy.json", online::Mode::lookup_only);
  EXPECT_THROW((void)tuner.get({{"M", 64.5}, {"S", 0.5}}, nullptr), std::invalid_argument);
}
