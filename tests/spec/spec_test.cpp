// load_spec / spec_from_source / parse_assignment / parse_range.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include <unistd.h>

#include "tunekit/builder.hpp"
#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"
#include "support/spec_errors.hpp"

namespace fs = std::filesystem;
using namespace tunekit;
using ::testing::HasSubstr;

namespace {

const fs::path kData = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "spec" / "data";

std::vector<std::int64_t> ints(const std::vector<Value>& values) {
  std::vector<std::int64_t> out;
  for (const auto& v : values) {
    EXPECT_TRUE(v.is_int()) << v.repr();
    out.push_back(v.is_int() ? v.as_int() : -999);
  }
  return out;
}

const Parameter& param(const Spec& s, const std::string& name) {
  for (const auto& p : s.parameters)
    if (p.name == name) return p;
  throw std::runtime_error("no parameter " + name);
}

void check_full(const Spec& s, const fs::path& file) {
  EXPECT_EQ(s.file, fs::absolute(file).lexically_normal());
  EXPECT_EQ(s.name, "mm");
  EXPECT_EQ(s.kernel.source, (kData / "matmul.cpp").lexically_normal());
  EXPECT_TRUE(s.kernel.source.is_absolute());
  EXPECT_EQ(s.kernel.entry, "matmul");
  EXPECT_EQ(s.kernel.language, "c++");
  EXPECT_EQ(s.kernel.compiler, "g++-12");
  EXPECT_EQ(s.kernel.flags, (std::vector<std::string>{"-O2", "-fopenmp"}));
  EXPECT_EQ(s.kernel.injection, Injection::defines);

  ASSERT_EQ(s.arguments.size(), 6u);
  const auto& A = s.arguments[0];
  EXPECT_EQ(A.name, "A");
  EXPECT_EQ(A.type, ElementType::f32);
  EXPECT_EQ(A.role, Role::in);
  EXPECT_EQ(A.fill, Fill::random);
  ASSERT_TRUE(A.size.has_value());
  EXPECT_EQ(A.size->text(), "M*K");
  EXPECT_FALSE(A.value.has_value());
  EXPECT_EQ(A.where.file, file.string());
  EXPECT_GT(A.where.line, 0);
  const auto& B = s.arguments[1];
  EXPECT_EQ(B.type, ElementType::f64);
  EXPECT_EQ(B.role, Role::in);
  EXPECT_EQ(B.fill, Fill::random);  // default for in
  const auto& C = s.arguments[2];
  EXPECT_EQ(C.role, Role::out);
  EXPECT_EQ(C.fill, Fill::zeros);  // default for out
  EXPECT_EQ(C.size->text(), "M*N");
  const auto& D = s.arguments[3];
  EXPECT_EQ(D.type, ElementType::i32);
  EXPECT_EQ(D.role, Role::inout);
  EXPECT_EQ(D.fill, Fill::constant);
  EXPECT_DOUBLE_EQ(D.fill_value, -7);
  const auto& E = s.arguments[4];
  EXPECT_EQ(E.type, ElementType::u8);
  EXPECT_EQ(E.fill, Fill::sequence);
  EXPECT_DOUBLE_EQ(E.fill_value, 3);
  const auto& M = s.arguments[5];
  EXPECT_EQ(M.role, Role::scalar);
  EXPECT_FALSE(M.size.has_value());
  ASSERT_TRUE(M.value.has_value());
  EXPECT_EQ(M.value->text(), "M");

  ASSERT_EQ(s.sizes.size(), 2u);
  EXPECT_EQ(s.sizes[0].at("M"), Value(256));
  EXPECT_EQ(s.sizes[0].at("N"), Value(128));
  EXPECT_EQ(s.sizes[0].at("K"), Value(64));
  EXPECT_EQ(s.sizes[1].at("K"), Value(512));

  ASSERT_EQ(s.parameters.size(), 7u);
  EXPECT_EQ(s.parameters[0].name, "MC");  // declaration order
  EXPECT_EQ(s.parameters[6].name, "DOWN");
  EXPECT_EQ(ints(param(s, "MC").values), (std::vector<std::int64_t>{32, 64, 128}));
  EXPECT_EQ(ints(param(s, "KC").values), (std::vector<std::int64_t>{64, 128, 192, 256}));
  EXPECT_EQ(ints(param(s, "NR").values), (std::vector<std::int64_t>{4, 8, 16}));
  EXPECT_EQ(ints(param(s, "ONE").values), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(ints(param(s, "DOWN").values), (std::vector<std::int64_t>{8, 5, 2}));
  const auto& order = param(s, "ORDER").values;
  ASSERT_EQ(order.size(), 2u);
  EXPECT_TRUE(order[0].is_string());
  EXPECT_EQ(order[0].as_string(), "ijk");
  EXPECT_EQ(order[1].as_string(), "ikj");
  const auto& alpha = param(s, "ALPHA").values;
  ASSERT_EQ(alpha.size(), 2u);
  EXPECT_TRUE(alpha[0].is_float());
  EXPECT_DOUBLE_EQ(alpha[1].as_float(), 1.5);
  EXPECT_EQ(param(s, "MC").where.file, file.string());
  EXPECT_GT(param(s, "MC").where.line, 0);

  ASSERT_EQ(s.constraints.size(), 2u);
  EXPECT_EQ(s.constraints[0].text(), "MC % NR == 0");
  EXPECT_EQ(s.constraints[1].text(), "MC*KC*4 <= l2_bytes");

  ASSERT_EQ(s.configs.size(), 2u);
  EXPECT_EQ(s.configs[0].str(), "{MC: 64, KC: 128, NR: 8, ORDER: ijk, ALPHA: 0.5, ONE: 7, DOWN: 8}");
  EXPECT_EQ(s.configs[1].str(), "{MC: 32, KC: 64, NR: 4, ORDER: ikj, ALPHA: 1.5, ONE: 7, DOWN: 5}");  // parameter order
  ASSERT_TRUE(s.default_config.has_value());
  EXPECT_EQ(s.default_config->str(), "{MC: 64, KC: 128, NR: 8, ORDER: ijk, ALPHA: 0.5, ONE: 7, DOWN: 8}");

  EXPECT_EQ(s.reference.kind, ReferenceSpec::Kind::function);
  EXPECT_EQ(s.reference.source, (kData / "naive.cpp").lexically_normal());
  EXPECT_EQ(s.reference.entry, "matmul_naive");
  EXPECT_EQ(s.reference.flags, (std::vector<std::string>{"-O0"}));

  EXPECT_EQ(s.tolerance.atol, 1e-3);
  EXPECT_EQ(s.tolerance.rtol, 1e-4);

  EXPECT_NEAR(s.measure.warmup.count(), 20000.0, 1e-6);
  EXPECT_EQ(s.measure.min_samples, 3u);
  EXPECT_EQ(s.measure.max_samples, 50u);
  EXPECT_NEAR(s.measure.max_time.count(), 1.5, 1e-12);
  EXPECT_DOUBLE_EQ(s.measure.target_noise, 0.05);
  EXPECT_EQ(s.measure.cache, CacheMode::hot);
  EXPECT_NEAR(s.measure.timeout.count(), 60.0, 1e-12);

  EXPECT_EQ(s.search.strategy, "random");
  ASSERT_TRUE(s.search.max_evaluations.has_value());
  EXPECT_EQ(*s.search.max_evaluations, 100u);
  ASSERT_TRUE(s.search.max_time.has_value());
  EXPECT_NEAR(s.search.max_time->count(), 60.0, 1e-12);
  EXPECT_EQ(s.search.seed, 42u);

  EXPECT_EQ(s.output.db, fs::path("out/t.db"));  // kept as given
  EXPECT_EQ(s.output.files.at("csv"), fs::path("out.csv"));
  EXPECT_EQ(s.output.files.at("json"), fs::path("out.json"));
}

// A scratch folder with a kernel source, for specs written by the tests.
using tunekit::testing::SpecErrors;

const std::string kHead =  // 5 lines: the kernel and one argument
    "kernel:\n"
    "  source: k.cpp\n"
    "  entry: k\n"
    "arguments:\n"
    "  - {name: X, type: f32, size: N}\n";

}  // namespace

TEST(LoadSpec, FullYaml) {
  fs::path file = kData / "full.yaml";
  Spec s = load_spec(file);
  check_full(s, file);
  // Expressions remember where their text starts (past a quote).
  EXPECT_EQ(s.constraints[0].where().str(), file.string() + ":29:5");
  EXPECT_EQ(s.constraints[1].where().str(), file.string() + ":30:6");
  EXPECT_EQ(s.arguments[0].size->where().str(), file.string() + ":11:32");
}

TEST(LoadSpec, FullJsonEqualsYaml) {
  fs::path file = kData / "full.json";
  Spec s = load_spec(file);
  check_full(s, file);
  EXPECT_EQ(s.constraints[0].where().str(), file.string() + ":23:20");
  EXPECT_EQ(s.constraints[1].where().str(), file.string() + ":23:36");
}

TEST(LoadSpec, Defaults) {
  Spec s = load_spec(kData / "minimal.yaml");
  EXPECT_EQ(s.name, "matmul");  // the entry
  EXPECT_EQ(s.kernel.language, "c++");
  EXPECT_TRUE(s.kernel.compiler.empty());
  EXPECT_EQ(s.kernel.flags, (std::vector<std::string>{"-O3", "-march=native"}));
  EXPECT_EQ(s.kernel.injection, Injection::automatic);
  ASSERT_EQ(s.sizes.size(), 1u);  // a single mapping
  EXPECT_EQ(s.sizes[0].at("N"), Value(1024));
  EXPECT_TRUE(s.parameters.empty());
  EXPECT_TRUE(s.constraints.empty());
  EXPECT_TRUE(s.configs.empty());
  EXPECT_FALSE(s.default_config.has_value());
  EXPECT_EQ(s.reference.kind, ReferenceSpec::Kind::default_config);
  MeasureSettings m;
  EXPECT_EQ(s.measure.min_samples, m.min_samples);
  EXPECT_EQ(s.measure.max_samples, m.max_samples);
  EXPECT_EQ(s.measure.cache, CacheMode::cold);
  EXPECT_EQ(s.search.strategy, "auto");  // exhaustive without a budget
  EXPECT_EQ(s.search.transfer, 3u);
  EXPECT_FALSE(s.search.max_evaluations.has_value());
  EXPECT_EQ(s.search.seed, 1u);
  EXPECT_TRUE(s.output.db.empty());
  EXPECT_FALSE(s.tolerance.atol.has_value());  // by the outputs' type
}

// An f16 or bf16 output rounds to 1e-3 or 8e-3 of its value: under f32's
// default rtol 1e-5 every such kernel that rounds once differently from its
// reference failed. A tolerance the spec gives wins; outputs of several types
// take the loosest of their defaults.
TEST_F(SpecErrors, TheDefaultToleranceFollowsTheOutputsType) {
  auto applied = [&](const std::string& arguments, const std::string& rest = "") {
    return applied_tolerance(load_spec(write(kHead + arguments + rest)));
  };
  auto expect = [](const Tolerance& got, double atol, double rtol) {
    EXPECT_EQ(got.atol, atol);
    EXPECT_EQ(got.rtol, rtol);
  };
  expect(applied("  - {name: Y, type: f32, size: N, role: out}\n"), 1e-6, 1e-5);
  expect(applied("  - {name: Y, type: f16, size: N, role: out}\n"), 1e-5, 1e-3);
  expect(applied("  - {name: Y, type: bf16, size: N, role: inout}\n"), 1e-5, 1.6e-2);
  expect(applied("  - {name: Y, type: f64, size: N, role: out}\n"), 1e-7, 1e-7);
  expect(applied("  - {name: Y, type: i32, size: N, role: out}\n"), 0, 0);
  expect(applied("  - {name: Y, type: f32, size: N, role: out}\n  - {name: C, type: u64, size: N, role: out}\n"), 1e-6,
         1e-5);
  // The input X (f32) is not compared; a workspace neither.
  expect(applied("  - {name: Y, type: f64, size: N, role: out}\n  - {name: W, type: bf16, size: N, role: scratch}\n"),
         1e-7, 1e-7);
  expect(applied("  - {name: Y, type: f32, size: N, role: out}\n  - {name: Z, type: bf16, size: N, role: out}\n"), 1e-5,
         1.6e-2);
  expect(applied("  - {name: Y, type: bf16, size: N, role: out}\n", "tolerance: {rtol: 0.1}\n"), 1e-5, 0.1);
  expect(applied("  - {name: Y, type: f16, size: N, role: out}\n", "tolerance: {atol: 0, rtol: 0}\n"), 0, 0);
}

TEST(LoadSpec, RangeSourceParametersWhenNoneDeclared) {
  Spec s = load_spec(kData / "cccl.yaml");
  EXPECT_EQ(s.kernel.injection, Injection::range_defines);
  ASSERT_EQ(s.parameters.size(), 2u);
  EXPECT_EQ(s.parameters[0].name, "TUNE_ITEMS");
  EXPECT_EQ(s.parameters[0].values.size(), 18u);
  EXPECT_EQ(s.parameters[1].values.front(), Value(128));
  EXPECT_EQ(s.parameters[1].values.back(), Value(1024));
  EXPECT_TRUE(s.arguments.empty());
  ASSERT_EQ(s.sizes.size(), 1u);
  EXPECT_TRUE(s.sizes[0].empty());
}

// A strategy named as Kernel Tuner names it is stored under tunekit's name,
// with its options checked against that strategy.
// A writer's `true` is its default file and `false` none; a file named
// "true" is never what was meant, and the store cannot be switched off.
TEST_F(SpecErrors, AnOutputOfTrueOrFalseSwitchesTheWriter) {
  const Spec s = load_spec(write(kHead + "output: {csv: true, json: false, html: \"true\"}\n"));
  EXPECT_EQ(s.output.files.at("csv"), fs::path());
  EXPECT_EQ(s.output.off, (std::set<std::string, std::less<>>{"json"}));
  EXPECT_EQ(s.output.files.at("html"), fs::path("true"));  // quoted: a file name after all
  expect_error(kHead + "output: {db: false}\n", 6, 14, "cannot be false");
}

TEST_F(SpecErrors, KernelTunersStrategyNameIsAnAlias) {
  Spec s = load_spec(write(kHead + "search: {strategy: genetic_algorithm, options: {population: 12}}\n"));
  EXPECT_EQ(s.search.strategy, "genetic");
  ASSERT_EQ(s.search.options.size(), 1u);
  EXPECT_EQ(s.search.options[0].name, "population");
  // Under Kernel Tuner's name, Kernel Tuner's `restart` (first or best
  // improvement) is not taken for local's, at the option's place; under
  // local's own name it is local's.
  expect_error(kHead + "search: {strategy: mls, options: {restart: false}}\n", 6, 35,
               "option 'restart' of strategy 'mls' is Kernel Tuner's, which means another thing than tunekit's");
  const Spec local = load_spec(write(kHead + "search: {strategy: local, options: {restart: false}}\n"));
  ASSERT_EQ(local.search.options.size(), 1u);
  EXPECT_EQ(local.search.options[0].name, "restart");
}

TEST_F(SpecErrors, ConfigsImplyParameters) {
  fs::path p = write(kHead +
                     "configs:\n"
                     "  - {BM: 64, BN: 32, TILE: 'using T = S<1, 2>;'}\n"
                     "  - {BM: 128, BN: 32, TILE: 'using T = S<1, 2>;'}\n"
                     "  - {BM: 64, BN: 16, TILE: 'using T = S<1, 2>;'}\n"
                     "default: {BN: 16, TILE: 'using T = S<1, 2>;', BM: 64}\n");
  Spec s = load_spec(p);
  ASSERT_EQ(s.parameters.size(), 3u);
  EXPECT_EQ(s.parameters[0].name, "BM");
  EXPECT_EQ(ints(s.parameters[0].values), (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(s.parameters[1].name, "BN");
  EXPECT_EQ(ints(s.parameters[1].values), (std::vector<std::int64_t>{32, 16}));
  EXPECT_EQ(s.parameters[2].name, "TILE");
  ASSERT_EQ(s.parameters[2].values.size(), 1u);
  EXPECT_EQ(s.parameters[2].values[0].as_string(), "using T = S<1, 2>;");
  ASSERT_EQ(s.configs.size(), 3u);
  EXPECT_EQ(s.configs[1].at("TILE").as_string(), "using T = S<1, 2>;");
  // Quoted where it is shown: its comma would read as a fourth entry.
  EXPECT_EQ(s.default_config->str(), "{BM: 64, BN: 16, TILE: 'using T = S<1, 2>;'}");
}

TEST_F(SpecErrors, PartialConfigNamesWhatIsMissing) {
  expect_error(kHead +
                   "configs:\n"
                   "  - {BM: 64, BN: 32}\n"
                   "  - {BM: 128}\n",
               8, 5, "'configs[1]' misses parameter BN");
  // A misspelt key is said at the key, with the name it stands for, not as
  // a name the other configs miss.
  expect_error(kHead +
                   "configs:\n"
                   "  - {BM: 64, UNROLL: 1}\n"
                   "  - {BM: 128, UNROLLL: 2}\n"
                   "  - {BM: 32, UNROLL: 4}\n",
               8, 15, "'UNROLLL' is given by 1 of the 3 configs; did you mean 'UNROLL'?");
  // A key few configs give is said at the key, not as one the others miss.
  expect_error(kHead +
                   "configs:\n"
                   "  - {BM: 64}\n"
                   "  - {BM: 128, FOO: 3}\n"
                   "  - {BM: 32}\n",
               8, 15, "'FOO' is given by 1 of the 3 configs; a config gives every parameter a value");
}

TEST_F(SpecErrors, ValueKinds) {
  fs::path p = write(kHead +
                     "sizes: []\n"
                     "parameters:\n"
                     "  A: [3, -2, 2.5, 1e-3, abc, '7', true]\n"
                     "  B: '5:7'\n"
                     "  C: x\n"
                     "reference: none\n");
  Spec s = load_spec(p);
  ASSERT_EQ(s.sizes.size(), 1u);
  EXPECT_TRUE(s.sizes[0].empty());
  const auto& a = s.parameters[0].values;
  ASSERT_EQ(a.size(), 7u);
  EXPECT_EQ(a[0].as_int(), 3);
  EXPECT_EQ(a[1].as_int(), -2);
  EXPECT_DOUBLE_EQ(a[2].as_float(), 2.5);
  EXPECT_DOUBLE_EQ(a[3].as_float(), 1e-3);
  EXPECT_EQ(a[4].as_string(), "abc");
  EXPECT_TRUE(a[5].is_string());  // quoted: a string
  EXPECT_EQ(a[5].as_string(), "7");
  EXPECT_EQ(a[6].as_int(), 1);  // booleans are ints
  EXPECT_EQ(ints(s.parameters[1].values), (std::vector<std::int64_t>{5, 6, 7}));
  EXPECT_EQ(s.parameters[2].values.at(0).as_string(), "x");
  EXPECT_EQ(s.reference.kind, ReferenceSpec::Kind::none);
}

// YAML 1.2's core schema, which yaml-cpp leaves to its reader: 0x40 and
// 0o17 are ints, .inf and .nan floats, and a quoted scalar, as every JSON
// string, stays a string. No value or setting of a spec may be infinite or
// NaN: each is refused where it is written.
TEST_F(SpecErrors, HexOctalAndSpecialFloatsAreNumbersAsYamlReadsThem) {
  fs::path p = write(kHead +
                     "sizes: {N: 0x400}\n"
                     "parameters:\n"
                     "  BLOCK: [0x20, 0x40, 0o200, '0x80', 0x, 0o8]\n"
                     "constraints: [BLOCK > 32]\n"
                     "tolerance: {atol: 0x1, rtol: 1e-3}\n"
                     "measure: {min_samples: 0x10}\n");
  Spec s = load_spec(p);
  EXPECT_EQ(s.sizes.at(0).at("N"), Value(1024));
  const auto& block = s.parameters.at(0).values;
  ASSERT_EQ(block.size(), 6u);
  EXPECT_EQ(block[0], Value(32));
  EXPECT_EQ(block[1], Value(64));
  EXPECT_EQ(block[2], Value(128));
  EXPECT_EQ(block[3], Value("0x80"));  // quoted: a string
  EXPECT_EQ(block[4], Value("0x"));    // no digits: not the schema's int
  EXPECT_EQ(block[5], Value("0o8"));   // not an octal digit
  EXPECT_EQ(s.tolerance.atol, 1.0);
  EXPECT_EQ(s.measure.min_samples, 16u);

  // The same in JSON: its strings are quoted, and stay strings.
  fs::path j = write(R"({"kernel": {"source": "k.cpp", "entry": "k"},
 "arguments": [{"name": "X", "type": "f32", "size": "N"}],
 "sizes": {"N": 1024}, "parameters": {"BLOCK": ["0x20", 64, ".inf"]}})",
                     "spec.json");
  EXPECT_EQ(load_spec(j).parameters.at(0).values, (std::vector<Value>{"0x20", 64, ".inf"}));

  // A value that becomes a define or a stored key must be finite.
  expect_error(kHead + "parameters:\n  BLOCK: [32, .inf]\n", 7, 15,
               "'parameters.BLOCK[1]' is .inf, which is not a finite number; a parameter's, size's or config's value "
               "must be (quote it for the string '.inf')");
  expect_error(kHead + "sizes: {N: -.Inf}\n", 6, 12, "is -.Inf, which is not a finite number");
  expect_error(kHead + "parameters:\n  BLOCK: .NaN\n", 7, 10, "is .NaN, which is not a finite number");
  // A setting too: tune() would refuse it with no place to name.
  expect_error(kHead + "tolerance: {atol: .inf}\n", 6, 19,
               "'tolerance.atol' is .inf, which is not a finite number; expected a number >= 0");
  expect_error(kHead + "measure: {noise: .nan}\n", 6, 18, "is .nan, which is not a finite number");
  expect_error(kHead + "sizes: {N: 0x8000000000000000}\n", 6, 12,
               "'sizes.N': 0x8000000000000000 is beyond a 64-bit integer");
  expect_error(kHead + "sizes: {N: 1e400}\n", 6, 12,
               "'sizes.N' is 1e400, which is out of the range of a float (a float's magnitude is at most 1.8e+308, "
               "and above 0 at least 4.9e-324; quote it for the string '1e400')");
  expect_error(kHead + "tolerance: {atol: 1e-400}\n", 6, 19,
               "'tolerance.atol' is 1e-400, which is out of the range of a float");
  // Quoted, a hex size is a string, which the sizes refuse with the fix.
  expect_error(kHead + "sizes: {N: '0x400'}\n", 6, 13, "size 'N' is the string \"0x400\"; a size is a number");
}

TEST_F(SpecErrors, ReferenceDefaultAndSourceDefaults) {
  const std::string out = "  - {name: Y, type: f32, size: N, role: out}\n";
  Spec s = load_spec(write(kHead + out + "reference: default\n"));
  EXPECT_EQ(s.reference.kind, ReferenceSpec::Kind::default_config);
  s = load_spec(write(kHead + out + "reference: {entry: k}\n"));
  EXPECT_EQ(s.reference.kind, ReferenceSpec::Kind::function);
  EXPECT_TRUE(s.reference.source.empty());
  EXPECT_EQ(s.reference.entry, "k");
}

TEST_F(SpecErrors, SpecFileMissing) {
  fs::path p = dir_ / "nope.yaml";
  try {
    load_spec(p);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, p.string());
    EXPECT_THAT(e.what(), HasSubstr("not found"));
  }
}

TEST_F(SpecErrors, EmptyFile) { expect_error("", 1, 1, "the spec is empty"); }

// A T1 file with a space and no kernel: said so, with the commands that
// read such a file, not "unknown key 'General'". (One with a
// KernelSpecification is tuned: t1_kernel_test.cpp.)
TEST_F(SpecErrors, AT1FileWithoutAKernelIsNamedAsSuch) {
  expect_error(R"({"General": {"FormatVersion": 1}, "ConfigurationSpace": {"TuningParameters": []}})", 1, 1,
               "a Kernel Tuner T1 file with a space ('ConfigurationSpace') but no kernel ('KernelSpecification'): "
               "`tunekit space FILE`");
}

TEST_F(SpecErrors, NotAMapping) { expect_error("- a\n- b\n", 1, 1, "the spec must be a mapping"); }

TEST_F(SpecErrors, UnknownTopLevelKeyWithSuggestion) {
  expect_error(kHead + "paramters:\n  X: [1]\n", 6, 1, "unknown key 'paramters' in spec; did you mean 'parameters'?");
}

TEST_F(SpecErrors, UnknownKeyListsAllowedKeys) {
  expect_error(kHead + "zzz: 1\n", 6, 1, "allowed keys: name, kernel, arguments, sizes");
}

TEST_F(SpecErrors, UnknownNestedKey) {
  expect_error("kernel:\n  source: k.cpp\n  entry: k\n  flagz: [-O2]\n", 4, 3,
               "unknown key 'flagz' in 'kernel'; did you mean 'flags'?");
}

TEST_F(SpecErrors, DuplicateKey) {
  expect_error(kHead + "parameters:\n  X: [1]\n  X: [2]\n", 8, 3, "duplicate key 'X' in 'parameters'");
}

TEST_F(SpecErrors, MissingEntry) {
  expect_error("kernel:\n  source: k.cpp\narguments: []\n", 2, 3, "missing required key 'entry' in 'kernel'");
}

TEST_F(SpecErrors, MissingKernel) { expect_error("arguments: []\n", 1, 1, "missing required key 'kernel' in spec"); }

TEST_F(SpecErrors, MissingArguments) {
  expect_error("kernel: {source: k.cpp, entry: k}\n", 1, 1, "missing required key 'arguments' in spec");
}

TEST_F(SpecErrors, MissingArgumentType) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, size: 4}\n", 3, 5,
               "missing required key 'type' in 'arguments[0]'");
}

TEST_F(SpecErrors, FlagsWrongType) {
  expect_error("kernel:\n  source: k.cpp\n  entry: k\n  flags: {a: 1}\narguments: []\n", 4, 10,
               "'kernel.flags' must be a list of strings, got a mapping");
}

TEST_F(SpecErrors, FlagsElementWrongType) {
  expect_error("kernel:\n  source: k.cpp\n  entry: k\n  flags: [-O2, [x]]\narguments: []\n", 4, 16,
               "'kernel.flags' must be a list of strings, but 'kernel.flags[1]' is a list");
}

TEST_F(SpecErrors, ArgumentsWrongType) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments: {a: 1}\n", 2, 12,
               "'arguments' must be a list of arguments");
}

TEST_F(SpecErrors, NullValueLocatedAtKey) {
  expect_error("kernel:\n  source: k.cpp\n  entry:\narguments: []\n", 3, 3,
               "'kernel.entry' must be a function name, got nothing");
}

TEST_F(SpecErrors, IntegerWrongType) {
  expect_error(kHead + "measure: {min_samples: many}\n", 6, 24,
               "'measure.min_samples' must be an integer >= 1, got 'many'");
}

TEST_F(SpecErrors, IntegerTooSmall) {
  expect_error(kHead + "search: {max_evals: 0}\n", 6, 21, "'search.max_evals' must be an integer >= 1, got 0");
}

TEST_F(SpecErrors, MaxFraction) {
  expect_error(kHead + "search: {max_fraction: 0}\n", 6, 24,
               "'search.max_fraction' must be a share of each size's valid configs in (0, 1], e.g. 0.02, got 0");
  expect_error(kHead + "search: {max_fraction: 2.5}\n", 6, 24, "in (0, 1], e.g. 0.02, got 2.5");
  expect_error(kHead + "search: {max_fraction: some}\n", 6, 24, "'search.max_fraction' must be a share");
  expect_error(kHead + "search: {max_evals: 10, max_fraction: 0.1}\n", 6, 39,
               "'search.max_fraction' and search.max_evals are two budgets; give one of them");
}

TEST_F(SpecErrors, MinSamplesAboveMax) {
  expect_error(kHead + "measure: {min_samples: 10, max_samples: 5}\n", 6, 41, "exceeds 'measure.max_samples'");
}

// The timeout guards against a hung config: warm-up and sampling (max_time)
// that reach it would make it a second, silent cap that throws a working
// config's samples away. Named at the timeout, or, when the timeout is the
// default, at the longer of the two.
TEST_F(SpecErrors, SamplingThatOutlastsTheTimeout) {
  expect_error(kHead + "measure: {max_time: 3s, timeout: 2s, noise: 0}\n", 6, 34,
               "'measure.warmup', 'measure.max_time' and 'measure.timeout': the warm-up (0.05 s) and the sampling cap, "
               "max_time (3 s), take 3.05 s, which does not fit within the timeout (2 s) that bounds the whole trial: "
               "expected a timeout above 3.05 s, or a shorter max_time");
  expect_error(kHead + "measure: {max_time: 70s}\n", 6, 21,
               "max_time (70 s), take 70.05 s, which does not fit within the timeout (60 s)");
  expect_error(kHead + "measure: {warmup: 2s, timeout: 1s}\n", 6, 32,
               "the warm-up (2 s) and the sampling cap, max_time (2 s), take 4 s, which does not fit within the "
               "timeout (1 s)");
  expect_error(kHead + "measure: {warmup: 1e30}\n", 6, 19, "the warm-up (1e+30 s) and the sampling cap");
}

TEST_F(SpecErrors, BadElementType) {
  expect_error(
      "kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: float32, size: 4}\n", 3, 21,
      "bad value 'float32' for 'arguments[0].type': expected one of f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, "
      "u32, u64");
}

TEST_F(SpecErrors, BadRole) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: f32, size: 4, role: output}\n", 3,
               41, "bad value 'output' for 'arguments[0].role': expected one of in, out, inout, scratch, scalar");
}

TEST_F(SpecErrors, BadFill) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: f32, size: 4, fill: zero}\n", 3, 41,
               "bad value 'zero' for 'arguments[0].fill': expected random, normal, zeros, {constant: v}, {sequence: v} "
               "or {file: PATH}; did "
               "you mean 'zeros'?");
}

// Converted anyway, 1000 would reach an i8 kernel as -24 and 2.7 as 2.
TEST_F(SpecErrors, AFillItsBuffersTypeCannotHoldIsRefused) {
  const std::string head = "kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: ";
  expect_error(head + "i8, size: 4, fill: {constant: 1000}}\n", 3, 51, "1000 does not fit i8 (-128 to 127)");
  expect_error(head + "i32, size: 4, fill: {constant: 2.7}}\n", 3, 52, "2.7 is not a whole number");
  expect_error(head + "u8, size: 4, fill: {sequence: 1.5}}\n", 3, 51, "1.5 is not a whole number");
  expect_error(head + "f16, size: 4, fill: {constant: 1e6}}\n", 3, 52, "does not fit f16");
  expect_error(head + "i32, size: 4, fill: normal}\n", 3, 41,
               "the normal fill of argument 'X': normal values are floating-point, and a buffer of i32 holds "
               "integers");
}

// A listed config that can never run: a value outside its parameter's list.
TEST_F(SpecErrors, AListedConfigWithAValueOutsideItsListIsRefused) {
  expect_error(kHead + "parameters: {BM: [1, 2]}\nconfigs: [{BM: 2}, {BM: 3}]\n", 7, 25,
               "'BM' = 3 is not among its values [1, 2]");
}

TEST_F(SpecErrors, AnArchOfALanguageWithoutOneIsRefused) {
  expect_error("kernel: {source: k.cpp, entry: k, arch: sm_90}\narguments: []\n", 1, 35,
               "'arch' (the target architecture) applies to cuda kernels, not c++");
}

// How long the compiler may run a build: 5 minutes unless kernel.build_timeout
// says otherwise, a duration above 0, and only where the backend runs a
// compiler program (an application's build has application.build_timeout;
// Triton's default is 10 minutes).
TEST_F(SpecErrors, ABuildTimeoutIsAPositiveDurationForACompilerProgram) {
  EXPECT_FALSE(load_spec(write("kernel: {source: k.cpp, entry: k}\narguments: []\n")).kernel.build_timeout);
  EXPECT_EQ(
      load_spec(write("kernel: {source: k.cpp, entry: k, build_timeout: 90s}\narguments: []\n")).kernel.build_timeout,
      Seconds(90));
  expect_error("kernel: {source: k.cpp, entry: k, build_timeout: 0}\narguments: []\n", 1, 50,
               "'kernel.build_timeout' must be a duration > 0");
  expect_error("kernel: {source: k.cpp, entry: k, build_timeout: -1s}\narguments: []\n", 1, 50,
               "'kernel.build_timeout': bad duration '-1s': it is negative");
  expect_error("kernel: {source: k.cpp, entry: k, build_timeout: soon}\narguments: []\n", 1, 50,
               "expected a number of seconds or a number with a unit");
  expect_error("kernel: {source: k.cpp, language: command, build_timeout: 1m}\napplication: {run: [./app]}\n", 1, 44,
               "'build_timeout' does not apply to a command kernel: its build command's limit is "
               "'application.build_timeout'");
  // Triton's compile helpers take it too, with a default of their own:
  // FakeTriton.ACompilePastTheSpecsBuildTimeoutIsACompileErrorNamingIt.
}

// A second document was ignored, and what the user wrote in it with it.
TEST_F(SpecErrors, ASecondYamlDocumentIsRefused) {
  expect_error(kHead + "---\nparameters: {A: [1]}\n", 7, 1, "a spec is one YAML document; a second");
  expect_error(kHead + "--- {parameters: {A: [1]}}\n", 6, 1, "a spec is one YAML document; a second starts here");
}

TEST_F(SpecErrors, ANoiseTargetOfOneOrMoreIsRefused) {
  expect_error(kHead + "measure: {noise: 5}\n", 6, 18, "a share below 1 (0.02 is 2%; 0: no target), got 5");
}

TEST_F(SpecErrors, FillConstantNeedsValue) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: f32, size: 4, fill: constant}\n", 3,
               41, "needs a value: {constant: 1.5}");
}

TEST_F(SpecErrors, BadStrategy) {
  // Any registered strategy is accepted; the message lists them.
  expect_error(kHead + "search: {strategy: annealling}\n", 6, 20,
               "unknown strategy 'annealling'; did you mean 'annealing'?");
  expect_error(kHead + "search: {strategy: simplex}\n", 6, 20,
               "unknown strategy 'simplex' (known: auto, exhaustive, random");
  expect_error(kHead + "search: {strategy: randon}\n", 6, 20, "unknown strategy 'randon'; did you mean 'random'?");
  // Kernel Tuner's names are aliases, offered for their misspellings too.
  expect_error(kHead + "search: {strategy: simulated_anealing}\n", 6, 20, "did you mean 'simulated_annealing'?");
  expect_error(kHead + "search: {strategy: random, options: {size: 3}}\n", 6, 38,
               "option 'size': strategy 'random' takes no options");
  expect_error(kHead + "search: {strategy: genetic, options: {popsize: 3}}\n", 6, 39, "'popsize'");
  // true is no number, though it reads as 1 where a flag is 0 or 1; quoted,
  // it is text.
  expect_error(kHead + "search: {strategy: genetic, options: {population: true}}\n", 6, 39,
               "option 'population' of strategy 'genetic' must be integer in [2, 1000000], got true");
  expect_error(kHead + "search: {strategy: genetic, options: {population: 'true'}}\n", 6, 39,
               "must be integer in [2, 1000000], got 'true'");
  // An option of another strategy: the message says whose it is.
  expect_error(kHead + "search: {options: {walkers: 2}}\n", 6, 20,
               "strategy 'auto' takes no options; 'walkers' is an option of strategy 'surrogate': choose that "
               "strategy to set it");
  // Kernel Tuner's budget, given as its users give it: where it goes here.
  expect_error(kHead + "search: {strategy: genetic_algorithm, options: {max_fevals: 100}}\n", 6, 49,
               "Kernel Tuner's max_fevals is tunekit's budget: search.max_evals in a spec");
  expect_error(kHead + "search: {transfer: -1}\n", 6, 20, "an integer >= 0");
}

TEST_F(SpecErrors, BadCache) {
  expect_error(kHead + "measure: {cache: warm}\n", 6, 18,
               "bad value 'warm' for 'measure.cache': expected one of cold, cold-read, hot");
}

TEST_F(SpecErrors, EarlyStop) {
  EXPECT_DOUBLE_EQ(load_spec(write(kHead)).measure.early_stop, 3.0);  // on by default
  for (auto [text, factor] : {std::pair{"2.5", 2.5}, std::pair{"10", 10.0}, std::pair{"off", 0.0},
                              std::pair{"false", 0.0}, std::pair{"0", 0.0}})
    EXPECT_DOUBLE_EQ(load_spec(write(kHead + "measure: {early_stop: " + text + "}\n")).measure.early_stop, factor)
        << text;
  // At 1 or below, a config as fast as the best could be cut.
  expect_error(kHead + "measure: {early_stop: 1}\n", 6, 23,
               "'measure.early_stop': bad early stop '1': it is not above 1; expected a factor > 1");
  expect_error(kHead + "measure: {timeout: 5s, early_stop: often}\n", 6, 36,
               "'measure.early_stop': bad early stop 'often': it is not a number");
  expect_error(kHead + "measure: {early_stop: [3]}\n", 6, 23, "'measure.early_stop' must be a factor > 1 or off");
}

TEST_F(SpecErrors, Confirm) {
  const Spec plain = load_spec(write(kHead));
  EXPECT_EQ(plain.measure.confirm, 3u);  // on by default
  EXPECT_EQ(plain.measure.confirm_rounds, 3u);
  for (auto [text, count] : {std::pair{"5", 5u}, std::pair{"0", 0u}, std::pair{"off", 0u}, std::pair{"false", 0u}})
    EXPECT_EQ(load_spec(write(kHead + "measure: {confirm: " + text + "}\n")).measure.confirm, count) << text;
  EXPECT_EQ(load_spec(write(kHead + "measure: {confirm_rounds: 1}\n")).measure.confirm_rounds, 1u);
  expect_error(kHead + "measure: {confirm: -1}\n", 6, 20,
               "'measure.confirm' must be a count of the fastest configs to measure again, or off, got -1");
  expect_error(kHead + "measure: {confirm: some}\n", 6, 20,
               "'measure.confirm' must be a count of the fastest configs to measure again, or off");
  expect_error(kHead + "measure: {confirm_rounds: 0}\n", 6, 27,
               "'measure.confirm_rounds' must be an integer >= 1, got 0");
}

TEST_F(SpecErrors, CacheModes) {
  for (auto [text, mode] : {std::pair{"cold", CacheMode::cold}, std::pair{"cold-read", CacheMode::cold_read},
                            std::pair{"hot", CacheMode::hot}})
    EXPECT_EQ(load_spec(write(kHead + "measure: {cache: " + text + "}\n")).measure.cache, mode) << text;
  // Block style too: the value's own position.
  expect_error(kHead + "measure:\n  noise: 0.05\n  cache: cold_read\n", 8, 10,
               "bad value 'cold_read' for 'measure.cache': expected one of cold, cold-read, hot; did you mean "
               "'cold-read'?");
}

TEST_F(SpecErrors, BadInjection) {
  expect_error("kernel: {source: k.cpp, entry: k, injection: macros}\narguments: []\n", 1, 46,
               "bad value 'macros' for 'kernel.injection': expected one of auto, defines, tunable, range");
}

TEST_F(SpecErrors, BadLanguage) {
  expect_error("kernel: {source: k.cpp, entry: k, language: rust}\narguments: []\n", 1, 45, "expected one of c++, c");
}

TEST_F(SpecErrors, BadReferenceString) {
  expect_error(kHead + "reference: naive\n", 6, 12, "expected 'default', 'none' or a mapping");
}

TEST_F(SpecErrors, ReferenceMissingEntry) {
  expect_error(kHead + "reference: {source: k.cpp}\n", 6, 12, "missing required key 'entry' in 'reference'");
}

TEST_F(SpecErrors, ScalarWithSizeAndValue) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: N, type: i32, size: 4, value: N}\n", 3, 42,
               "has both 'size' (a buffer) and 'value' (a scalar)");
}

TEST_F(SpecErrors, ArgumentWithoutSizeOrValue) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: N, type: i32}\n", 3, 5, "needs 'size'");
}

TEST_F(SpecErrors, ScalarWithOutRole) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: N, type: i32, value: N, role: out}\n", 3, 42,
               "is a scalar (it has 'value'), so its role is 'scalar'");
}

TEST_F(SpecErrors, DuplicateArgument) {
  expect_error(
      "kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: N, type: i32, value: N}\n"
      "  - {name: N, type: f32, size: 4}\n",
      4, 5, "duplicate argument name 'N'");
}

TEST_F(SpecErrors, BadArgumentName) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: 2x, type: i32, value: 1}\n", 3, 12,
               "'arguments[0].name' must be a C identifier");
}

TEST_F(SpecErrors, BadRangeString) {
  expect_error(kHead + "parameters:\n  KC: \"64:abc:64\"\n", 7, 11,
               "bad range '64:abc:64': the end 'abc' is not an integer");
}

TEST_F(SpecErrors, RangeZeroStep) {
  expect_error(kHead + "parameters:\n  KC: 64:256:0\n", 7, 14, "the step must not be 0");
}

TEST_F(SpecErrors, RangeEmpty) { expect_error(kHead + "parameters:\n  KC: '256:64:64'\n", 7, 8, "the range is empty"); }

TEST_F(SpecErrors, RangeTooBig) { expect_error(kHead + "parameters:\n  KC: 0:1000000000000\n", 7, 7, "at most"); }

TEST_F(SpecErrors, Pow2NotPowerOfTwo) {
  expect_error(kHead + "parameters:\n  NR: {pow2: [4, 12]}\n", 7, 18, "12 is not a power of two");
}

TEST_F(SpecErrors, Pow2WrongShape) {
  expect_error(kHead + "parameters:\n  NR: {pow2: 4}\n", 7, 14,
               "'parameters.NR.pow2' must be a list [lo, hi] of two powers of two");
}

TEST_F(SpecErrors, Pow2Reversed) {
  expect_error(kHead + "parameters:\n  NR: {pow2: [16, 4]}\n", 7, 14, "lo (16) is greater than hi (4)");
}

TEST_F(SpecErrors, ParameterUnknownForm) {
  expect_error(kHead + "parameters:\n  NR: {range: [1, 2]}\n", 7, 8, "unknown key 'range' in 'parameters.NR'");
}

TEST_F(SpecErrors, DuplicateParameterValue) {
  expect_error(kHead + "parameters:\n  MC: [32, 64, 32]\n", 7, 16, "duplicate value 32 in parameter 'MC'");
}

TEST_F(SpecErrors, EmptyParameter) {
  expect_error(kHead + "parameters:\n  MC: []\n", 7, 7, "parameter 'MC' has no values");
}

TEST_F(SpecErrors, ParameterNamedLikeSize) {
  expect_error(kHead + "sizes: {N: 4}\nparameters:\n  N: [1]\n", 8, 3, "'N' is both a parameter and a size");
}

TEST_F(SpecErrors, BadDuration) {
  expect_error(kHead + "measure: {warmup: 5 parsecs}\n", 6, 19, "'measure.warmup': bad duration '5 parsecs'");
}

TEST_F(SpecErrors, BadDurationQuoted) {
  expect_error(kHead + "search: {max_time: \"-1s\"}\n", 6, 21, "bad duration '-1s'");
}

TEST_F(SpecErrors, ZeroTimeout) {
  expect_error(kHead + "measure: {timeout: 0s}\n", 6, 20, "'measure.timeout' must be a duration > 0");
}

TEST_F(SpecErrors, BadConstraintExpression) {
  // The '$' is the 8th character of "MC % 2 $ 3", which starts at column 5.
  expect_error(kHead + "constraints:\n  - MC % 2 $ 3\n", 7, 12, "");
}

TEST_F(SpecErrors, BadConstraintExpressionMissingOperand) {
  // "MC % * 2" starts at column 5; the '*' is at column 10.
  expect_error(kHead + "constraints:\n  - MC % * 2\n", 7, 10, "*");
}

TEST_F(SpecErrors, BadConstraintExpressionBlockScalar) {
  // A block scalar's text starts on the next line, at its indentation.
  expect_error(kHead + "constraints: |\n    MC +* 2\n", 7, 9, "*");
}

TEST_F(SpecErrors, BadConstraintExpressionQuoted) { expect_error(kHead + "constraints: [\"MC $ 2\"]\n", 6, 19, ""); }

TEST_F(SpecErrors, BadConstraintExpressionJson) {
  expect_error(
      "{\"kernel\": {\"source\": \"k.cpp\", \"entry\": \"k\"},\n"
      " \"arguments\": [{\"name\": \"X\", \"type\": \"f32\", \"size\": \"N $ 2\"}]}\n",
      2, 56, "", "spec.json");
}

TEST_F(SpecErrors, BadSizeExpression) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments:\n  - {name: X, type: f32, size: M*$}\n", 3, 34, "");
}

TEST_F(SpecErrors, YamlSyntaxError) {
  expect_error(kHead + "parameters: [1, 2\nsizes: {}\n", 7, 6, "YAML syntax error");
}

TEST_F(SpecErrors, YamlSyntaxErrorIllegalMapValue) {
  expect_error("kernel: a: b\n", 1, 10, "YAML syntax error: illegal map value");
}

TEST_F(SpecErrors, AKeyIndentedUnlikeItsSiblingsIsHinted) {
  expect_error("parameters:\n  A: [1, 2]\n   B: [1]\n", 3, 4, "end of map not found (check this line's indentation");
}

TEST_F(SpecErrors, ATabInTheIndentationIsNamed) {
  expect_error("kernel:\n\tsource: k.cpp\n", 2, 8, "indented with a tab");
}

// yaml-cpp passes bytes that are not UTF-8 through; they are refused where
// they are, not when a name or value is written out as JSON after a tune.
TEST_F(SpecErrors, BytesThatAreNotUtf8AreRefusedWhereTheyAre) {
  expect_error(kHead + "parameters:\n  S: [\"a\xff\", b]\n", 7, 9, "byte 0xFF is not UTF-8");
  expect_error("name: k\xc3\n" + kHead, 1, 8, "byte 0xC3 is not UTF-8");  // a sequence cut short
  expect_error("name: \xed\xa0\x80\n" + kHead, 1, 7, "byte 0xED is not UTF-8");  // a surrogate
}

TEST_F(SpecErrors, UnicodeTextIsAccepted) {
  const auto spec = write("name: k\n# \xc3\xa9t\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\n" + kHead +
                          "parameters: {S: [\"\xc3\xa9\", b]}\n");
  EXPECT_EQ(load_spec(spec).parameters.at(0).values.at(0), Value(std::string("\xc3\xa9")));
}

// A workspace (split-K's partial sums, arrival counters) is written by the
// kernel: declared `in`, every such write would be a wrong_result. It starts
// as zeros, as a counter in it must, and is not compared.
TEST_F(SpecErrors, AWorkspaceIsDeclaredScratchAndStartsAsZeros) {
  const Spec s = load_spec(write(kHead + "  - {name: W, type: u32, size: N, role: scratch}\n" +
                                 "  - {name: V, type: f32, size: N, role: scratch, fill: random}\n"));
  const ArgumentSpec& w = s.arguments[s.arguments.size() - 2];
  EXPECT_EQ(w.role, Role::scratch);
  EXPECT_EQ(w.fill, Fill::zeros);
  EXPECT_EQ(s.arguments.back().fill, Fill::random);
  const std::string why =
      "'reference' gives outputs to compare with, but no argument has role out or inout (a buffer's role defaults "
      "to in), so nothing would be verified: give the buffer the kernel writes 'role: out'";
  expect_error(kHead + "  - {name: Y, type: f32, size: N, role: scratch}\nreference:\n  entry: k_ref\n", 7, 1, why);
}

TEST_F(SpecErrors, MissingSourceFile) {
  expect_error("kernel:\n  source: missing.cpp\n  entry: k\narguments: []\n", 2, 11,
               "kernel source file 'missing.cpp' not found");
}

// The output's role left out (it is `in` then): every trial would pass a
// comparison of nothing and be reported verified.
TEST_F(SpecErrors, AReferenceWithNoOutputToCompareIsRefusedAtItsKey) {
  const std::string why =
      "'reference' gives outputs to compare with, but no argument has role out or inout (a buffer's role defaults "
      "to in), so nothing would be verified: give the buffer the kernel writes 'role: out'";
  expect_error(kHead + "reference: {entry: k_ref}\n", 6, 1, why);
  expect_error(kHead + "reference: default\n", 6, 1, why);
  expect_error(kHead + "  - {name: Y, type: f32, size: N, role: in}\nreference:\n  entry: k_ref\n", 7, 1, why);
  // An inout buffer is compared; `none` asks for no comparison.
  EXPECT_EQ(load_spec(write(kHead + "  - {name: Y, type: f32, size: N, role: inout}\nreference: {entry: k_ref}\n"))
                .reference.entry,
            "k_ref");
  EXPECT_EQ(load_spec(write(kHead + "reference: none\n")).reference.kind, ReferenceSpec::Kind::none);
  // No reference named: nothing to refuse (the tune says nothing was
  // verified).
  EXPECT_EQ(load_spec(write(kHead)).reference.kind, ReferenceSpec::Kind::default_config);
}

TEST_F(SpecErrors, MissingReferenceSource) {
  expect_error(kHead + "reference:\n  source: \"gone.cpp\"\n  entry: k\n", 7, 12,
               "reference source file 'gone.cpp' not found");
}

TEST_F(SpecErrors, ConfigNamesUnknownParameter) {
  expect_error(kHead + "parameters:\n  BM: [32, 64]\n  BN: [32]\nconfigs:\n  - {BM: 32, BX: 32}\n", 10, 14,
               "unknown parameter 'BX' in 'configs[0]'; did you mean 'BM'?");
}

// Through `// tunable` lines, a config key that matches none is the
// spec's error, at the key (not at the source, once per config built),
// with the names the source's lines give.
TEST_F(SpecErrors, AConfigKeyThatMatchesNoTunableLineIsLocatedAtTheKey) {
  std::ofstream(dir_ / "k.cpp") << "void k() {\n  constexpr int BM = 1; // tunable\n"
                                   "  using T = int; // tunable: TILE\n}\n";
  expect_error(kHead + "configs:\n  - {BM: 1, BN: 1, TILE: 'using T = long;'}\n  - {BM: 2, BN: 1, TILE: 'int;'}\n", 7,
               13,
               "'BN' matches no '// tunable' line in " + (dir_ / "k.cpp").string() +
                   "; did you mean 'BM'? (its tunable names: BM, TILE)");
  // A declared parameter, at its name under `parameters`.
  expect_error(kHead + "parameters:\n  BM: [1, 2]\n  TILES: ['using T = long;']\n", 8, 3,
               "'TILES' matches no '// tunable' line in " + (dir_ / "k.cpp").string() + "; did you mean 'TILE'?");
}

TEST_F(SpecErrors, DefaultNamesUnknownParameter) {
  expect_error(kHead + "parameters:\n  BM: [32, 64]\ndefault:\n  BM: 32\n  KC: 4\n", 10, 3,
               "unknown parameter 'KC' in 'default' (parameters: BM)");
}

TEST_F(SpecErrors, DefaultWithoutParameters) {
  expect_error(kHead + "default: {BM: 32}\n", 6, 11, "the spec declares no parameters");
}

TEST_F(SpecErrors, DefaultNamesParameterNotInImpliedSet) {
  expect_error(kHead + "configs: [{BM: 1}]\ndefault: {BN: 2}\n", 7, 11, "unknown parameter 'BN' in 'default'");
}

TEST_F(SpecErrors, DuplicateConfig) {
  expect_error(kHead + "configs:\n  - {BM: 1, BN: 2}\n  - {BN: 2, BM: 1}\n", 8, 5, "repeats configs[0]");
}

TEST_F(SpecErrors, ConfigValueNotScalar) {
  expect_error(kHead + "configs:\n  - {BM: [1, 2]}\n", 7, 10,
               "'configs[0].BM' must be a value (int, float or string), got a list");
}

TEST_F(SpecErrors, ToleranceNegative) {
  expect_error(kHead + "tolerance: {atol: -1}\n", 6, 19, "'tolerance.atol' must be a number >= 0");
}

TEST_F(SpecErrors, BadRangeInSourceAnnotation) {
  std::ofstream(dir_ / "r.cu") << "// %RANGE% TUNE_X x 1:8:0\n";
  try {
    load_spec(write("kernel: {source: r.cu, entry: k}\narguments: []\n"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, (dir_ / "r.cu").string());
    EXPECT_EQ(e.where().line, 1);
    EXPECT_EQ(e.where().column, 25);
  }
}

// A spec's parameters for a %RANGE% source narrow its lines: one that names
// no line, a value off its line and a line left without values are errors
// of the spec, not a reference that does not build.
TEST_F(SpecErrors, ParametersOfARangeSourceNarrowItsLines) {
  std::ofstream(dir_ / "r.cpp")
      << "// %RANGE% TUNE_BS bs 64:256:64\n// %RANGE% TUNE_UNROLL unroll 1:8:1\nvoid k() {}\n";
  const std::string head = "kernel: {source: r.cpp, entry: k}\narguments: []\nparameters:\n";
  Spec narrowed = load_spec(write(head + "  TUNE_BS: [64, 128]\n  TUNE_UNROLL: [1, 2]\n"));
  EXPECT_EQ(narrowed.parameters.size(), 2u);
  expect_error(head + "  TUNE_BS: [64, 128]\n", 4, 3,
               "the parameters leave out TUNE_UNROLL, which " + (dir_ / "r.cpp").string() + ":2 declares with %RANGE%");
  expect_error(head + "  TUNE_BS: [64, 100]\n  TUNE_UNROLL: [1]\n", 4, 3,
               "'TUNE_BS' = 100 is not on its %RANGE% line (" + (dir_ / "r.cpp").string() + ":1: 64 to 256, 4 values)");
  expect_error(head + "  TUNE_BS: [64, 128.0]\n  TUNE_UNROLL: [1]\n", 4, 3,
               "'TUNE_BS' = 128.0 is not an integer; a %RANGE% line's values are integers (" +
                   (dir_ / "r.cpp").string() + ":1)");
  expect_error(head + "  TUNE_BS: [64]\n  TUNE_UNROL: [1]\n", 5, 3, "'TUNE_UNROL' matches no %RANGE% line in");
  expect_error(head + "  TUNE_BS: [64]\n  TUNE_UNROL: [1]\n", 5, 3, "did you mean 'TUNE_UNROLL'");
  std::ofstream(dir_ / "none.cpp") << "void k() {}\n";
  expect_error("kernel: {source: none.cpp, entry: k, injection: range}\narguments: []\nparameters:\n  TUNE_BS: [64]\n",
               4, 3, "matches no %RANGE% line in " + (dir_ / "none.cpp").string() + " (it has no %RANGE% line");
}

// Prose that mentions %RANGE% is no annotation: the source's parameters come
// as -D defines, as the builder takes them, and the spec loads.
TEST_F(SpecErrors, ProseThatMentionsRangeIsNoAnnotation) {
  std::ofstream(dir_ / "p.cpp") << "// Parameters come as -D defines, not as %RANGE% lines.\nvoid k() {}\n";
  const Spec spec = load_spec(write("kernel: {source: p.cpp, entry: k}\narguments: []\nparameters: {TILE: [8, 16]}\n"));
  EXPECT_EQ(
      resolve_injection(spec.kernel.injection, "// Parameters come as -D defines, not as %RANGE% lines.\n", "p.cpp"),
      Injection::defines);
  EXPECT_EQ(spec.parameters.size(), 1u);
}

TEST(SpecFromSource, RangeParameters) {
  fs::path src = kData / "cccl_kernel.cu";
  Spec s = spec_from_source(src);
  EXPECT_EQ(s.file, fs::absolute(src).lexically_normal());
  EXPECT_EQ(s.kernel.source, fs::absolute(src).lexically_normal());
  EXPECT_TRUE(s.name.empty());
  EXPECT_TRUE(s.kernel.entry.empty());
  EXPECT_TRUE(s.arguments.empty());
  EXPECT_EQ(s.kernel.injection, Injection::range_defines);
  ASSERT_EQ(s.parameters.size(), 2u);
  EXPECT_EQ(s.parameters[0].name, "TUNE_ITEMS");
  EXPECT_EQ(ints(s.parameters[0].values).front(), 7);
  EXPECT_EQ(ints(s.parameters[0].values).back(), 24);
  EXPECT_EQ(s.parameters[0].where.line, 2);
  EXPECT_EQ(s.parameters[1].name, "TUNE_THREADS");
  EXPECT_EQ(s.parameters[1].values.size(), 29u);
  ASSERT_EQ(s.sizes.size(), 1u);
}

TEST(SpecFromSource, MissingSource) { EXPECT_THROW(spec_from_source(kData / "no_such_file.cu"), InputError); }

TEST(ParseAssignment, Kinds) {
  auto [n, v] = parse_assignment("M=4096");
  EXPECT_EQ(n, "M");
  EXPECT_TRUE(v.is_int());
  EXPECT_EQ(v.as_int(), 4096);
  auto f = parse_assignment(" alpha = 0.5 ");
  EXPECT_EQ(f.first, "alpha");
  EXPECT_TRUE(f.second.is_float());
  EXPECT_DOUBLE_EQ(f.second.as_float(), 0.5);
  auto s = parse_assignment("ORDER=ijk");
  EXPECT_TRUE(s.second.is_string());
  EXPECT_EQ(s.second.as_string(), "ijk");
  auto neg = parse_assignment("K=-3");
  EXPECT_EQ(neg.second.as_int(), -3);
  auto eq = parse_assignment("T=a=b");  // only the first '=' splits
  EXPECT_EQ(eq.second.as_string(), "a=b");
}

// A value on the command line reads as an unquoted one in a spec: YAML
// 1.2's ints (0x, 0o) and floats, each finite; the spec's reader, not a
// decimal-only one that left 0x1F a string.
TEST(ParseAssignment, NumbersReadAsASpecReadsThem) {
  EXPECT_EQ(parse_assignment("M=0x1F").second, Value(31));
  EXPECT_TRUE(parse_assignment("M=0x1F").second.is_int());
  EXPECT_EQ(parse_assignment("M=0o17").second, Value(15));
  EXPECT_TRUE(parse_assignment("M=1e3").second.is_float());
  EXPECT_EQ(parse_assignment("M=1e3").second, Value(1000.0));
  EXPECT_EQ(parse_assignment("M=0x").second, Value("0x"));  // no digits: a name, as in a spec
  EXPECT_EQ(parse_axis("M=[0x10, 0o40, 16.5]").values, (std::vector<Value>{16, 32, 16.5}));
  const SourceLocation flag{"--size M=.inf"};
  for (const auto& [text, said] : std::vector<std::pair<std::string, std::string>>{
           {"M=.inf",
            "'.inf' is not a finite number; expected an integer (4096, 0x1000, 0o10000), a finite float "
            "(0.5, 1e3) or a name"},
           {"M=-.INF", "'-.INF' is not a finite number"},
           {"M=.nan", "'.nan' is not a finite number"},
           {"M=0x10000000000000000", "'0x10000000000000000' is beyond a 64-bit integer"},
           // A float no double holds is out of range, not a name.
           {"M=1e400",
            "'1e400' is out of the range of a float (a float's magnitude is at most 1.8e+308, and above 0 at "
            "least 4.9e-324); expected"},
           {"M=-1e400", "'-1e400' is out of the range of a float"},
           {"M=1e-400", "'1e-400' is out of the range of a float"}}) {
    try {
      parse_assignment(text, flag);
      ADD_FAILURE() << text << " was taken";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "--size M=.inf");
      EXPECT_THAT(e.message(), HasSubstr(said));
    }
  }
}

TEST(ParseAssignment, Errors) {
  EXPECT_THROW(parse_assignment("M4096"), InputError);
  EXPECT_THROW(parse_assignment("=4"), InputError);
  EXPECT_THROW(parse_assignment("M="), InputError);
  EXPECT_THROW(parse_assignment("4M=1"), InputError);
  try {
    parse_assignment("M4096");
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("expected NAME=VALUE"));
  }
}

TEST(ParseRange, Values) {
  EXPECT_EQ(ints(parse_range("64:256:64", {})), (std::vector<std::int64_t>{64, 128, 192, 256}));
  EXPECT_EQ(ints(parse_range("1:4", {})), (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(ints(parse_range("5:5:3", {})), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(ints(parse_range("1:10:4", {})), (std::vector<std::int64_t>{1, 5, 9}));  // end not reached
  EXPECT_EQ(ints(parse_range("10:1:-4", {})), (std::vector<std::int64_t>{10, 6, 2}));
  EXPECT_EQ(ints(parse_range("-2:2:2", {})), (std::vector<std::int64_t>{-2, 0, 2}));
  EXPECT_EQ(ints(parse_range(" 1 : 3 ", {})), (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(ParseRange, ErrorsPointAtTheField) {
  SourceLocation where{"cli", 1, 10};
  auto col = [&](std::string_view text) {
    try {
      parse_range(text, where);
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "cli");
      return e.where().column;
    }
    ADD_FAILURE() << "no error for " << text;
    return -1;
  };
  EXPECT_EQ(col("64"), 10);
  EXPECT_EQ(col("a:4"), 10);
  EXPECT_EQ(col("1:b"), 12);
  EXPECT_EQ(col("1:4:x"), 14);
  EXPECT_EQ(col("1:4:0"), 14);
  EXPECT_EQ(col("4:1"), 10);
  EXPECT_EQ(col("1:2:3:4"), 15);
  EXPECT_EQ(col("1.5:4"), 10);
  try {
    parse_range("4:1", where);
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("empty"));
  }
  try {
    parse_range("1:4:0", where);
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("step must not be 0"));
  }
}

TEST(SpecTypes, Names) {
  EXPECT_EQ(to_string(ElementType::u16), "u16");
  EXPECT_EQ(element_type_from_string("f64"), ElementType::f64);
  EXPECT_EQ(element_type_from_string("i64"), ElementType::i64);
  EXPECT_FALSE(element_type_from_string("float").has_value());
  EXPECT_EQ(size_of(ElementType::f64), 8u);
  EXPECT_EQ(size_of(ElementType::i16), 2u);
  EXPECT_EQ(size_of(ElementType::u8), 1u);
  EXPECT_STREQ(c_type_name(ElementType::f32), "float");
  EXPECT_STREQ(c_type_name(ElementType::u32), "uint32_t");
  EXPECT_STREQ(c_type_name(ElementType::i8), "int8_t");
  EXPECT_EQ(to_string(Fill::sequence), "sequence");
  EXPECT_EQ(to_string(Fill::zeros), "zeros");
  EXPECT_EQ(to_string(Role::inout), "inout");
  EXPECT_EQ(to_string(Role::scalar), "scalar");
  for (auto t : {ElementType::f32, ElementType::f64, ElementType::i8, ElementType::i16, ElementType::i32,
                 ElementType::i64, ElementType::u8, ElementType::u16, ElementType::u32, ElementType::u64})
    EXPECT_EQ(element_type_from_string(to_string(t)), t);
}

TEST_F(SpecErrors, BadEntryName) {
  expect_error("kernel: {source: k.cpp, entry: \"my kernel\"}\narguments: []\n", 1, 33,
               "'kernel.entry' must be a function name, got 'my kernel'");
}

TEST_F(SpecErrors, QualifiedEntryAccepted) {
  Spec s =
      load_spec(write("kernel: {source: k.cpp, entry: 'ns::k'}\narguments: [{name: y, type: f32, size: 4, role: out}]\n"
                      "reference: {entry: ns::ref}\n"));
  EXPECT_EQ(s.kernel.entry, "ns::k");
  EXPECT_EQ(s.name, "ns::k");
  EXPECT_EQ(s.reference.entry, "ns::ref");
}

// Under `injection: auto`, a comment that reads like a tunable line and is
// not one would leave the configs to -D defines that nothing reads, so every
// config would build the same code: an error at the comment, as under
// `injection: tunable`. Under `injection: defines` it is prose.
TEST_F(SpecErrors, ANearMissTunableCommentIsAnErrorUnderAutoInjection) {
  write("using Acc = float; // Tunable: ACC\nvoid k() {}\n", "k.cpp");
  const std::string configs = "configs:\n  - {ACC: \"using Acc = float;\"}\n  - {ACC: \"using Acc = double;\"}\n";
  try {
    load_spec(write(kHead + configs));
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 1);
    EXPECT_EQ(e.where().column, 20);
    EXPECT_NE(std::string(e.what()).find("'Tunable' reads like a tunable annotation"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("set kernel.injection: defines"), std::string::npos) << e.what();
  }
  const std::string defines =
      "kernel:\n  source: k.cpp\n  entry: k\n  injection: defines\n"
      "arguments:\n  - {name: X, type: f32, size: N}\n";
  EXPECT_EQ(load_spec(write(defines + configs)).configs.size(), 2u);
}

// A source with both kinds of annotation is read by its tunable lines under
// `injection: auto`; its %RANGE% parameters then match none, which the
// error says, with the injection that tunes them.
TEST_F(SpecErrors, ASourceWithBothKindsOfAnnotationSaysWhichInjectionTunesItsRanges) {
  write("// %RANGE% TUNE_U unroll 1:4:1\nconstexpr float kScale = 3.0f; // tunable\nvoid k() {}\n", "k.cpp");
  try {
    load_spec(write(kHead));
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'TUNE_U' matches no '// tunable' line"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("set kernel.injection: range"), std::string::npos) << e.what();
  }
  const std::string ranged =
      "kernel:\n  source: k.cpp\n  entry: k\n  injection: range\n"
      "arguments:\n  - {name: X, type: f32, size: N}\n";
  EXPECT_EQ(load_spec(write(ranged)).parameters.at(0).name, "TUNE_U");
}

// `base:` gives CCCL's base variant the values its launch, entry and
// arguments read: parameters of the spec, integers as on their %RANGE% lines
// (CUB's own need not be on them), refused where no base is built.
TEST_F(SpecErrors, BaseGivesTheBaseVariantsLaunchValues) {
  write("// %RANGE% TUNE_THREADS tpb 64:128:64\n// %RANGE% TUNE_ITEMS ipt 1:2:1\n#if TUNE_BASE\n#endif\nvoid k() {}\n",
        "k.cpp");
  const Spec s = load_spec(write(kHead + "sizes: {N: 8}\nbase: {TUNE_THREADS: 256}\n"));
  EXPECT_EQ(s.base_values, Config({{"TUNE_THREADS", Value(256)}}));
  EXPECT_EQ(base_variant_config(s), Config({{"TUNE_BASE", Value(1)}, {"TUNE_THREADS", Value(256)}}));
  // None given: the base is TUNE_BASE alone, as before.
  EXPECT_EQ(base_variant_config(load_spec(write(kHead))), Config({{"TUNE_BASE", Value(1)}}));

  expect_error(kHead + "base: {TUNE_THREDS: 256}\n", 6, 8,
               "unknown parameter 'TUNE_THREDS' in 'base'; did you mean 'TUNE_THREADS'?");
  expect_error(kHead + "base: {TUNE_BASE: 1}\n", 6, 8, "'TUNE_BASE' is the base's own define");
  expect_error(kHead + "base: {TUNE_THREADS: \"256\"}\n", 6, 23, "'base.TUNE_THREADS' must be an integer");
  expect_error(kHead + "base: {TUNE_THREADS: 2.5}\n", 6, 22, "'base.TUNE_THREADS' must be an integer");
  expect_error(kHead + "base: [256]\n", 6, 7, "'base' must be a mapping of parameter names");

  // A source without a TUNE_BASE branch builds no base.
  write("// %RANGE% TUNE_THREADS tpb 64:128:64\nvoid k() {}\n", "k.cpp");
  expect_error(kHead + "base: {TUNE_THREADS: 256}\n", 6, 7, "so no base is built; remove 'base'");
}
