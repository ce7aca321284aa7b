// The generated header is compiled with the system compiler and run: it must
// return every tuned config exactly and follow the stated rule elsewhere.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/policy.hpp"

using namespace tunekit;

namespace {

TrialRecord trial(int m, int n, Config c, double us) {
  TrialRecord t;
  t.size = {{"M", m}, {"N", n}};
  t.config = std::move(c);
  t.status = Status::ok;
  t.stats.median = Microseconds(us);
  return t;
}

Config cfg(int bm, double alpha, std::string tile) {
  return Config({{"BM", bm}, {"ALPHA", alpha}, {"tile shape", Value(std::move(tile))}});
}

std::vector<TrialRecord> trials() {
  return {trial(16, 1024, cfg(16, 0.5, "small"), 10), trial(16, 1024, cfg(64, 1.0, "big"), 20),
          trial(4096, 4096, cfg(16, 0.5, "small"), 900), trial(4096, 4096, cfg(64, 1.0, "big"), 400),
          // A user's string with quotes, a backslash, a newline and "*/".
          trial(256, 256, cfg(32, 2.0, "we\"ird\\ */\nname?\?="), 50)};
}

std::string compile_and_run(const std::filesystem::path& dir, const std::string& header, const std::string& main_body) {
  tunekit::testing::write_file(dir / "policy.hpp", header);
  tunekit::testing::write_file(
      dir / "main.cpp",
      "#include <cstdio>\n#include <cstring>\n#include \"policy.hpp\"\nint main() {\n" + main_body + "\n}\n");
  auto c = detail::run_process(
      {"c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", (dir / "main").string(), (dir / "main.cpp").string()},
      std::chrono::seconds(120));
  EXPECT_EQ(c.exit_code, 0) << c.output << "\n" << header;
  auto r = detail::run_process({(dir / "main").string()}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

}  // namespace

TEST(Identifiers, AreValidAndDistinctFromKeywords) {
  EXPECT_EQ(cpp_identifier("tile shape"), "tile_shape");
  EXPECT_EQ(cpp_identifier("3d"), "_3d");
  EXPECT_EQ(cpp_identifier("class"), "class_");
  EXPECT_EQ(cpp_identifier("a__b"), "a_u_b");
  EXPECT_EQ(cpp_identifier("_Reserved"), "u_Reserved");
  EXPECT_EQ(cpp_identifier(""), "_");
  // Macros of gcc's and clang's default GNU modes.
  EXPECT_EQ(cpp_identifier("unix"), "unix_");
  EXPECT_EQ(cpp_identifier("linux"), "linux_");
  EXPECT_EQ(cpp_string_literal("a\"b\\c\n\x01?"), "\"a\\\"b\\\\c\\n\\001\\?\"");
}

// The namespace is written as given or refused: a silent rewrite would
// leave the user's `using namespace` pointing at nothing.
TEST(PolicyHeader, ANamespaceIsTakenAsGivenOrRefused) {
  for (const char* good : {"tunekit_policy", "my::ns", "a1::_b::c_"})
    EXPECT_EQ(namespace_problem(good), std::nullopt) << good;
  for (const char* bad : {"", "my ns", "a::", "::a", "a:::b", "1abc", "class", "a::std", "a__b", "_Reserved"})
    EXPECT_NE(namespace_problem(bad), std::nullopt) << bad;
  EXPECT_EQ(namespace_problem("x::int"),
            "'int' is a C++ keyword or a name the header uses; expected C++ identifiers "
            "joined by '::', such as myproject::tuned");
  Policy p = make_policy("matmul-v2", trials(), Selection::per_size, std::nullopt);
  EXPECT_THROW((void)emit_header(p, {"my ns"}), std::invalid_argument);
}

// An untuned size is matched by numeric distance; a string size has none,
// so every table refuses the policy with the same reason.
TEST(PolicyHeader, AStringSizeIsRefusedByEveryTable) {
  Policy p = make_policy("matmul-v2", trials(), Selection::per_size, std::nullopt);
  EXPECT_EQ(table_problem(p), std::nullopt);
  p.entries.front().size["layout"] = Value(std::string("row"));
  for (auto& e : p.entries)
    if (!e.size.count("layout")) e.size["layout"] = Value(std::string("col"));
  const auto why = table_problem(p);
  ASSERT_NE(why, std::nullopt);
  EXPECT_EQ(why->rfind("size 'layout' has string values ('", 0), 0u) << *why;
  for (auto emit : {+[](const Policy& q) { return emit_header(q); }, +[](const Policy& q) { return emit_json(q); },
                    +[](const Policy& q) { return emit_python(q); }}) {
    try {
      (void)emit(p);
      ADD_FAILURE() << "emitted a table for a string size";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), *why);
    }
  }
}

TEST(PolicyHeader, ReturnsTunedConfigsExactlyAndNearestOtherwise) {
  const auto dir = tunekit::testing::fresh_dir();
  Policy p = make_policy("matmul-v2", trials(), Selection::per_size, std::nullopt);
  ASSERT_EQ(p.entries.size(), 3u);
  const std::string header = emit_header(p, {"my::ns"});
  // Tuned sizes: exact. Untuned: M=8,N=900 is nearest (in log space) to
  // 16x1024; M=300,N=200 to 256x256; M=2048,N=8192 to 4096x4096.
  const std::string out = compile_and_run(dir, header, R"(
  using namespace my::ns;
  constexpr auto a = matmul_v2_select(16, 1024);
  static_assert(a.BM == 16, "constexpr");
  const auto b = matmul_v2_select(4096, 4096);
  const auto c = matmul_v2_select(256, 256);
  std::printf("%lld %g %s|", (long long)a.BM, a.ALPHA, a.tile_shape);
  std::printf("%lld %g %s|", (long long)b.BM, b.ALPHA, b.tile_shape);
  std::printf("%lld %d|", (long long)c.BM, std::strcmp(c.tile_shape, "we\"ird\\ */\nname?\?=") == 0);
  std::printf("%lld %lld %lld", (long long)matmul_v2_select(8, 900).BM, (long long)matmul_v2_select(300, 200).BM,
              (long long)matmul_v2_select(2048, 8192).BM);
  return 0;)");
  EXPECT_EQ(out, "16 0.5 small|64 1 big|32 1|16 32 64");
}

// A field's type follows the spec's values of its parameter, not only the
// values that won: code written against the header keeps compiling when a
// retune picks the parameter's other values.
TEST(PolicyHeader, AFieldsTypeFollowsTheParametersDeclaredValues) {
  Policy p = make_policy("k", {trial(16, 1024, Config({{"SCALE", 1}, {"LAYOUT", 4}, {"BM", 16}}), 10)},
                         Selection::per_size, std::nullopt);
  auto field = [&] { return emit_header(p, {"ns"}); };
  EXPECT_NE(field().find("std::int64_t SCALE;"), std::string::npos) << field();
  p.declared = {{"SCALE", {Value(1), Value(2.5)}}, {"LAYOUT", {Value(4), Value("auto")}}, {"BM", {Value(16)}}};
  const std::string header = field();
  EXPECT_NE(header.find("double SCALE;"), std::string::npos) << header;
  EXPECT_NE(header.find("const char* LAYOUT;"), std::string::npos) << header;
  EXPECT_NE(header.find("std::int64_t BM;"), std::string::npos) << header;
}

TEST(PolicyHeader, OneConfigForAllSizes) {
  const auto dir = tunekit::testing::fresh_dir();
  auto t = trials();
  t.pop_back();  // only sizes where both configs ran
  Policy p = make_policy("mm", t, Selection::all_sizes, cfg(16, 0.5, "small"));
  // big: 10/20 = 0.5 at the small size, 900/400 = 2.25 at the large: geomean 1.06 > 1.
  for (const auto& e : p.entries) EXPECT_EQ(e.config.at("BM"), Value(64));
  const std::string out = compile_and_run(dir, emit_header(p), R"(
  std::printf("%lld %lld", (long long)tunekit_policy::mm_select(16, 1024).BM, (long long)tunekit_policy::mm_select(1, 1).BM);
  return 0;)");
  EXPECT_EQ(out, "64 64");
}

TEST(PolicyJson, SameEntriesAsTheHeader) {
  Policy p = make_policy("mm", trials(), Selection::per_size, std::nullopt);
  auto j = nlohmann::json::parse(emit_json(p));
  EXPECT_EQ(j["kernel"], "mm");
  ASSERT_EQ(j["entries"].size(), 3u);
  EXPECT_EQ(j["entries"][0]["size"]["M"], 16);
  EXPECT_EQ(j["entries"][0]["config"]["tile shape"], "small");
  EXPECT_EQ(j["entries"][0]["config"]["ALPHA"], 0.5);
  EXPECT_NE(j["untuned_size_rule"].get<std::string>().find("log space"), std::string::npos);
}

// The best values differ per chip: every format names the device the
// trials ran on, a name with a line break included (a comment line must not
// end early).
TEST(Policy, EveryFormatNamesTheDeviceItWasTunedOn) {
  std::vector<TrialRecord> ts = trials();
  for (auto& t : ts) t.device = "cuda: NVIDIA H200\nint broken;";
  Policy p = make_policy("mm", ts, Selection::per_size, std::nullopt);
  EXPECT_EQ(p.device, "cuda: NVIDIA H200\nint broken;");
  const std::string header = emit_header(p, {});
  EXPECT_NE(header.find("\n// Tuned on cuda: NVIDIA H200 int broken;.\n"), std::string::npos) << header;
  EXPECT_EQ(nlohmann::json::parse(emit_json(p))["device"], "cuda: NVIDIA H200\nint broken;");
  const std::string python = emit_python(p);
  EXPECT_NE(python.find("\n# Tuned on cuda: NVIDIA H200 int broken;.\n"), std::string::npos) << python;
  EXPECT_EQ(
      compile_and_run(tunekit::testing::fresh_dir(), header, "return tunekit_policy::mm_tuned_count == 3 ? 0 : 1;"),
      "");
}

TEST(Policy, NothingOkIsAnError) {
  auto t = trials();
  for (auto& x : t) x.status = Status::crash;
  EXPECT_THROW(make_policy("mm", t, Selection::per_size, std::nullopt), NoPolicyError);
}

// The same results give the same files whichever size was tuned first: the
// entries are in size order, so a lookup at a tie (N = 2048 is as near to
// 1024 as to 4096 in log space) answers the same.
TEST(Policy, TheEntriesFollowFromTheResultsNotTheOrderTheSizesWereTuned) {
  auto forward = trials();
  auto backward = forward;
  std::reverse(backward.begin(), backward.end());
  for (Selection selection : {Selection::per_size, Selection::cover}) {
    const Policy a = make_policy("mm", forward, selection, std::nullopt);
    const Policy b = make_policy("mm", backward, selection, std::nullopt);
    EXPECT_EQ(emit_header(a), emit_header(b));
    EXPECT_EQ(emit_json(a), emit_json(b));
    ASSERT_EQ(a.entries.size(), 3u);
    EXPECT_EQ(a.entries.front().size.at("M"), Value(16));
    EXPECT_EQ(a.entries.back().size.at("M"), Value(4096));
  }
}

TEST(PolicyHeader, RecomputesPinnedParametersForUntunedSizes) {
  // BM is pinned to M (the smallest of 4, 8, 16, ... >= M, as gemm_skinny's
  // spec does); an untuned M must not inherit its nearest neighbour's BM.
  // MODE's constraint has no '==' and DEPTH's names a parameter: not pins.
  auto t = [](int m, int n, int bm, int depth, double us) {
    return trial(m, n, Config({{"BM", bm}, {"DEPTH", depth}, {"MODE", Value(std::string("a"))}}), us);
  };
  Policy p = make_policy("skinny", {t(4, 4096, 4, 2, 10), t(64, 4096, 64, 4, 30)}, Selection::per_size, std::nullopt);
  const std::vector<Expression> constraints = {
      Expression::parse("N > 0 and BM == (4 if M <= 4 else 8 if M <= 8 else 16 * ceil_div(M, 16))"),
      Expression::parse("DEPTH == BM // 16 + 1"), Expression::parse("MODE in ['a', 'b']")};
  p.pinned = pinned_parameters(constraints, p);
  ASSERT_EQ(p.pinned.size(), 1u);
  EXPECT_EQ(p.pinned[0].name, "BM");

  const auto dir = tunekit::testing::fresh_dir();
  const std::string header = emit_header(p);
  EXPECT_NE(header.find("// BM is pinned to the size by the spec"), std::string::npos);
  // Tuned sizes exactly; M=5 is nearest to M=4 (DEPTH 2) but needs BM 8;
  // M=33 is nearest to M=64 (DEPTH 4) but needs BM 48.
  const std::string out = compile_and_run(dir, header, R"(
  using namespace tunekit_policy;
  constexpr auto a = skinny_select(4, 4096);
  constexpr auto b = skinny_select(5, 4000);
  static_assert(b.BM == 8, "constexpr");
  const auto c = skinny_select(33, 4096);
  const auto d = skinny_select(64, 4096);
  std::printf("%lld %lld|%lld %lld|%lld %lld|%lld %lld", (long long)a.BM, (long long)a.DEPTH, (long long)b.BM,
              (long long)b.DEPTH, (long long)c.BM, (long long)c.DEPTH, (long long)d.BM, (long long)d.DEPTH);
  return 0;)");
  EXPECT_EQ(out, "4 2|8 2|48 4|64 4");

  auto j = nlohmann::json::parse(emit_json(p));
  EXPECT_EQ(j["pinned"]["BM"], "(4 if M <= 4 else 8 if M <= 8 else 16 * ceil_div(M, 16))");
}

TEST(PolicyHeader, PassesOverTunedConfigsTheConstraintsRejectAtAnUntunedSize) {
  // As in the wgmma spec: a cluster of 2 needs an even number of tile rows,
  // and shared memory (a machine property) caps the tile.
  auto t = [](int m, int bm, int cl) { return trial(m, 64, Config({{"BM", bm}, {"CL", cl}}), 1.0); };
  std::vector<TrialRecord> trials{t(64, 64, 2), t(1024, 128, 1), t(4096, 256, 1)};
  trials[0].machine = R"({"device": "some GPU", "smem_bytes": 150000, "clock_ghz": 1.5, "arch": "sm_90a"})";
  Policy p = make_policy("mm", trials, Selection::per_size, std::nullopt);
  const std::vector<Expression> constraints = {Expression::parse("CL == 1 or ceil_div(M, BM) % 2 == 0"),
                                               Expression::parse("BM * 1000 <= smem_bytes"),
                                               Expression::parse("N % 64 == 0"),
                                               Expression::parse("BM / 2 >= 1"),  // true division: not integer C++
                                               Expression::parse("clock_ghz * BM > 1")};  // a float property
  const Bindings machine = machine_properties(trials);
  EXPECT_EQ(machine.count("device"), 0u);
  EXPECT_EQ(machine.at("smem_bytes"), Value(150000));
  EXPECT_EQ(machine.at("arch"), Value(std::string("sm_90a")));
  p.checks = policy_checks(constraints, {}, p, machine);
  ASSERT_EQ(p.checks.constraints.size(), 3u);
  EXPECT_EQ(p.checks.unchecked, (std::vector<std::string>{"BM / 2 >= 1", "clock_ghz * BM > 1"}));
  EXPECT_EQ(p.checks.machine, (Bindings{{"smem_bytes", Value(150000)}}));

  const auto dir = tunekit::testing::fresh_dir();
  const std::string header = emit_header(p);
  EXPECT_NE(header.find("// Constraints checked: 3 of the spec's, with the tuned device's smem_bytes = 150000."),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("// Not checked (not integer C++): BM / 2 >= 1"), std::string::npos);
  // Tuned sizes exactly (even M = 4096's, which the cap rejects: the header
  // does not second-guess a tune). M = 100: the nearest (M = 64) is allowed,
  // 2 tile rows. M = 130: the nearest has 3 tile rows, so M = 1024's. M =
  // 3000: the nearest's BM 256 breaks the cap, so M = 1024's again. N = 100:
  // nothing is allowed, so the nearest, reported as not allowed.
  const std::string out = compile_and_run(dir, header, R"(
  using namespace tunekit_policy;
  constexpr auto a = mm_select(4096, 64);
  static_assert(mm_select(130, 64).BM == 128, "constexpr");
  const mm_config c[] = {a, mm_select(100, 64), mm_select(130, 64), mm_select(3000, 64), mm_select(100, 100)};
  for (const auto& x : c) std::printf("%lld %lld|", (long long)x.BM, (long long)x.CL);
  std::printf("%d %d", mm_allowed(c[1], 100, 64), mm_allowed(c[4], 100, 100));
  return 0;)");
  EXPECT_EQ(out, "256 1|64 2|128 1|128 1|64 2|1 0");

  auto j = nlohmann::json::parse(emit_json(p));
  EXPECT_EQ(j["checks"]["constraints"].size(), 3u);
  EXPECT_EQ(j["checks"]["unchecked"][0], "BM / 2 >= 1");
  EXPECT_EQ(j["checks"]["machine"]["smem_bytes"], 150000);
  EXPECT_NE(j["untuned_size_rule"].get<std::string>().find("only those that the spec's constraints allow"),
            std::string::npos);

  // Without checks, the header is what it was: the nearest, whatever it is.
  p.checks = {};
  const std::string plain = compile_and_run(dir, emit_header(p), R"(
  const auto x = tunekit_policy::mm_select(130, 64);
  std::printf("%lld %lld", (long long)x.BM, (long long)x.CL);
  return 0;)");
  EXPECT_EQ(plain, "64 2");
}

TEST(PolicyHeader, TakesTheSizesInTheSpecsOrderOrAsNamedFields) {
  // The spec declares N before M: a call in that order must get that size's
  // config (alphabetical order would swap them and pick another size's).
  const auto dir = tunekit::testing::fresh_dir();
  Policy p = make_policy("mm", trials(), Selection::per_size, std::nullopt);
  p.size_order = {"N", "M"};
  const std::string header = emit_header(p);
  EXPECT_NE(header.find("The sizes in the spec's order: N, M."), std::string::npos) << header;
  const std::string out = compile_and_run(dir, header, R"(
  using namespace tunekit_policy;
  // N = 1024, M = 16 is the tuned size whose best is BM 16; read as M = 1024,
  // N = 16 it would be nearest to 256 x 256 (BM 32).
  constexpr auto a = mm_select(1024, 16);
  static_assert(a.BM == 16, "sizes in the spec's order");
  mm_size s{};
  s.M = 4096;
  s.N = 4096;
  std::printf("%lld %lld", (long long)a.BM, (long long)mm_select(s).BM);
  return 0;)");
  EXPECT_EQ(out, "16 64");
  EXPECT_EQ(nlohmann::json::parse(emit_json(p))["size_order"], (nlohmann::json{"N", "M"}));
}

TEST(Policy, AllSizesWithoutAValidDefaultOffersTheBestValidEverywhere) {
  auto t = trials();
  t.pop_back();
  // The default never ran at 4096 x 4096: no speedup over it there.
  Policy p = make_policy("mm", {t[0], t[1], t[3]}, Selection::all_sizes, cfg(16, 0.5, "small"));
  EXPECT_NE(p.selection.find("against each size's best"), std::string::npos) << p.selection;
  EXPECT_NE(p.selection.find("did not run correctly at 1 of 2 sizes"), std::string::npos) << p.selection;
  for (const auto& e : p.entries) EXPECT_EQ(e.config.at("BM"), Value(64));
}

// The sizes are the generated functions' parameters: a size named like one
// of their locals (the loop's i, the entry s, the distance d, the candidate
// c, best, allowed) once made a header that did not compile or, for d,
// compiled and read the distance in the size's place.
TEST(PolicyHeader, SizesNamedLikeItsLocalsKeepTheirMeaning) {
  const std::vector<std::string> names{"i", "s", "d", "c", "best", "best_distance", "allowed", "allowed_distance"};
  auto at = [&](int v, int t) {
    TrialRecord r;
    for (const auto& n : names) r.size[n] = Value(v);
    r.config = Config({{"T", Value(t)}});
    r.status = Status::ok;
    r.stats.median = Microseconds(1.0);
    return r;
  };
  Policy p = make_policy("k", {at(1, 1), at(256, 2)}, Selection::per_size, std::nullopt);
  p.size_order = names;
  p.checks = policy_checks({Expression::parse("T <= d")}, {}, p, {});
  ASSERT_EQ(p.checks.constraints.size(), 1u);
  const auto dir = tunekit::testing::fresh_dir();
  // All at 100: the nearest is 256's T = 2 (2 <= d). d at 1, the rest at
  // 256: the nearest breaks T <= d, so 1's.
  const std::string out = compile_and_run(dir, emit_header(p), R"(
  using namespace tunekit_policy;
  static_assert(k_select(100, 100, 100, 100, 100, 100, 100, 100).T == 2, "constexpr");
  std::printf("%lld %lld %lld %lld", (long long)k_select(1, 1, 1, 1, 1, 1, 1, 1).T,
              (long long)k_select(256, 256, 256, 256, 256, 256, 256, 256).T,
              (long long)k_select(100, 100, 100, 100, 100, 100, 100, 100).T,
              (long long)k_select(256, 256, 1, 256, 256, 256, 256, 256).T);
  return 0;)");
  EXPECT_EQ(out, "1 2 2 1");
}

// Sizes and parameters named like the header's own names (a size called
// k_tuned_count shadowed the loop's bound, and a tuned size got another's
// config), kernels named so that a prefix would make a reserved double
// underscore, names <cstdint> declares, and a spec with no sizes: the header
// compiles under -Wall -Wextra -Werror and answers as tuned.
TEST(PolicyHeader, NamesThatClashWithTheHeadersOwnKeepTheirMeaning) {
  auto at = [](std::int64_t n, std::int64_t p) {
    TrialRecord r;
    r.size["n"] = Value(n);
    r.size["k_tuned_count"] = Value(1);
    r.size["k_tuned_configs"] = Value(2);
    r.config = Config({{"P", Value(p)}, {"INT64_MAX", Value(p)}, {"k_config", Value(p)}});
    r.status = Status::ok;
    r.stats.median = Microseconds(1.0);
    return r;
  };
  Policy p = make_policy("k", {at(100, 1), at(5000, 2)}, Selection::per_size, std::nullopt);
  p.size_order = {"n", "k_tuned_count", "k_tuned_configs"};
  const auto dir = tunekit::testing::fresh_dir();
  const std::string out = compile_and_run(dir, emit_header(p), R"(
  using namespace tunekit_policy;
  std::printf("%lld %lld %lld", (long long)k_select(100, 1, 2).P, (long long)k_select(5000, 1, 2).P,
              (long long)k_select(5000, 1, 2).INT64_MAX_);
  return 0;)");
  EXPECT_EQ(out, "1 2 2");

  for (const std::string kernel : {"std", "odd name_", "123", "_x_"}) {
    TrialRecord r = at(100, 1);
    r.size.clear();  // a spec without sizes
    Policy q = make_policy(kernel, {r}, Selection::per_size, std::nullopt);
    const std::string header = emit_header(q);
    EXPECT_EQ(header.find("__"), std::string::npos) << kernel << ":\n" << header;
    const auto sub = dir / ("k" + std::to_string(std::hash<std::string>{}(kernel) % 1000));
    std::filesystem::create_directories(sub);
    EXPECT_EQ(compile_and_run(sub, header, "return 0;"), "") << kernel;
  }
  EXPECT_EQ(cpp_identifier("uint8_t"), "uint8_t_");
  EXPECT_EQ(cpp_identifier("NULL"), "NULL_");
  HeaderOptions options;
  options.name_space = "INT64_MAX";
  EXPECT_THROW(emit_header(p, options), std::invalid_argument);
}

// What `tunekit emit` writes, through the library: a spec's policy carries
// its size order, its pinned parameters and its constraints as checks,
// which make_policy alone leaves out.
TEST(Policy, ASpecsPolicyHasItsPinsAndChecks) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "void k(float* x, int m, int n) {}\n");
  tunekit::testing::write_file(dir / "k.yaml", R"(name: skinny
kernel: {source: k.cpp, entry: k}
arguments:
  - {name: x, type: f32, size: M * N}
  - {name: m, type: i32, value: M}
  - {name: n, type: i32, value: N}
sizes: {grid: {N: [1024, 4096], M: [16, 4096]}}
parameters: {BM: [16, 64, 4096], TILE: [small, big]}
constraints:
  - BM == (16 if M <= 16 else 64) or BM == 4096
  - N >= 4 * BM or BM == 4096
)");
  const Spec spec = load_spec(dir / "k.yaml");
  auto t = [](int m, int n, int bm, double us) {
    return trial(m, n, Config({{"BM", bm}, {"TILE", Value(std::string("small"))}}), us);
  };
  const std::vector<TrialRecord> trials = {t(16, 1024, 16, 10), t(4096, 4096, 64, 40)};
  const Policy p = make_spec_policy(spec, trials, Selection::per_size);
  EXPECT_EQ(p.kernel, "skinny");
  EXPECT_EQ(p.size_order, spec.size_names);
  EXPECT_EQ(p.checks.constraints.size(), 2u);
  const Policy bare = make_policy("skinny", trials, Selection::per_size, std::nullopt);
  EXPECT_NE(emit_header(p), emit_header(bare));
  EXPECT_NE(emit_header(p).find("skinny_allowed"), std::string::npos);
}
