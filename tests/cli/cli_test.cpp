// The command line as a user meets it: help, the three ways to declare a
// space, errors, and a run killed with SIGKILL that resumes.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/status.hpp"
#include "tunekit/store.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::tunekit_cli;
using namespace std::chrono_literals;
using tunekit::testing::fresh_dir;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

// A small CPU spec in dir: y = x * F / F for the factor F over `space` (the
// YAML of its parameters and constraints), three samples a config. Returns
// the spec's path.
std::string write_identity_spec(const fs::path& dir, const std::string& factor, const std::string& space) {
  write_file(dir / "k.cpp",
             "extern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = "
             "x[i] * (" +
                 factor + ") / (" + factor + "); }\n");
  write_file(dir / "k.yaml", R"(kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: 256}
  - {name: y, type: f32, size: 256, role: out}
  - {name: n, type: i32, value: 256}
measure: {warmup: 0us, min_samples: 3, max_samples: 3, early_stop: off}
)" + space);
  return (dir / "k.yaml").string();
}

}  // namespace

TEST(Cli, HelpListsCommandsAndOptions) {
  auto top = tunekit_cli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* word : {"tune", "space", "devices", "--version"}) EXPECT_TRUE(contains(top.output, word)) << word;
  auto tune = tunekit_cli({"tune", "--help"});
  EXPECT_EQ(tune.exit_code, 0);
  for (const char* opt : {"TARGET",      "--size",    "--strategy", "--max-evals", "--max-time",   "--seed",
                          "--jobs",      "--out-dir", "--db",       "--csv",       "--json",       "--fresh",
                          "--compiler",  "--flags",   "--timeout",  "--cache",     "--early-stop", "--confirm",
                          "--reference", "--atol",    "--rtol",     "--entry",     "--arg",        "--no-progress"})
    EXPECT_TRUE(contains(tune.output, opt)) << opt;
  // Every status a config line may show is named (the help wraps its lines).
  std::string flowing = tune.output;
  std::replace(flowing.begin(), flowing.end(), '\n', ' ');
  for (const auto& status : status_names())
    if (status.value != Status::ok) EXPECT_TRUE(contains(flowing, std::string(status.name))) << status.name;
  // Each command that answers from the store says how it exits, 3 included.
  for (const char* sub : {"select", "emit", "rules-report", "report", "replay"}) {
    auto help = tunekit_cli({sub, "--help"});
    EXPECT_TRUE(contains(help.output, "Exit status: 0")) << sub << "\n" << help.output;
    if (std::string_view(sub) != "report" && std::string_view(sub) != "replay")
      EXPECT_TRUE(contains(help.output, "3 when the store has nothing to answer with")) << sub;
  }
  // Both seeds are the tune's input seed, of one type.
  EXPECT_TRUE(contains(tune.output, "--seed UINT")) << tune.output;
  EXPECT_TRUE(contains(tunekit_cli({"select", "--help"}).output, "--seed UINT"));
  // rules-report's 3 is its own: it has no all-sizes mode (it said select's).
  const auto rules = tunekit_cli({"rules-report", "--help"});
  EXPECT_FALSE(contains(rules.output, "all-sizes")) << rules.output;
  EXPECT_TRUE(contains(rules.output, "no trial is a rule")) << rules.output;
}

TEST(Cli, DevicesListsTheCpu) {
  auto r = tunekit_cli({"devices"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "cpu:"));
  EXPECT_TRUE(contains(r.output, "l2_bytes"));
}

// A Python without torch makes the Triton backend unavailable: the line
// says why in the exception's words, without the traceback's frames.
TEST(Cli, AnUnavailableTritonSaysWhyInOneLine) {
  const auto dir = fresh_dir();
  const fs::path python = dir / "python3";
  write_file(python,
             "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\n"
             "echo '  File \"inspect_kernel.py\", line 112, in describe' >&2\n"
             "echo \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n");
  fs::permissions(python, fs::perms::owner_all);
  auto r = detail::run_process({"/usr/bin/env", "TUNEKIT_PYTHON=" + python.string(), tunekit_exe().string(), "devices"},
                               std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "describe` failed: ModuleNotFoundError: No module named 'torch')")) << r.output;
  EXPECT_FALSE(contains(r.output, "Traceback")) << r.output;
}

// Under mpirun only `tune` is spread over the ranks: any other subcommand is
// run by rank 0 alone, not printed (and its files written) once a rank.
TEST(Cli, UnderMpirunRankZeroAloneRunsAnythingButATune) {
  const std::string spec = std::string(TUNEKIT_SOURCE_DIR) + "/examples/matmul/matmul.yaml";
  auto space_as = [&](const std::string& rank) {
    return detail::run_process({"/usr/bin/env", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=" + rank,
                                tunekit_exe().string(), "space", spec},
                               std::chrono::seconds(300));
  };
  const auto lead = space_as("0");
  EXPECT_EQ(lead.exit_code, 0) << lead.output;
  EXPECT_TRUE(contains(lead.output, "valid")) << lead.output;
  const auto other = space_as("1");
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_EQ(other.output, "");
}

TEST(Cli, BadSpecGivesALocatedMessageNotACrash) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void f(float* x) { x[0] = 1; }\n");
  write_file(dir / "bad.yaml",
             "kernel:\n  source: k.cpp\n  entry: f\narguments:\n  - {name: x, type: f32, size: 4}\n"
             "parameters:\n  A: [1, 2]\nconstraints:\n  - A * (2 + \n");
  auto r = tunekit_cli({"tune", (dir / "bad.yaml").string(), "--out-dir", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.signal, 0);
  EXPECT_TRUE(contains(r.output, "bad.yaml:9:")) << r.output;
}

TEST(Cli, MsKppTunableLinesWithAnExplicitConfigList) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", R"(
constexpr int UNROLL = 1; // tunable
extern "C" void add(const float* a, float* b, int n) {
  float scale = 1.0f; // tunable: SCALE
  for (int i = 0; i < n; ++i) b[i] = a[i] * scale * UNROLL;
}
)");
  write_file(dir / "k.yaml", R"(kernel: {source: k.cpp, entry: add, flags: [-O1]}
arguments:
  - {name: a, type: f32, size: 64}
  - {name: b, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
configs:
  - {UNROLL: 1, SCALE: "float scale = 2.0f;"}
  - {UNROLL: 2, SCALE: "float scale = 1.0f;"}
  - {UNROLL: 4, SCALE: "float scale = 0.5f;"}
  - {UNROLL: 3, SCALE: "float scale = 1.0f;"}
default: {UNROLL: 1, SCALE: "float scale = 2.0f;"}
measure: {warmup: 1ms, max_time: 50ms, cache: hot, early_stop: off}
)");
  auto r = tunekit_cli({"tune", (dir / "k.yaml").string(), "--out-dir", (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Configs computing 2*a agree with the default; UNROLL=3 computes 3*a.
  EXPECT_TRUE(contains(r.output, "No.1: ")) << r.output;
  EXPECT_TRUE(contains(r.output, " us, {UNROLL: 2, SCALE: 'float scale = 1.0f;'}")) << r.output;
  EXPECT_TRUE(contains(r.output, "No.4: wrong_result, {UNROLL: 3")) << r.output;
}

TEST(Cli, BareSourceWithRangeAnnotations) {
  const auto dir = fresh_dir();
  write_file(dir / "saxpy.cpp", R"(// %RANGE% TUNE_UNROLL unroll 1:4:1
// %RANGE% TUNE_BLOCK block 64:256:64
extern "C" void saxpy(const float* x, float* y, int n) {
  int i = 0;
  for (; i + TUNE_UNROLL <= n; i += TUNE_UNROLL)
    for (int u = 0; u < TUNE_UNROLL; ++u) y[i + u] = 2.0f * x[i + u] + y[i + u];
  for (; i < n; ++i) y[i] = 2.0f * x[i] + y[i];
  static_assert(TUNE_BLOCK % 64 == 0, "block");
}
)");
  auto r = tunekit_cli({"tune",
                        (dir / "saxpy.cpp").string(),
                        "--size",
                        "N=4096",
                        "--entry",
                        "saxpy",
                        "--arg",
                        "x:f32:N",
                        "--arg",
                        "y:f32:N:1.0:inout",
                        "--arg",
                        "n:i32=N",
                        "--flags",
                        "-O2",
                        "--out-dir",
                        (dir / "out").string(),
                        "--no-progress",
                        "--cache",
                        "hot",
                        "--timeout",
                        "20s"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No.16: ")) << r.output;  // 4 unrolls x 4 blocks
  EXPECT_FALSE(contains(r.output, "No.17: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "TUNE_BLOCK: 256")) << r.output;
  EXPECT_TRUE(contains(r.output, "best")) << r.output;
}

// --arg's FILL file=PATH gives the kernel the file's elements, as a spec's
// fill: {file: PATH} does; the kernel traps on any other values. The file's
// contents are part of the kernel: an edit is tuned anew, not resumed.
TEST(Cli, ABareSourcesArgumentIsFilledFromAFile) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "// %RANGE% TUNE_U u 1:2:1\n"
             "extern \"C\" void k(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) {\n"
             "    if (x[i] != 0.5f * i) __builtin_trap();\n"
             "    y[i] = TUNE_U * 0 + x[i];\n  }\n}\n");
  auto write_x = [&](float scale) {
    std::string raw;
    for (int i = 0; i < 64; ++i) {
      const float v = scale * static_cast<float>(i);
      raw.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    write_file(dir / "x.bin", raw);
  };
  write_x(0.5f);
  auto tune = [&](const std::string& fill) {
    return tunekit_cli({"tune", (dir / "k.cpp").string(), "--size", "N=64", "--entry", "k", "--arg", "x:f32:N" + fill,
                        "--arg", "y:f32:N::out", "--arg", "n:i32=N", "--out-dir", (dir / "out").string(),
                        "--no-progress", "--timeout", "120s"});
  };
  auto r = tune(":file=" + (dir / "x.bin").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No.2: ")) << r.output;
  EXPECT_FALSE(contains(r.output, "crash")) << r.output;
  auto again = tune(":file=" + (dir / "x.bin").string());
  EXPECT_TRUE(contains(again.output, "resumed")) << again.output;
  write_x(0.25f);  // another kernel's inputs: measured anew, and trapping
  auto edited = tune(":file=" + (dir / "x.bin").string());
  EXPECT_FALSE(contains(edited.output, "resumed")) << edited.output;
  EXPECT_TRUE(contains(edited.output, "crash")) << edited.output;

  auto missing = tune(":file=" + (dir / "none.bin").string());
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "--arg x:f32:N:file=" + (dir / "none.bin").string() + ": fill file="))
      << missing.output;
  EXPECT_TRUE(contains(missing.output, "is not a file")) << missing.output;
  write_file(dir / "short.bin", "abcd");
  auto short_file = tune(":file=" + (dir / "short.bin").string());
  EXPECT_EQ(short_file.exit_code, 1) << short_file.output;
  EXPECT_TRUE(contains(short_file.output, "is 4 bytes, but the argument's 64 elements of f32 are 256"))
      << short_file.output;
}

namespace {

// A spec in dir for y = SCALE * x (+ OFFSET, 0 unless the compiler says),
// checked against a reference of its own, built by `compiler` with `flags`
// and kernel.defines `defines` (YAML, "" for none); tuned into dir/out with
// `more`.
detail::ProcessResult tune_scale(const fs::path& dir, const std::string& compiler, const std::string& flags,
                                 const std::string& defines, const std::vector<std::string>& more = {}) {
  write_file(dir / "k.yaml", "kernel: {source: k.cpp, entry: k, compiler: " + compiler + ", flags: [" + flags + "]" +
                                 (defines.empty() ? "" : ", defines: " + defines) + R"(}
arguments:
  - {name: x, type: f32, size: 64}
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {V: [1]}
reference: {source: ref.cpp, entry: ref}
measure: {warmup: 0us, min_samples: 3, max_samples: 3, early_stop: off}
)");
  std::vector<std::string> args{
      "tune", (dir / "k.yaml").string(), "--out-dir", (dir / "out").string(), "--no-progress", "--timeout", "120s"};
  args.insert(args.end(), more.begin(), more.end());
  return tunekit_cli(args);
}

void write_scale_sources(const fs::path& dir, const std::string& scale) {
  write_file(dir / "k.cpp", "#ifndef OFFSET\n#define OFFSET 0\n#endif\n" + scale +
                                "extern \"C\" void k(const float* x, float* y, int n) {\n"
                                "  for (int i = 0; i < n; ++i) y[i] = SCALE * x[i] + OFFSET;\n}\n");
  write_file(dir / "ref.cpp",
             "extern \"C\" void ref(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n}\n");
}

}  // namespace

// kernel.defines and the compiler its name runs are the kernel's: a tune
// after either changed resumes none of the earlier trials, which verified
// another build (the reference says the new one is wrong), and going back
// resumes them. The two compilers here are one name, a link repointed.
TEST(Cli, ATuneWithOtherDefinesOrAnotherCompilerResumesNothing) {
  const auto dir = fresh_dir();
  write_scale_sources(dir, "");
  write_file(dir / "one", "#!/bin/sh\nexec c++ \"$@\"\n");
  write_file(dir / "two", "#!/bin/sh\nexec c++ -DOFFSET=1 \"$@\"\n");
  for (const char* f : {"one", "two"}) fs::permissions(dir / f, fs::perms::owner_all);
  fs::create_directories(dir / "bin");
  const fs::path cc = dir / "bin" / "cc";
  fs::create_symlink(dir / "one", cc);
  auto tune = [&](const std::string& scale) {
    return tune_scale(dir, cc.string(), "-O1", "{SCALE: \"" + scale + "\"}");
  };
  auto first = tune("2");
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_FALSE(contains(first.output, "wrong_result")) << first.output;
  EXPECT_TRUE(contains(tune("2").output, "resumed"));
  auto three = tune("3");
  EXPECT_FALSE(contains(three.output, "resumed")) << three.output;
  EXPECT_TRUE(contains(three.output, "wrong_result")) << three.output;
  EXPECT_TRUE(contains(tune("2").output, "resumed"));
  fs::remove(cc);
  fs::create_symlink(dir / "two", cc);
  auto switched = tune("2");
  EXPECT_FALSE(contains(switched.output, "resumed")) << switched.output;
  EXPECT_TRUE(contains(switched.output, "wrong_result")) << switched.output;
}

// A source the flags hand the compiler beside the kernel's is the kernel's
// too: edited, it is built anew, not served from the build cache (a store
// of its own, --db, resumes nothing and so builds), and a tune into the same
// store resumes nothing.
TEST(Cli, AnEditedSourceTheFlagsNameIsBuiltAnew) {
  const auto dir = fresh_dir();
  write_scale_sources(dir, "extern \"C\" float helper(float);\n#define SCALE helper(1.0f)\n");
  auto write_helper = [&](const std::string& factor) {
    write_file(dir / "helper.cpp", "extern \"C\" float helper(float a) { return " + factor + " * a; }\n");
  };
  write_helper("2.0f");
  const std::string flags = "-O1, " + (dir / "helper.cpp").string();
  auto first = tune_scale(dir, "c++", flags, "");
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_FALSE(contains(first.output, "wrong_result")) << first.output;
  EXPECT_TRUE(contains(tune_scale(dir, "c++", flags, "").output, "resumed"));
  write_helper("3.0f");
  auto other_store = tune_scale(dir, "c++", flags, "", {"--db", (dir / "other.db").string()});
  EXPECT_TRUE(contains(other_store.output, "wrong_result")) << other_store.output;
  auto edited = tune_scale(dir, "c++", flags, "");
  EXPECT_FALSE(contains(edited.output, "resumed")) << edited.output;
  EXPECT_TRUE(contains(edited.output, "wrong_result")) << edited.output;
}

// kernel.defines go to every build: a reference function in the kernel's
// own source that reads one builds (it did not, and the tune ended).
TEST(Cli, AReferenceInTheKernelsSourceIsBuiltWithItsDefines) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "extern \"C\" void k(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = SCALE * x[i];\n}\n"
             "extern \"C\" void ref(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = SCALE * x[i];\n}\n");
  write_file(dir / "k.yaml", R"(kernel: {source: k.cpp, entry: k, flags: [-O1], defines: {SCALE: "2"}}
arguments:
  - {name: x, type: f32, size: 64}
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {V: [1]}
reference: {entry: ref}
measure: {warmup: 0us, min_samples: 3, max_samples: 3, early_stop: off}
)");
  auto r = tunekit_cli(
      {"tune", (dir / "k.yaml").string(), "--out-dir", (dir / "out").string(), "--no-progress", "--timeout", "120s"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "does not build")) << r.output;
  EXPECT_FALSE(contains(r.output, "wrong_result")) << r.output;
}

// An edited kernel has a new spec_hash, so its tune resumes nothing: the run
// says that the store holds the earlier version's trials, and going back to
// that version resumes them.
TEST(Cli, ATuneOfAnEditedKernelSaysTheStoreHoldsItsEarlierVersion) {
  const auto dir = fresh_dir();
  auto write_source = [&](const std::string& body) {
    write_file(dir / "k.cpp",
               "// %RANGE% TUNE_U u 1:2:1\n"
               "extern \"C\" void k(const float* x, float* y, int n) {\n"
               "  for (int i = 0; i < n; ++i) y[i] = TUNE_U * 0 + " +
                   body + ";\n}\n");
  };
  auto tune = [&] {
    return tunekit_cli({"tune", (dir / "k.cpp").string(), "--size", "N=64", "--entry", "k", "--arg", "x:f32:N", "--arg",
                        "y:f32:N::out", "--arg", "n:i32=N", "--out-dir", (dir / "out").string(), "--no-progress",
                        "--timeout", "120s"});
  };
  write_source("x[i]");
  auto first = tune();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_FALSE(contains(first.output, "other version")) << first.output;

  write_source("2.0f * x[i]");
  auto edited = tune();
  ASSERT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_FALSE(contains(edited.output, "resumed")) << edited.output;
  EXPECT_TRUE(contains(edited.output, "holds 2 trials of 'k' on this device from 1 other version of it"))
      << edited.output;

  write_source("x[i]");
  auto back = tune();
  ASSERT_EQ(back.exit_code, 0) << back.output;
  EXPECT_TRUE(contains(back.output, "2 resumed from the store")) << back.output;
  EXPECT_TRUE(contains(back.output, "holds 2 trials of 'k' on this device from 1 other version of it")) << back.output;
}

// A tune bound to one core (as mpirun binds each rank) stores its trials on
// "cpu: ... (1 of N cores)", another device: a rerun on all the cores
// resumes none of them, and says so rather than measure them again without
// a word.
TEST(Cli, ATuneOnOtherCoresSaysTheStoreHoldsTheBoundRunsTrials) {
  cpu_set_t all;
  ASSERT_EQ(::sched_getaffinity(0, sizeof all, &all), 0);
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "needs two cores to bind a run to one";
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "// %RANGE% TUNE_U u 1:2:1\n"
             "extern \"C\" void k(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = TUNE_U * 0 + x[i];\n}\n");
  auto tune = [&] {
    return tunekit_cli({"tune", (dir / "k.cpp").string(), "--size", "N=64", "--entry", "k", "--arg", "x:f32:N", "--arg",
                        "y:f32:N::out", "--arg", "n:i32=N", "--out-dir", (dir / "out").string(), "--no-progress",
                        "--timeout", "120s"});
  };
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  auto bound = tune();
  ASSERT_EQ(::sched_setaffinity(0, sizeof all, &all), 0);
  ASSERT_EQ(bound.exit_code, 0) << bound.output;
  EXPECT_FALSE(contains(bound.output, "bound as they were")) << bound.output;

  auto unbound = tune();
  ASSERT_EQ(unbound.exit_code, 0) << unbound.output;
  EXPECT_FALSE(contains(unbound.output, "resumed")) << unbound.output;
  EXPECT_TRUE(contains(unbound.output, "holds 2 trials of this version of 'k' measured on 'cpu: ")) << unbound.output;
  EXPECT_TRUE(contains(unbound.output, "(1 of ")) << unbound.output;
  EXPECT_TRUE(contains(unbound.output, "it resumes none of them, a run bound to other cores being another device"))
      << unbound.output;
  // The next unbound run resumes its own trials: the binding was chosen.
  auto again = tune();
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "2 resumed from the store")) << again.output;
  EXPECT_FALSE(contains(again.output, "bound as they were")) << again.output;
}

// select, emit and report find a bare source's tune again through the
// same call: the source alone makes another kernel (no entry, no
// arguments), which they say.
TEST(Cli, ABareSourcesTuneIsSelectedThroughItsCall) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "// %RANGE% TUNE_U u 1:2:1\n"
             "extern \"C\" void k(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = TUNE_U * 0 + x[i];\n}\n");
  const std::vector<std::string> call{"--entry", "k", "--arg", "x:f32:N", "--arg", "y:f32:N::out", "--arg", "n:i32=N"};
  std::vector<std::string> tune{"tune",      (dir / "k.cpp").string(), "--size",       "N=64",
                                "--out-dir", (dir / "out").string(),   "--no-progress"};
  tune.insert(tune.end(), call.begin(), call.end());
  auto r = tunekit_cli(tune);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* command : {"select", "emit", "report"}) {
    std::vector<std::string> args{command, (dir / "k.cpp").string(), "--out-dir", (dir / "out").string()};
    auto alone = tunekit_cli(args);
    EXPECT_EQ(alone.exit_code, 1) << command << ": " << alone.output;
    EXPECT_TRUE(contains(alone.output, "--entry: a bare source needs --entry NAME")) << command << ": " << alone.output;
    args.insert(args.end(), call.begin(), call.end());
    auto found = tunekit_cli(args);
    EXPECT_EQ(found.exit_code, 0) << command << ": " << found.output;
  }
  EXPECT_TRUE(fs::exists(dir / "out" / "k_policy.hpp"));
  // A spec describes its own call.
  const std::string spec = write_identity_spec(dir, "SCALE", "parameters: {SCALE: [1]}\n");
  r = tunekit_cli({"select", spec, "--out-dir", (dir / "out").string(), "--entry", "k"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--entry: describes the call of a bare kernel source, but")) << r.output;
}

// Flags that make another kernel of a spec (its build, its check) are
// part of what was tuned: select, emit and report find those trials when
// given them too, and without them say which flags to give.
TEST(Cli, ASpecTunedWithKernelFlagsIsSelectedWithThem) {
  const auto dir = fresh_dir();
  const std::string spec = write_identity_spec(dir, "SCALE", "parameters: {SCALE: [1, 2]}\n");
  const std::string out = (dir / "out").string();
  const std::vector<std::string> kernel{"--flags", "-O2", "--atol", "0.001", "--reference", "default"};
  std::vector<std::string> tune{"tune", spec, "--out-dir", out, "--no-progress"};
  tune.insert(tune.end(), kernel.begin(), kernel.end());
  auto r = tunekit_cli(tune);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* command : {"select", "emit", "report"}) {
    std::vector<std::string> args{command, spec, "--out-dir", out};
    auto plain = tunekit_cli(args);
    EXPECT_EQ(plain.exit_code, 1) << command << ": " << plain.output;
    EXPECT_TRUE(contains(plain.output,
                         "give the tune's --seed, --flags, --compiler, --reference, --atol or --rtol "
                         "here too"))
        << command << ": " << plain.output;
    args.insert(args.end(), kernel.begin(), kernel.end());
    auto found = tunekit_cli(args);
    EXPECT_EQ(found.exit_code, 0) << command << ": " << found.output;
  }
  r = tunekit_cli({"report", "--db", out + "/tunekit.db", "--flags", "-O2"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--flags: picks the trials of a spec tuned with that setting: give the SPEC too"))
      << r.output;
}

// --cache takes the spec's three modes; a cold-read tune is its own
// experiment, so select finds it only when told the mode.
TEST(Cli, ColdReadCacheModeIsTunedAndSelectedByName) {
  const auto dir = fresh_dir();
  const std::string spec = write_identity_spec(dir, "SCALE", "parameters: {SCALE: [1, 2]}\n");
  const std::string out = (dir / "out").string();
  auto help = tunekit_cli({"tune", "--help"});
  EXPECT_TRUE(contains(help.output, "cold-read")) << help.output;

  auto bad = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--cache", "cold_read"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(
      contains(bad.output, "unknown cache mode 'cold_read'; did you mean 'cold-read'? (cold, cold-read or hot)"))
      << bad.output;

  // Kernel Tuner's cache=FILE, written as this flag, is pointed at the store.
  auto kt = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--cache", "kt_cache.json"});
  EXPECT_EQ(kt.exit_code, 1) << kt.output;
  EXPECT_TRUE(contains(kt.output, "Kernel Tuner's cache file of results is the results store here (--db FILE"))
      << kt.output;
  EXPECT_FALSE(contains(bad.output, "Kernel Tuner")) << bad.output;  // a mode misspelt is not told of files

  auto r = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--cache", "cold-read"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2 trials: 2 ok")) << r.output;

  auto as_spec = tunekit_cli({"select", spec, "--out-dir", out});
  EXPECT_EQ(as_spec.exit_code, 1) << as_spec.output;  // the spec says cold
  EXPECT_TRUE(contains(as_spec.output, "no trials of this spec")) << as_spec.output;
  auto selected = tunekit_cli({"select", spec, "--out-dir", out, "--cache", "cold-read"});
  EXPECT_EQ(selected.exit_code, 0) << selected.output;
}

// --where narrows one run to part of the space; its trials land in the
// spec's DB, so a later full run measures only the rest.
TEST(Cli, WhereNarrowsOneRunAndTheFullRunResumesFromIt) {
  const auto dir = fresh_dir();
  const std::string spec =
      write_identity_spec(dir, "A * B", "parameters: {A: [1, 2, 3], B: [1, 2]}\nconstraints: [A * B != 6]\n");
  const std::string out = (dir / "out").string();
  auto narrow = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--where", "B == 2", "--where", "A < 3"});
  EXPECT_EQ(narrow.exit_code, 0) << narrow.output;
  EXPECT_TRUE(contains(narrow.output, "2 trials: 2 ok")) << narrow.output;  // (1, 2) and (2, 2)
  EXPECT_FALSE(contains(narrow.output, "B: 1")) << narrow.output;

  auto full = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress"});
  EXPECT_EQ(full.exit_code, 0) << full.output;
  EXPECT_TRUE(contains(full.output, "5 trials: 5 ok")) << full.output;  // the spec's own constraint still holds
  EXPECT_TRUE(contains(full.output, "2 resumed")) << full.output;

  auto counted = tunekit_cli({"space", spec, "--where", "B == 2"});
  EXPECT_EQ(counted.exit_code, 0) << counted.output;
  EXPECT_TRUE(contains(counted.output, "valid:       2\n")) << counted.output;

  auto typo = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--where", "C == 1"});
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_TRUE(contains(typo.output, "--where C == 1: unknown name 'C'")) << typo.output;
  auto broken = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--where", "A =="});
  EXPECT_EQ(broken.exit_code, 1) << broken.output;
  EXPECT_TRUE(contains(broken.output, "expected an expression")) << broken.output;
}

// A spec that lists its configs tunes those only: --write writes the listed
// ones the constraints allow, in the order a tune runs them, not the space
// they span.
TEST(Cli, SpaceWriteOfListedConfigsWritesTheListedOnes) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void k(float* a, int n) {}\n");
  write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: k}
arguments:
  - {name: a, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 64}
parameters: {A: [1, 2, 3], B: [x, y]}
configs:
  - {A: 1, B: x}
  - {A: 3.0, B: y}
  - {A: 2, B: y}
constraints: ["A > 1"]
)");
  const std::string csv = (dir / "o.csv").string();
  auto r = tunekit_cli({"space", (dir / "s.yaml").string(), "--write", csv});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "valid:       2 (of the listed configs)")) << r.output;
  EXPECT_EQ(tunekit::testing::read_file(csv), "A,B\n3,y\n2,y\n");
}

// A size that is no number is refused with the forms of the flag given:
// --size takes one value, a list is -a's.
TEST(Cli, ASizeThatIsNoNumberSaysTheFormsOfItsFlag) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void k(float* a, int n) {}\n");
  write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: k}
arguments:
  - {name: a, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 64}
parameters: {A: [1, 2]}
)");
  const std::string spec = (dir / "s.yaml").string();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"space", spec, "-s", "N=[1024,2048]"},
                                             {"tune", spec, "-s", "N=[1024,2048]", "-o", (dir / "out").string()}}) {
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output,
                         "--size N=[1024,2048]: '[1024,2048]' is not a number; a size is an integer (4096, "
                         "0x1000, 0o10000) or a float (0.5, 1e3), e.g. N=4096 (a list of sizes, N=[1024,2048], is for "
                         "tune's -a/--axis)"))
        << r.output;
  }
  auto axis = tunekit_cli({"tune", spec, "-a", "N=[x,y]", "-o", (dir / "out").string()});
  EXPECT_EQ(axis.exit_code, 1) << axis.output;
  EXPECT_TRUE(contains(axis.output, "e.g. N=4096 or N=[1024,2048]")) << axis.output;
}

// A size on the command line is a number as the spec writes one (YAML 1.2's
// ints and floats): 0x40 is 64, not the string "0x40" refused as no number;
// an infinity is refused at its flag, as the spec refuses it at its line.
TEST(Cli, ASizeFlagReadsNumbersAsTheSpecDoes) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void k(float* a, int n) {}\n");
  write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: k}
arguments:
  - {name: a, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 64}
parameters: {A: [1, 2]}
constraints: ["A * N <= 256"]
)");
  const std::string spec = (dir / "s.yaml").string();
  for (const auto& [given, shown, valid] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"N=0x80", "{N: 128}", "2"}, {"N=0o400", "{N: 256}", "1"}, {"N=1.5e2", "{N: 150.0}", "1"}}) {
    auto r = tunekit_cli({"space", spec, "-s", given});
    EXPECT_EQ(r.exit_code, 0) << given << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "size:        " + shown + "\n")) << r.output;
    EXPECT_TRUE(contains(r.output, "valid:       " + valid + "\n")) << r.output;
  }
  for (const auto& [args, said] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"space", spec, "-s", "N=.inf"},
            "--size N=.inf: '.inf' is not a finite number; expected an integer (4096, 0x1000, 0o10000), a finite "
            "float (0.5, 1e3) or a name"},
           {{"tune", spec, "-a", "N=[64,-.Inf]", "-o", (dir / "out").string()},
            "-a N=[64,-.Inf]: '-.Inf' is not a finite number"},
           {{"space", spec, "-s", "N=0x10000000000000000"},
            "--size N=0x10000000000000000: '0x10000000000000000' is beyond a 64-bit integer"},
           // It said '1e400' is not a number.
           {{"tune", spec, "-s", "N=1e400", "-o", (dir / "out").string()},
            "--size N=1e400: '1e400' is out of the range of a float (a float's magnitude is at most 1.8e+308, and "
            "above 0 at least 4.9e-324)"},
           {{"tune", spec, "-a", "N=[64,1e400]", "-o", (dir / "out").string()},
            "-a N=[64,1e400]: '1e400' is out of the range of a float"},
           {{"space", spec, "-s", "N=1e-400"}, "--size N=1e-400: '1e-400' is out of the range of a float"}}) {
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args[3] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, said)) << r.output;
  }
}

// One syntax for -s everywhere: NAME=V,NAME=V is two sizes' names in
// space, tune, select and replay as in resolve (it was '64,N=64' is not a
// number, except in resolve).
TEST(Cli, ASizeFlagTakesSeveralNamesSeparatedByCommasInEveryCommand) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void k(float* a, int n) { for (int i = 0; i < n; ++i) a[i] = 1; }\n");
  write_file(dir / "s.yaml", R"(kernel: {source: k.cpp, entry: k}
arguments:
  - {name: a, type: f32, size: M * N, role: out}
  - {name: n, type: i32, value: M * N}
sizes: {M: 4, N: 4}
parameters: {A: [1, 2]}
constraints: ["A * M <= 16"]
measure: {warmup: 0us, min_samples: 2, max_samples: 2}
)");
  const std::string spec = (dir / "s.yaml").string(), out = (dir / "out").string();
  auto space = tunekit_cli({"space", spec, "-s", "M=8,N=2"});
  EXPECT_EQ(space.exit_code, 0) << space.output;
  EXPECT_TRUE(contains(space.output, "size:        {M: 8, N: 2}\n")) << space.output;
  EXPECT_TRUE(contains(space.output, "valid:       2\n")) << space.output;
  auto tune = tunekit_cli({"tune", spec, "-s", "M=16,N=2", "-o", out, "--no-progress"});
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_TRUE(contains(tune.output, "1 trial")) << tune.output;  // only A = 1 fits M = 16
  auto select = tunekit_cli({"select", spec, "-s", "M=16,N=2", "-o", out});
  EXPECT_EQ(select.exit_code, 0) << select.output;
  EXPECT_TRUE(contains(select.output, "{M: 16, N: 2}: {A: 1}")) << select.output;
  // select and emit check each name and value as tune does: once, and a
  // number (they took the last of two and answered 'no trials' to 'abc').
  for (const char* command : {"space", "select", "emit"}) {
    std::vector<std::string> args{command, spec, "-s", "M=16,M=8"};
    if (std::string(command) != "space") args.insert(args.end(), {"-o", out});
    auto twice = tunekit_cli(args);
    EXPECT_EQ(twice.exit_code, 1) << twice.output;
    EXPECT_TRUE(contains(twice.output, "error: --size M=8: ")) << twice.output;
    EXPECT_TRUE(contains(twice.output, "given twice")) << twice.output;
  }
  // A flag takes one value: the spec after it is the positional, in every
  // subcommand (it was swallowed, and 'SPEC is required' said).
  for (const char* command : {"space", "select", "tune"}) {
    const std::string name = command;
    std::vector<std::string> args{command, "-s", "M=16"};
    if (name == "space") args.insert(args.end(), {"-s", "N=2", spec});
    else args.insert(args.end(), {"-a", "N=[2]", spec, "-o", out});
    if (name == "tune") args.push_back("--no-progress");
    auto before = tunekit_cli(args);
    EXPECT_EQ(before.exit_code, 0) << command << ": " << before.output;
  }
  for (const char* command : {"select", "emit"}) {
    auto word = tunekit_cli({command, spec, "-s", "M=abc", "-o", out});
    EXPECT_EQ(word.exit_code, 1) << word.output;
    EXPECT_TRUE(contains(word.output, "error: --size M=abc: 'abc' is not a number")) << word.output;
  }
}

// 2^64 - 1 valid configs is an exact count, not the saturated one: said
// without ">=" (3 * 5 * 17 * 257 * 641 * 65537 * 6700417, as in
// tests/space/space_test.cpp).
TEST(Cli, SpaceOfExactlyTwoToThe64MinusOneConfigsIsNotSaturated) {
  const auto dir = fresh_dir();
  std::string params;
  for (const auto& [name, n] : std::vector<std::pair<std::string, int>>{
           {"a", 3}, {"b", 5}, {"c", 17}, {"d", 257}, {"e", 641}, {"q1", 257}, {"q2", 256}, {"r1", 385}, {"r2", 17449}})
    params += std::string(params.empty() ? "" : ", ") + "{\"Name\": \"" + name + "\", \"Values\": \"list(range(" +
              std::to_string(n) + "))\"}";
  write_file(dir / "t1.json", "{\"ConfigurationSpace\": {\"TuningParameters\": [" + params +
                                  "], \"Conditions\": [\"q1 < 256 or q2 == 0\", \"r1 < 384 or r2 == 0\"]}}");
  auto r = tunekit_cli({"space", (dir / "t1.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "valid:       18446744073709551615\n")) << r.output;
  r = tunekit_cli({"space", (dir / "t1.json").string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "\"valid\":18446744073709551615,\"saturated\":false")) << r.output;
}

namespace {

// `tunekit tune SOURCE` of a bare kernel k(x, y, n) over 64 floats, with
// `extra` flags.
detail::ProcessResult tune_bare_k(const fs::path& dir, const std::string& source, const std::string& entry,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "tune",         (dir / source).string(), "--entry", entry,      "--arg",     "x:f32:64",
      "--arg",        "y:f32:64::out",         "--arg",   "n:i32=64", "--out-dir", (dir / "out").string(),
      "--no-progress"};
  args.insert(args.end(), extra.begin(), extra.end());
  return tunekit_cli(args);
}

}  // namespace

// A bare source's language is its name's: a .c file is C (C++ refuses
// this one's malloc without a cast, and would mangle its function's name),
// and a .cl or .cu file is a device kernel, whose launch needs a spec.
TEST(Cli, ABareSourceIsOfTheLanguageItsNameSays) {
  const auto dir = fresh_dir();
  write_file(dir / "k.c",
             "// %RANGE% TUNE_U u 1:2:1\n#include <stdlib.h>\n"
             "void k(const float* x, float* y, int n) {\n"
             "  float* t = malloc(sizeof(float));\n  free(t);\n"
             "  for (int i = 0; i < n; ++i) y[i] = x[i] * TUNE_U / TUNE_U;\n}\n");
  // --early-stop off: a preempted worker must not get a config cut short.
  auto r = tune_bare_k(dir, "k.c", "k", {"--early-stop", "off"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2 trials: 2 ok")) << r.output;

  for (const char* name : {"k.cl", "k.cu"}) {
    write_file(dir / name, "// %RANGE% TUNE_B b 1:4:1\n");
    r = tunekit_cli({"tune", (dir / name).string(), "--entry", "k", "--arg", "y:f32:16::out"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, (dir / name).string() + ": its name's ending makes it a kernel of language " +
                                       (std::string(name) == "k.cl" ? "opencl" : "cuda")))
        << r.output;
    EXPECT_TRUE(contains(r.output, "write a spec")) << r.output;
    // Its space needs no launch.
    r = tunekit_cli({"space", (dir / name).string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "valid:       4")) << r.output;
  }
}

// A %RANGE% parameter the source names nowhere else: each of its values
// builds the same code, which the tune says.
TEST(Cli, ARangeParameterTheSourceNeverNamesIsWarnedOf) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "// %RANGE% TUNE_U u 1:2:1\n// %RANGE% TUNE_NOPE n 1:2:1\n"
             "extern \"C\" void k(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = x[i] * TUNE_U / TUNE_U;\n}\n");
  auto r = tune_bare_k(dir, "k.cpp", "k");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "names the %RANGE% parameter TUNE_NOPE nowhere but on its %RANGE% line")) << r.output;
  EXPECT_FALSE(contains(r.output, "parameter TUNE_U nowhere")) << r.output;

  // A mistyped --entry is the flag's error.
  r = tune_bare_k(dir, "k.cpp", "kk");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "error: --entry kk: kernel.entry 'kk' does not appear in k.cpp (did you mean 'k'?)"))
      << r.output;
}

TEST(Cli, BareSourceWithoutArgumentsSaysWhatIsMissing) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "// %RANGE% TUNE_X x 1:2:1\nextern \"C\" void f() {}\n");
  auto r = tunekit_cli({"tune", (dir / "k.cpp").string(), "--entry", "f"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "--arg")) << r.output;
}

// A fill that is not a finite number, or that the buffer's type cannot
// hold, is the flag's error (nan became JSON null, and every size failed
// with a JSON library's message).
TEST(Cli, AnArgumentsFillIsCheckedAtTheFlag) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "// %RANGE% TUNE_X x 1:2:1\nextern \"C\" void f(float* x, int n) {}\n");
  for (const auto& [arg, why] : std::vector<std::pair<std::string, std::string>>{
           {"x:f32:n:nan", "nan is not a finite number"},
           {"x:f32:n:inf", "inf is not a finite number"},
           {"x:f32:n:1e400", "out of the range of a double"},
           {"x:i8:n:1000", "1000 does not fit i8"}}) {
    auto r = tunekit_cli({"tune", (dir / "k.cpp").string(), "--entry", "f", "--arg", arg, "--arg", "n:i32=64",
                          "-o", (dir / "out").string()});
    EXPECT_EQ(r.exit_code, 1) << arg << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--arg")) << r.output;
    EXPECT_TRUE(contains(r.output, why)) << r.output;
  }
}

// A run killed with SIGKILL mid-way loses nothing and duplicates nothing:
// the rerun keeps the trials that were stored and measures only the rest.
TEST(Cli, KilledRunResumes) {
  const auto dir = fresh_dir();
  write_file(dir / "slow.cpp", R"(#include <unistd.h>
extern "C" void slow(const float* x, float* y, int n) { usleep(30000 + 1000 * P); for (int i = 0; i < n; ++i) y[i] = x[i]; }
)");
  write_file(dir / "slow.yaml", R"(kernel: {source: slow.cpp, entry: slow, flags: [-O0]}
arguments:
  - {name: x, type: f32, size: 16}
  - {name: y, type: f32, size: 16, role: out}
  - {name: n, type: i32, value: 16}
parameters: {P: "0:11:1"}
measure: {warmup: 0us, min_samples: 3, max_samples: 3, cache: hot}
)");
  const fs::path db = dir / "out" / "tunekit.db";
  const std::string exe = tunekit_exe().string(), spec = (dir / "slow.yaml").string(), out = (dir / "out").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(exe.c_str(), exe.c_str(), "tune", spec.c_str(), "--out-dir", out.c_str(), "-j", "1", "--no-progress",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<TrialRecord> before;
  for (int i = 0; i < 600 && before.size() < 4; ++i) {
    std::this_thread::sleep_for(100ms);
    if (fs::exists(db)) before = Store(db).all();
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it could be killed";
  before = Store(db).all();
  ASSERT_GE(before.size(), 4u);
  ASSERT_LT(before.size(), 12u);

  auto r = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, std::to_string(before.size()) + " resumed")) << r.output;
  auto after = Store(db).all();
  ASSERT_EQ(after.size(), 12u);
  std::set<std::string> keys;
  for (const auto& t : after) keys.insert(t.config.key());
  EXPECT_EQ(keys.size(), 12u);
  for (const auto& b : before) {
    auto same = std::find_if(after.begin(), after.end(), [&](const auto& a) { return a.id == b.id; });
    ASSERT_NE(same, after.end());
    EXPECT_EQ(same->config.key(), b.config.key());
    EXPECT_EQ(same->created_at, b.created_at);  // kept, not rerun
  }
}

TEST(Cli, TunesTheBundledExample) {
  const auto dir = fresh_dir();
  // A small size and budget keep this quick; the README's command runs the full space.
  auto r = tunekit_cli({"tune", std::string(TUNEKIT_SOURCE_DIR) + "/examples/matmul/matmul.yaml", "--size", "M=256",
                        "--size", "N=256", "--size", "K=256", "--strategy", "random", "--max-evals", "4", "--out-dir",
                        (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "best")) << r.output;
  EXPECT_TRUE(contains(r.output, "max abs diff")) << r.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "tunekit.db"));
}

// --early-stop FACTOR|off: a planted loser (a 30 ms sleep against a kernel of
// microseconds) is cut short and shown as slower; emit never ships it; a run
// with the early stop off measures it in full.
TEST(Cli, EarlyStopCutsALoserAndOffMeasuresIt) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "#include <unistd.h>\nextern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; "
             "i < n; ++i) y[i] = x[i]; if (NAP) usleep(NAP); }\n");
  write_file(dir / "k.yaml", R"(name: naps
kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: 256}
  - {name: y, type: f32, size: 256, role: out}
  - {name: n, type: i32, value: 256}
parameters: {NAP: [0, 30000]}
default: {NAP: 0}
measure: {warmup: 0us, min_samples: 5, max_samples: 5, cache: hot}
)");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  auto bad = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--early-stop", "0.5"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--early-stop: bad early stop '0.5': it is not above 1")) << bad.output;

  auto on = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--early-stop", "3"});
  EXPECT_EQ(on.exit_code, 0) << on.output;
  EXPECT_TRUE(contains(on.output, "No.2: slower, {NAP: 30000} (cut short after 3 samples")) << on.output;
  EXPECT_TRUE(contains(on.output, "2 trials: 1 ok, 1 slower")) << on.output;
  auto emit = tunekit_cli({"emit", spec, "--out-dir", out});
  EXPECT_EQ(emit.exit_code, 0) << emit.output;
  const std::string policy = tunekit::testing::read_file(dir / "out" / "naps_policy.json");
  EXPECT_TRUE(contains(policy, "\"NAP\": 0")) << policy;
  EXPECT_FALSE(contains(policy, "30000")) << policy;

  auto off = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--early-stop", "off"});
  EXPECT_EQ(off.exit_code, 0) << off.output;
  EXPECT_TRUE(contains(off.output, "2 trials: 2 ok; 1 resumed from the store")) << off.output;
}

// Under an objective other than the time, the early stop (which compares
// times) is refused on the command line as in the spec; the tune measures
// every config in full, and the HTML page, the JSON and `tunekit report`
// name the best by the objective. Each config sleeps W ms, and cost = 4 - W
// does not depend on the time, so the best is {W: 3} however busy the
// machine is (by time it would be {W: 1}).
TEST(Cli, AMetricObjectiveNamesTheBestEverywhereWithoutTheEarlyStop) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "#include <unistd.h>\nextern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; "
             "i < n; ++i) y[i] = x[i]; usleep(1000 * W); }\n");
  write_file(dir / "k.yaml", R"(name: weighted
kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: 256}
  - {name: y, type: f32, size: 256, role: out}
  - {name: n, type: i32, value: 256}
parameters: {W: [1, 2, 3]}
metrics: {cost: "4 - W + 0 * time_us"}
objective: {minimize: cost}
measure: {warmup: 0us, min_samples: 3, max_samples: 3, cache: hot, confirm: off}
)");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  auto on = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--early-stop", "3"});
  EXPECT_EQ(on.exit_code, 1) << on.output;
  EXPECT_TRUE(contains(on.output,
                       "--early-stop: '3' turns the early stop on, but the early stop compares times, "
                       "and the objective is cost (lower is better)"))
      << on.output;
  EXPECT_TRUE(contains(on.output, "expected off (under the objective at " + spec + ":9:23")) << on.output;

  auto tuned = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, "3 trials: 3 ok")) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, "best: No.3 ")) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, "early stop: off, every config measured in full")) << tuned.output;
  const auto json = nlohmann::json::parse(tunekit::testing::read_file(dir / "out" / "weighted.json"));
  EXPECT_EQ(json["sizes"][0]["best"]["config"]["W"], 3) << json.dump();
  EXPECT_TRUE(contains(tunekit::testing::read_file(dir / "out" / "weighted.html"), "<code>{W: 3}</code> (best)"));
  const std::string page = (dir / "page.html").string();
  auto report = tunekit_cli({"report", spec, "--out-dir", out, "--html", page});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string html = tunekit::testing::read_file(page);
  EXPECT_TRUE(contains(html, "<code>{W: 3}</code> (best)")) << html;
  EXPECT_FALSE(contains(html, "<code>{W: 1}</code> (best)")) << html;
}

// --confirm N|off: a count or off, else a message naming the flag. Two
// configs running the same code (a 1 ms sleep: within 10% of each other on a
// busy machine too) are confirmed; the JSON lists them.
TEST(Cli, ConfirmTakesACountOrOff) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "#include <unistd.h>\nextern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; i < n; "
             "++i) y[i] = x[i] + PAD * 0; usleep(1000); }\n");
  write_file(dir / "k.yaml", R"(name: pads
kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: 256}
  - {name: y, type: f32, size: 256, role: out}
  - {name: n, type: i32, value: 256}
parameters: {PAD: [0, 1]}
measure: {warmup: 0us, min_samples: 5, max_samples: 5, cache: hot}
)");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  for (const char* bad : {"many", "-1", "2x"}) {
    auto r = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--confirm", bad});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, std::string("--confirm: '") + bad + "' is not a count")) << r.output;
  }
  auto on = tunekit_cli(
      {"tune", spec, "--out-dir", out, "--no-progress", "--confirm", "2", "--json", (dir / "on.json").string()});
  EXPECT_EQ(on.exit_code, 0) << on.output;
  EXPECT_TRUE(contains(on.output, "confirmed: No.")) << on.output;
  const std::string json = tunekit::testing::read_file(dir / "on.json");
  EXPECT_TRUE(contains(json, "\"confirmed\": [")) << json;
  auto off = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--confirm", "off", "--fresh"});
  EXPECT_EQ(off.exit_code, 0) << off.output;
  EXPECT_FALSE(contains(off.output, "confirmed")) << off.output;
}

// --json writes a path that is not UTF-8 (a file system's bytes) with U+FFFD
// for each bad byte, as the tune's JSON export does: nlohmann's dump throws
// on it, and the command ended with exit status 2 and nothing on stdout.
TEST(Cli, JsonOutputsTakeAPathThatIsNotUtf8) {
  const fs::path dir = fresh_dir() / "caf\xe9";
  fs::create_directories(dir);
  const fs::path data = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";
  fs::copy_file(data / "conv_small.json.gz", dir / "conv_small.json.gz");
  fs::copy_file(data / "conv_small.T1.json", dir / "conv_small.T1.json");
  const std::string spec = write_identity_spec(dir, "SCALE", "parameters: {SCALE: [1, 2]}\n");
  const std::string replaced = "caf\xEF\xBF\xBD";  // U+FFFD in UTF-8
  // The JSON object the command printed, from the first line that starts
  // one (what stderr adds starts with "warning:" or "note:").
  const auto json_of = [](const std::vector<std::string>& args) {
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << r.output;
    const auto at = r.output.rfind('{', 0) == 0 ? 0 : r.output.find("\n{");
    return at == std::string::npos ? nlohmann::json() : nlohmann::json::parse(r.output.substr(at), nullptr, false);
  };
  const auto text = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "(none)";
  };
  const auto replay = json_of({"replay", (dir / "conv_small.json.gz").string(), "--t1",
                               (dir / "conv_small.T1.json").string(), "--max-evals", "3", "--json"});
  EXPECT_TRUE(contains(text(replay, "recording"), replaced)) << text(replay, "recording");
  const auto space = json_of({"space", (dir / "conv_small.T1.json").string(), "--json"});
  EXPECT_TRUE(contains(text(space, "file"), replaced)) << text(space, "file");
  const auto resolved = json_of({"resolve", spec, "--json"});
  EXPECT_TRUE(contains(text(resolved, "spec"), replaced)) << text(resolved, "spec");
}

// tune --device-index picks the backend's device by its index in `tunekit
// devices`, and a T1 file's Device.DeviceId does where the flag is not
// given; an index the backend has no device for is refused where it was
// given, before anything is built.
TEST(Cli, TuneTakesTheDeviceIndexOfTheFlagElseTheT1Files) {
  const auto dir = fresh_dir();
  const std::string spec = write_identity_spec(dir, "1", "parameters: {U: [1]}\n");
  auto r = tunekit_cli({"tune", spec, "--device-index", "1", "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "error: --device-index: there is no cpu device 1: this machine has 1 cpu device (0: "
                       "cpu: "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "expected an index from 0 to 0")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "tunekit.db"));
  r = tunekit_cli({"tune", spec, "--device-index", "-1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--device-index")) << r.output;
  r = tunekit_cli({"tune", spec, "--device-index", "0", "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Recorded results run on no device.
  r = tunekit_cli({"tune", spec, "--device-index", "0", "--replay", (dir / "out" / "tunekit.db").string(), "-o",
                   (dir / "replayed").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "error: --device-index: does not apply with --replay")) << r.output;

  const DeviceListing opencl = backends().get("opencl").list_devices();
  if (opencl.devices.size() != 1) GTEST_SKIP() << "the T1 half needs one OpenCL device (PoCL): " << opencl.unavailable;
  const fs::path example = fs::path(TUNEKIT_SOURCE_DIR) / "examples/kernel_tuner_t1";
  fs::copy_file(example / "vector_add.cl", dir / "vector_add.cl");
  const std::string t1 = tunekit::testing::read_file(example / "vector_add.json");
  const std::string language = R"("Language": "OpenCL",)";
  ASSERT_TRUE(contains(t1, language));
  std::string picked = t1;
  picked.replace(picked.find(language), language.size(), language + R"( "Device": {"DeviceId": 1},)");
  write_file(dir / "t1.json", picked);
  const std::string at = (dir / "t1.json").string() + ":13:";
  r = tunekit_cli({"tune", (dir / "t1.json").string(), "--no-progress", "-o", (dir / "t1-out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "error: " + at +
                                     "50: there is no opencl device 1: this machine has 1 opencl device "
                                     "(0: opencl: "))
      << r.output;
  // The flag wins over the file, and the file's index is no longer said to
  // be ignored.
  r = tunekit_cli({"tune", (dir / "t1.json").string(), "--device-index", "0", "--max-evals", "1", "--no-progress", "-o",
                   (dir / "t1-out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "DeviceId")) << r.output;
  // DeviceId 0 is the device the file picks, and tunes there.
  picked = t1;
  picked.replace(picked.find(language), language.size(), language + R"( "Device": {"DeviceId": 0},)");
  write_file(dir / "t1.json", picked);
  r = tunekit_cli(
      {"tune", (dir / "t1.json").string(), "--max-evals", "1", "--no-progress", "-o", (dir / "t1-out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// resolve works out the config on the device a tune of the spec would run
// on: --device-index's, else a T1 file's Device.DeviceId (it took device 0).
TEST(Cli, ResolveTakesTheDeviceIndexOfTheFlagElseTheT1Files) {
  const auto dir = fresh_dir();
  const fs::path example = fs::path(TUNEKIT_SOURCE_DIR) / "examples/kernel_tuner_t1";
  fs::copy_file(example / "vector_add.cl", dir / "vector_add.cl");
  std::string t1 = tunekit::testing::read_file(example / "vector_add.json");
  const std::string language = R"("Language": "OpenCL",)";
  ASSERT_NE(t1.find(language), std::string::npos);
  t1.replace(t1.find(language), language.size(), language + R"( "Device": {"DeviceId": 1},)");
  write_file(dir / "t1.json", t1);
  const std::string spec = (dir / "t1.json").string();
  // PoCL's one-core driver is device 0, its threaded driver device 1.
  const auto on_two = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"env", "POCL_DEVICES=basic pthread", tunekit::testing::tunekit_exe().string()});
    return detail::run_process(args, std::chrono::seconds(300));
  };
  const auto devices = on_two({"devices"});
  if (devices.output.find("\nopencl 1: ") == std::string::npos)
    GTEST_SKIP() << "needs PoCL's two drivers as two OpenCL devices: " << devices.output;
  auto r = on_two({"resolve", spec});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "device:    opencl: Portable Computing Language / pthread-")) << r.output;
  r = on_two({"resolve", spec, "--device-index", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "device:    opencl: Portable Computing Language / basic-")) << r.output;
  r = on_two({"resolve", spec, "--device-index", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "error: --device-index: there is no opencl device 2: this machine has 2 "
                       "opencl devices (0: opencl: "))
      << r.output;
  r = on_two({"resolve", spec, "--device-index", "1", "--properties",
              (fs::path(TUNEKIT_SOURCE_DIR) / "tests/cli/data/h200.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--device-index: does not apply with --properties without --build")) << r.output;
}
