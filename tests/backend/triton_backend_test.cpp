// The Triton backend end to end without Triton or a GPU: python3 runs the
// fake compiler and runner (TUNEKIT_TRITON_FAKE=1, python/tunekit_triton/
// fake.py), so the compile-helper pool, the worker protocol and every status
// a trial can get are exercised here; the kernels themselves run under
// Triton's interpreter in triton_interpreter_test.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "backend/triton/detail/triton_backend.hpp"
#include "support/spec_errors.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/error.hpp"
#include "tunekit/package_worker.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "backend" / "data" / "triton";

struct FakeTriton : ::testing::Test {
  void SetUp() override { ::setenv("TUNEKIT_TRITON_FAKE", "1", 1); }
  void TearDown() override { ::unsetenv("TUNEKIT_TRITON_FAKE"); }
};

std::map<std::string, Status> by_config(const TuneReport& r) {
  std::map<std::string, Status> out;
  for (const auto& t : r.all_trials()) out[t.config.str()] = t.status;
  return out;
}

// A kernel whose compile at BLOCK 64 does what `at_64` (Python lines of the
// stand-in's behaviour function) says, in `dir`, and its spec, loaded with
// `kernel_extra` at the end of its kernel mapping (", build_timeout: 1s").
Spec compile_fault(const fs::path& dir, const std::string& at_64, const std::string& kernel_extra = "") {
  tunekit::testing::write_file(dir / "k.py", R"PY(import sys
def k(x, out, n, BLOCK: "tl.constexpr"):
    pass
def behaviour(config):
    if config["BLOCK"] == 64:
)PY" + at_64 + R"PY(
    return {}
)PY");
  tunekit::testing::write_file(dir / "s.yaml", R"Y(name: compile_fault
kernel: {language: triton, source: k.py, entry: k, grid: ["ceil_div(n, BLOCK)"])Y" +
                                                   kernel_extra + R"Y(}
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 4096}
parameters: {BLOCK: [32, 64, 128]}
reference: {python: k.py, entry: behaviour}
measure: {warmup: 0ms, min_samples: 3, max_samples: 5, timeout: 60s}
)Y");
  return load_spec(dir / "s.yaml");
}

// compile_fault's spec tuned: each config's status, and the error of the
// one at BLOCK 64.
struct CompileFaultRun {
  std::map<std::string, Status> status;
  std::string error_at_64;
};
CompileFaultRun tune_compile_fault(const Spec& spec, const fs::path& dir) {
  TuneOptions opt;
  opt.out_dir = dir / "out";
  opt.jobs = 1;
  const TuneReport report = tune(spec, opt);
  CompileFaultRun run{by_config(report), ""};
  for (const auto& t : report.all_trials())
    if (t.config.str() == "{BLOCK: 64}") run.error_at_64 = t.error;
  return run;
}

// The stand-in compile sleeps until it is killed.
const char* const kHang = R"(        return {"compile": "hang"})";

}  // namespace

TEST_F(FakeTriton, EveryPlantedFailureIsRecordedAndTheBestIsFound) {
  Spec spec = load_spec(kData / "fake.yaml");
  TuneOptions opt;
  opt.out_dir = tunekit::testing::fresh_dir();
  opt.jobs = 2;
  TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto status = by_config(report);
  EXPECT_EQ(status.at("{BLOCK: 32, MODE: 0, num_warps: 4}"), Status::ok);
  EXPECT_EQ(status.at("{BLOCK: 32, MODE: 1, num_warps: 4}"), Status::compile_error);  // Triton's message
  EXPECT_EQ(status.at("{BLOCK: 32, MODE: 2, num_warps: 4}"), Status::launch_error);
  EXPECT_EQ(status.at("{BLOCK: 32, MODE: 5, num_warps: 4}"), Status::wrong_result);
  // the compiled kernel's registers x threads over the device's, found before any launch
  EXPECT_EQ(status.at("{BLOCK: 32, MODE: 7, num_warps: 16}"), Status::resource_limit);
  // 256 KiB of shared memory passes the spec's constraint but not the compile check
  EXPECT_EQ(status.at("{BLOCK: 256, MODE: 0, num_warps: 4}"), Status::resource_limit);
  for (const auto& t : report.all_trials())
    if (t.config.str() == "{BLOCK: 32, MODE: 1, num_warps: 4}")
      EXPECT_NE(t.error.find("planted compile error"), std::string::npos);
  const SizeReport& s = report.sizes.front();
  ASSERT_TRUE(s.best);
  // the fake kernel takes 64 / BLOCK us: BLOCK 128 is the fastest that builds and runs right
  EXPECT_EQ(s.trials[*s.best].config.find("BLOCK")->as_int(), 128);
  EXPECT_NEAR(s.trials[*s.best].stats.median.count(), 0.5, 1e-9);
  // num_warps is a launch option, which no kernel file names.
  for (const auto& w : report.warnings) EXPECT_EQ(w.find("appears nowhere"), std::string::npos) << w;
  // Each build's resources are kept with its trial, a refused one's too,
  // and a rerun's stored trials still have them.
  const auto resources_of = [](const TuneReport& r, const std::string& config) {
    for (const auto& t : r.all_trials())
      if (t.config.str() == config) return t.resources;
    return KernelResources{};
  };
  EXPECT_EQ(resources_of(report, "{BLOCK: 32, MODE: 0, num_warps: 4}").at("threads"), 128);
  EXPECT_GT(resources_of(report, "{BLOCK: 32, MODE: 0, num_warps: 4}").at("registers"), 0);
  EXPECT_EQ(resources_of(report, "{BLOCK: 256, MODE: 0, num_warps: 4}").at("shared_memory"), 256 * 1024);
  const TuneReport again = tune(spec, opt);
  EXPECT_EQ(resources_of(again, "{BLOCK: 32, MODE: 0, num_warps: 4}"),
            resources_of(report, "{BLOCK: 32, MODE: 0, num_warps: 4}"));
}

TEST_F(FakeTriton, CrashHangAndStickyErrorCostOneTrialEach) {
  Spec spec = load_spec(kData / "faults.yaml");
  TuneOptions opt;
  opt.out_dir = tunekit::testing::fresh_dir();
  opt.jobs = 1;
  TuneReport report = tune(spec, opt);
  const auto status = by_config(report);
  EXPECT_EQ(status.at("{BLOCK: 64, MODE: 3, num_warps: 4}"), Status::crash);
  EXPECT_EQ(status.at("{BLOCK: 64, MODE: 4, num_warps: 4}"), Status::timeout);
  EXPECT_EQ(status.at("{BLOCK: 64, MODE: 6, num_warps: 4}"), Status::launch_error);
  // the configs after each fault ran in a fresh worker
  EXPECT_EQ(status.at("{BLOCK: 64, MODE: 0, num_warps: 4}"), Status::ok);
  EXPECT_EQ(status.at("{BLOCK: 32, MODE: 0, num_warps: 4}"), Status::ok);
}

// A compile that kills its helper (LLVM aborting, a segfault in a pass)
// fails that config alone, with what the helper printed for it: the
// abort's own message is the only account of why.
TEST_F(FakeTriton, ACompileThatKillsItsHelperSaysWhatItPrinted) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const Spec spec = compile_fault(dir, R"(        print("LLVM ERROR: planted abort in a pass", file=sys.stderr)
        return {"compile": "crash"})");
  const auto [status, error] = tune_compile_fault(spec, dir);
  EXPECT_EQ(status.at("{BLOCK: 32}"), Status::ok);
  EXPECT_EQ(status.at("{BLOCK: 128}"), Status::ok);  // in a fresh helper
  ASSERT_EQ(status.at("{BLOCK: 64}"), Status::compile_error);
  EXPECT_NE(error.find("the compile helper died"), std::string::npos) << error;
  EXPECT_NE(error.find("LLVM ERROR: planted abort in a pass"), std::string::npos) << error;
}

// kernel.build_timeout bounds a Triton compile as it does a C++ build (the
// default, 10 minutes, is Triton's own): a compile helper still compiling
// then is killed, and the config is a compile_error that names the limit.
// The stand-in compile sleeps until killed; nothing here depends on how
// long anything takes.
TEST_F(FakeTriton, ACompilePastTheSpecsBuildTimeoutIsACompileErrorNamingIt) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const Spec by_default = compile_fault(dir, kHang);
  // No setting: the build takes the backend's default where it is made, so
  // a spec built in code gets it too (the loader set it, and such a spec
  // had the 5 minutes of a C++ build).
  EXPECT_FALSE(by_default.kernel.build_timeout);
  EXPECT_EQ(make_build_input(by_default, "", Config{}, {}).timeout, Seconds(600));
  // Triton's default is no setting: stores made before keep their failures.
  EXPECT_EQ(settings_key(by_default).find("build_timeout"), std::string::npos) << settings_key(by_default);
  const Spec limited = compile_fault(dir, kHang, ", build_timeout: 1s");
  EXPECT_EQ(limited.kernel.build_timeout, Seconds(1));
  EXPECT_NE(settings_key(limited).find(" build_timeout=1s"), std::string::npos) << settings_key(limited);
  const auto [status, error] = tune_compile_fault(limited, dir);
  EXPECT_EQ(status.at("{BLOCK: 32}"), Status::ok);
  EXPECT_EQ(status.at("{BLOCK: 128}"), Status::ok);  // in a fresh helper
  ASSERT_EQ(status.at("{BLOCK: 64}"), Status::compile_error);
  EXPECT_NE(error.find("timed out after 1 s (kernel.build_timeout)"), std::string::npos) << error;
}

// Ctrl-C during a compile: the build is the machine's failure (built again
// on the next run), said as an interruption, not as the config's timeout.
TEST_F(FakeTriton, ACompileTheRunStopsIsInterruptedNotTimedOut) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const Spec spec = compile_fault(dir, kHang);
  BackendOptions options;
  options.work_dir = dir / "work";
  options.spec = &spec;
  auto backend = backends().get("triton").make(options);
  const BuildInput input =
      make_build_input(spec, tunekit::testing::read_file(dir / "k.py"), Config({{"BLOCK", 64}}), spec.sizes[0]);
  // The compile hangs for ever: the stop comes while it runs, or before it
  // starts on a machine slow to start the helper; either way, no timeout.
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    request_stop();
  });
  const BuildResult r = backend->make_builder()->build(input);
  stopper.join();
  clear_stop();
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_EQ(r.fault, Fault::environment);
  EXPECT_NE(r.log.find("the Triton compile was interrupted: the run was stopped"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("timed out"), std::string::npos) << r.log;
}

// The load-time check (python3 -m tunekit_triton inspect) that gets no
// answer it can read is skipped, and the tune says so, once, with why: a
// stand-in Python that prints garbage for it and runs the fake for the rest.
TEST_F(FakeTriton, ASkippedLoadTimeCheckIsAWarningOfTheTune) {
  const fs::path dir = tunekit::testing::fresh_dir();
  fs::copy_file(kData / "fake_kernel.py", dir / "fake_kernel.py");
  tunekit::testing::write_file(dir / "fake.yaml", R"Y(kernel:
  language: triton
  source: fake_kernel.py
  entry: fake_kernel
  grid: ["ceil_div(n, BLOCK)"]
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 4096}
parameters: {BLOCK: [32, 64], MODE: [0]}
reference: {python: fake_kernel.py, entry: behaviour}
measure: {warmup: 0ms, min_samples: 3, max_samples: 5, timeout: 60s}
)Y");
  const fs::path python = dir / "garbled-python";
  tunekit::testing::write_file(python, R"SH(#!/bin/sh
for a in "$@"; do
  if [ "$a" = inspect ]; then echo "Segmentation fault (core dumped) in a broken site hook"; exit 0; fi
done
exec python3 "$@"
)SH");
  fs::permissions(python, fs::perms::owner_all);
  ::setenv("TUNEKIT_PYTHON", python.c_str(), 1);
  const Spec spec = load_spec(dir / "fake.yaml");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  opt.jobs = 1;
  TuneReport report;
  try {
    report = tune(spec, opt);
  } catch (...) {
    ::unsetenv("TUNEKIT_PYTHON");
    throw;
  }
  ::unsetenv("TUNEKIT_PYTHON");
  std::size_t said = 0;
  for (const auto& w : report.warnings)
    if (w.find("the load-time check of kernel.entry 'fake_kernel' was skipped") != std::string::npos) {
      ++said;
      EXPECT_NE(w.find("fake.yaml:4:10: "), std::string::npos) << w;  // at kernel.entry
      EXPECT_NE(w.find("unreadable"), std::string::npos) << w;
      EXPECT_NE(w.find("Segmentation fault (core dumped) in a broken site hook"), std::string::npos) << w;
      EXPECT_NE(w.find("a wrong parameter name will fail at compile instead"), std::string::npos) << w;
    }
  EXPECT_EQ(said, 1u) << ::testing::PrintToString(report.warnings);
  // Checked again with an answer: nothing to say.
  report = tune(load_spec(dir / "fake.yaml"), opt);
  for (const auto& w : report.warnings) EXPECT_EQ(w.find("load-time check"), std::string::npos) << w;
}

// A typo in an argument's shape is the spec's error, at its line, before
// any trial: not a launch error stored against every config.
TEST_F(FakeTriton, AnUnknownNameInAShapeIsLocatedBeforeAnyTrial) {
  const fs::path dir = tunekit::testing::fresh_dir();
  fs::copy_file(kData / "fake_kernel.py", dir / "fake_kernel.py");
  std::string text = tunekit::testing::read_file(kData / "fake.yaml");
  const auto at = text.find("shape: [n], role: out");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "shape: [nn]");
  tunekit::testing::write_file(dir / "fake.yaml", text);
  const Spec spec = load_spec(dir / "fake.yaml");
  try {
    check_expression_names(spec, {{"n", Value(4096)}, {"shared_memory_per_block_optin", Value(232448)}});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 11) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown name 'nn' in '(nn)'; did you mean 'n'?"), std::string::npos)
        << e.what();
  }
  TuneOptions opt;
  opt.out_dir = dir / "out";
  EXPECT_THROW(tune(spec, opt), InputError);
  EXPECT_FALSE(fs::exists(dir / "out" / "tunekit.db") && !Store(dir / "out" / "tunekit.db").all().empty());
}

TEST_F(FakeTriton, AParameterTheKernelDoesNotDeclareIsLocated) {
  try {
    load_spec(kData / "bad_parameter.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 14) << e.what();  // MOD: [0]
    EXPECT_NE(std::string(e.what()).find("did you mean 'MODE'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'MODE' has no value"), std::string::npos) << e.what();
  }
}

TEST_F(FakeTriton, AKernelFileThatDoesNotImportIsLocatedInIt) {
  try {
    load_spec(kData / "bad_import.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(fs::path(e.where().file).filename(), "broken_import.py") << e.what();
    EXPECT_EQ(e.where().line, 8) << e.what();
    EXPECT_NE(std::string(e.what()).find("planted"), std::string::npos) << e.what();
  }
}

TEST(TritonSpec, KeysOfPythonKernelsAreRefusedElsewhere) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cu", "__global__ void k(float* x) {}\n");
  tunekit::testing::write_file(dir / "s.yaml",
                               R"Y(kernel: {source: k.cu, language: cuda, entry: k, grid: [1], block: [32]}
arguments:
  - {name: x, type: f32, shape: [16]}
)Y");
  try {
    load_spec(dir / "s.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("apply to triton kernels"), std::string::npos) << e.what();
  }
  tunekit::testing::write_file(dir / "t.yaml",
                               R"Y(kernel: {source: k.cu, language: triton, entry: k, grid: [1], block: [32]}
arguments:
  - {name: x, type: f32, shape: [16]}
)Y");
  try {
    load_spec(dir / "t.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 1) << e.what();
    EXPECT_NE(std::string(e.what()).find("num_warps"), std::string::npos) << e.what();
  }
}

TEST_F(FakeTriton, ShapesSetupsAndConstexprsLoad) {  // the load-time checks run the fake inspector
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.py",
                               "def k(x, y, n, o, B: 'tl.constexpr', D: 'tl.constexpr'):\n    pass\n\n"
                               "def prep(args, meta):\n    return {'y': None}\n");
  tunekit::testing::write_file(dir / "s.yaml", R"Y(kernel:
  source: k.py
  language: triton
  entry: k
  grid: ["ceil_div(n, B)"]
  constexprs: {D: 2 * n}
arguments:
  - {name: x, type: bf16, shape: [n, 4]}
  - {name: g, type: f32, shape: [n], pass: false}
  - {name: y, type: i32, fill: {setup: prep}}
  - {name: n, type: i32, value: n}
  - {name: o, type: f32, shape: [n], role: out}
sizes: {n: 8}
parameters: {B: [16, 32]}
reference: {torch: "x.float() * 2"}
measure: {graph: true}
)Y");
  Spec s = load_spec(dir / "s.yaml");
  ASSERT_EQ(s.arguments.size(), 5u);
  EXPECT_EQ(s.arguments[0].shape.size(), 2u);
  EXPECT_EQ(s.arguments[0].size->evaluate_int({{"n", Value(8)}}), 32);
  EXPECT_FALSE(s.arguments[1].passed);
  EXPECT_EQ(s.arguments[2].setup, (dir / "k.py").string() + ":prep");
  ASSERT_EQ(s.kernel.constexprs.size(), 1u);
  EXPECT_EQ(s.kernel.constexprs[0].name, "D");
  EXPECT_EQ(s.reference.torch_expression, "x.float() * 2");
  EXPECT_TRUE(s.measure.graph);
}

// A setup function in a file of its own makes inputs the kernel is timed
// on: an edit there, or in a module it imports, is a new kernel whose old
// trials a tune must not resume; an edit elsewhere changes nothing.
TEST_F(FakeTriton, ASetupFilesOwnEditsAreANewKernel) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.py", "def k(x, y, n, o, B: 'tl.constexpr'):\n    pass\n");
  tunekit::testing::write_file(dir / "prep.py", "import routing\n\ndef prep(args, meta):\n    return {'y': None}\n");
  tunekit::testing::write_file(dir / "routing.py", "TOP_K = 2\n");
  tunekit::testing::write_file(dir / "other.py", "UNUSED = 1\n");
  tunekit::testing::write_file(dir / "s.yaml", R"Y(kernel:
  source: k.py
  language: triton
  entry: k
  grid: ["ceil_div(n, B)"]
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: y, type: i32, shape: [n], fill: {setup: prep, python: prep.py}}
  - {name: n, type: i32, value: n}
  - {name: o, type: f32, shape: [n], role: out}
sizes: {n: 8}
parameters: {B: [16, 32]}
reference: {torch: "x * 2"}
)Y");
  const Spec s = load_spec(dir / "s.yaml");
  const std::string before = spec_hash(s);
  tunekit::testing::write_file(dir / "other.py", "UNUSED = 2\n");
  EXPECT_EQ(spec_hash(s), before);
  tunekit::testing::write_file(dir / "routing.py", "TOP_K = 4\n");
  const std::string imported = spec_hash(s);
  EXPECT_NE(imported, before);
  tunekit::testing::write_file(dir / "prep.py", "import routing\n\ndef prep(args, meta):\n    return {'y': 0}\n");
  EXPECT_NE(spec_hash(s), imported);
}

// The load-time checks of a Triton spec, located at the spec key they are
// about: the fake inspector reads fake_kernel.py's signature
// (fake_kernel(x, out, n, BLOCK: tl.constexpr, MODE: tl.constexpr)).
struct FakeTritonSpec : tunekit::testing::SpecErrors {
  void SetUp() override {
    SpecErrors::SetUp();
    ::setenv("TUNEKIT_TRITON_FAKE", "1", 1);
    fs::copy_file(kData / "fake_kernel.py", dir_ / "fake_kernel.py");
  }
  void TearDown() override {
    ::unsetenv("TUNEKIT_TRITON_FAKE");
    SpecErrors::TearDown();
  }
  // The spec below with `from` replaced by `to`.
  static std::string with(const std::string& from, const std::string& to) {
    std::string text = kSpec;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
  }
  static constexpr const char* kSpec = R"Y(kernel:
  language: triton
  source: fake_kernel.py
  entry: fake_kernel
  grid: ["ceil_div(n, BLOCK)"]
  constexprs: {MODE: 0}
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 4096}
parameters: {BLOCK: [32, 64]}
reference: {python: fake_kernel.py, entry: behaviour}
)Y";
};

// A constexpr would replace the config's value of a tuned parameter: every
// trial would run something other than the config it records.
TEST_F(FakeTritonSpec, AConstexprThatIsAlsoTunedIsRefusedAtItsKey) {
  EXPECT_NO_THROW(load_spec(write(kSpec, "fine.yaml")));
  expect_error(with("{MODE: 0}", "{MODE: 0, BLOCK: 64}"), 6, 25, "'BLOCK' is a tuned parameter");
}

TEST_F(FakeTritonSpec, AnEntryMissingFromTheKernelFileIsLocatedAtKernelEntry) {
  expect_error(with("entry: fake_kernel", "entry: fake_kernal"), 4, 10,
               "fake_kernel.py has no function 'fake_kernal': expected a @triton.jit function");
  expect_error(with("entry: fake_kernel", "entry: fake_kernal"), 4, 10, "did you mean 'fake_kernel'?");
}

TEST_F(FakeTritonSpec, AMissingReferenceFunctionIsLocatedAtItsEntry) {
  expect_error(with("entry: behaviour", "entry: behavior"), 13, 44,
               "fake_kernel.py has no function 'behavior': expected the reference");
  expect_error(with("entry: behaviour", "entry: behavior"), 13, 44, "did you mean 'behaviour'?");
}

TEST_F(FakeTritonSpec, AConstexprsKeyThatIsNoConstexprOfTheKernelIsLocatedAtIt) {
  expect_error(with("{MODE: 0}", "{MODE: 0, n: 4}"), 6, 25,
               "'n' in 'kernel.constexprs' is a runtime argument of fake_kernel, not a tl.constexpr");
  expect_error(with("{MODE: 0}", "{MODE: 0, n: 4}"), 6, 25, "fake_kernel's tl.constexpr parameters: BLOCK, MODE");
  expect_error(with("{MODE: 0}", "{MOD: 0}"), 6, 16, "'MOD' in 'kernel.constexprs' is no argument of fake_kernel");
  expect_error(with("{MODE: 0}", "{MOD: 0}"), 6, 16, "did you mean 'MODE'?");
}

// Found when the spec loads, at the character Python stops at, not when
// the first size's reference runs.
TEST_F(FakeTritonSpec, ATorchReferenceThatIsNoExpressionIsASpecError) {
  expect_error(with("{python: fake_kernel.py, entry: behaviour}", R"T({torch: "x * 2)"})T"), 13, 26,
               "'reference.torch' is no Python expression: unmatched ')'");
}

TEST_F(FakeTritonSpec, ASyntaxErrorInTheKernelFileIsLocatedAtItsColumn) {
  std::ofstream(dir_ / "fake_kernel.py") << "def fake_kernel(x, out, n, BLOCK, MODE):\n    return (x))\n";
  try {
    load_spec(write(kSpec));
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, (dir_ / "fake_kernel.py").string()) << e.what();
    EXPECT_EQ(e.where().line, 2) << e.what();
    EXPECT_EQ(e.where().column, 15) << e.what();  // the unmatched ')'
  }
}

// Whatever the kernel file prints at import comes before the inspector's
// answer: a print without a newline must not hide the answer, and with it
// every load-time check (each config would then fail to compile instead).
TEST_F(FakeTritonSpec, AKernelFileThatPrintsAtImportIsStillChecked) {
  const std::string kernel = tunekit::testing::read_file(dir_ / "fake_kernel.py");
  tunekit::testing::write_file(dir_ / "fake_kernel.py",
                               "import sys\nsys.stdout.write('loading... ')\nsys.stderr.write('warming ')\n" + kernel);
  expect_error(with("parameters: {BLOCK: [32, 64]}", "parameters: {BLOCK: [32, 64], num_warp: [4]}"), 12, 31,
               "parameter 'num_warp' is neither a tl.constexpr of fake_kernel");
}

// `tunekit space` counts a Triton spec like any other: the fused-MoE spec over
// vLLM's 1,920 configs, with an H200's shared memory, pruned by its two
// constraints (numbers from an independent enumeration in Python).
TEST(TritonSpec, TheMoeSpaceIsPrunedBeforeAnythingIsCompiled) {
  Spec s = load_spec(fs::path(TUNEKIT_SOURCE_DIR) / "kernels" / "fused_moe" / "fused_moe.yaml");
  for (auto [m, valid] : {std::pair{1, 744u}, std::pair{4096, 1488u}}) {
    Bindings constants{{"shared_memory_per_block_optin", Value(232448)},
                       {"E", Value(8)},
                       {"topk", Value(2)},
                       {"N", Value(14336)},
                       {"K", Value(4096)},
                       {"M", Value(m)}};
    Space space(s.parameters, s.constraints, constants);
    EXPECT_EQ(space.cartesian_size(), 1920u);
    EXPECT_EQ(space.size(), valid) << "M=" << m;
  }
}

// A program built against an installed tunekit runs the package's Python
// side, found beside the package's worker, not the source tree's it was
// built from (which may be gone, or of another version).
TEST(TritonPython, AProgramOfTheInstalledPackageTakesThePackagesPythonSide) {
  const fs::path prefix = tunekit::testing::fresh_dir() / "prefix";
  tunekit::testing::write_file(prefix / "share" / "tunekit" / "python" / "tunekit_triton" / "__main__.py", "");
  const std::string worker = (prefix / "libexec" / "tunekit" / "tunekit-worker").string();
  ::unsetenv("TUNEKIT_TRITON_PATH");
  note_package_worker(worker.c_str());
  const fs::path found = triton::python_setup().package_dir;
  note_package_worker("");
  EXPECT_EQ(found, prefix / "share" / "tunekit" / "python");
}

// A module the kernel's file imports beside it (`from h import ...`, a
// package's `pkg/__init__.py`) is part of the kernel, as a C++ kernel's own
// headers are: an edit to it measures the configs anew instead of resuming
// the stale trials; os and json, not beside it, are not.
TEST_F(FakeTriton, AModuleTheKernelImportsBesideItIsPartOfIt) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.py", R"PY(import os, json
from h import behaviour
import pkg.deep


def k(x, out, n, BLOCK: "tl.constexpr"):
    pass
)PY");
  tunekit::testing::write_file(dir / "h.py",
                               "def behaviour(config):\n    return {\"time_us\": 100.0 / config[\"BLOCK\"]}\n");
  tunekit::testing::write_file(dir / "pkg" / "__init__.py", "");
  tunekit::testing::write_file(dir / "pkg" / "deep.py", "SCALE = 1\n");
  tunekit::testing::write_file(dir / "s.yaml", R"Y(name: imports
kernel: {language: triton, source: k.py, entry: k, grid: ["ceil_div(n, BLOCK)"]}
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 4096}
parameters: {BLOCK: [32, 64]}
reference: {python: h.py, entry: behaviour}
measure: {warmup: 0ms, min_samples: 3, max_samples: 3, confirm: 0}
)Y");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  opt.jobs = 1;
  auto resumed = [&] { return tune(load_spec(dir / "s.yaml"), opt).resumed; };
  EXPECT_EQ(resumed(), 0u);
  EXPECT_EQ(resumed(), 2u);  // nothing changed
  tunekit::testing::write_file(dir / "pkg" / "deep.py", "SCALE = 2\n");
  EXPECT_EQ(resumed(), 0u);  // an imported module changed: measured anew
  EXPECT_EQ(resumed(), 2u);
}
