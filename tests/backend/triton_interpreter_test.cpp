// The three Triton kernels of kernels/ tuned end to end on the CPU: one
// config each, through the real compile helpers and worker, with Triton's
// interpreter (TRITON_INTERPRET=1) and torch's CPU tensors. It needs a
// python3 with torch and triton: scripts/test.sh installs them from PyPI into
// build/pyenv (about 3 minutes); without it the test says it is skipped.
// The specs run with float32 tensors: the interpreter computes bfloat16 dots
// wrongly (seen with triton 3.9 on the CPU), so their bf16 types are swapped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "support/temp_dir.hpp"
#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
namespace fs = std::filesystem;

namespace {

std::string interpreter_python() {
  if (const char* p = std::getenv("TUNEKIT_INTERPRETER_PYTHON"); p && *p) return p;
  return (fs::path(TUNEKIT_BINARY_DIR) / "pyenv" / "bin" / "python").string();
}

bool has_torch_and_triton(const std::string& python) {
  if (!fs::exists(python)) return false;
  const std::string cmd = "'" + python + "' -c 'import torch, triton' > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// The kernel's spec with float32 tensors and absolute paths, shrunk to one
// size and one config.
Spec small_spec(const std::string& kernel, const std::string& file, const Bindings& size, const Config& config) {
  const fs::path folder = fs::path(TUNEKIT_SOURCE_DIR) / "kernels" / kernel;
  std::string text = tunekit::testing::read_file(folder / (file + ".yaml"));
  for (std::size_t at; (at = text.find("bf16")) != std::string::npos;) text.replace(at, 4, "f32");
  const std::string py = file + ".py";
  for (const std::string key : {"source: ", "python: "})
    for (std::size_t at = 0; (at = text.find(key + py, at)) != std::string::npos; at += key.size())
      text.replace(at + key.size(), py.size(), (folder / py).string());
  const fs::path dir = tunekit::testing::fresh_dir("." + kernel);
  tunekit::testing::write_file(dir / (file + ".yaml"), text);
  Spec s = load_spec(dir / (file + ".yaml"));
  s.sizes = {size};
  for (auto& p : s.parameters) p.values = {*config.find(p.name)};
  s.default_config = config;
  s.measure.warmup = Microseconds(0);
  s.measure.min_samples = 1;
  s.measure.max_samples = 2;
  s.measure.timeout = Seconds(600);
  return s;
}

struct TritonInterpreter : ::testing::Test {
  void SetUp() override {
    python_ = interpreter_python();
    if (!has_torch_and_triton(python_))
      GTEST_SKIP() << "no python with torch and triton at " << python_
                   << " (scripts/test.sh installs them from PyPI; or set TUNEKIT_INTERPRETER_PYTHON): the "
                      "interpreter run of the Triton kernels is skipped";
    ::setenv("TUNEKIT_PYTHON", python_.c_str(), 1);
    ::setenv("TRITON_INTERPRET", "1", 1);
  }
  void TearDown() override {
    ::unsetenv("TUNEKIT_PYTHON");
    ::unsetenv("TRITON_INTERPRET");
  }
  void expect_ok(const Spec& spec) {
    TuneOptions opt;
    opt.out_dir = tunekit::testing::fresh_dir(".out");
    opt.jobs = 1;
    TuneReport r = tune(spec, opt);
    ASSERT_EQ(r.sizes.size(), 1u);
    ASSERT_FALSE(r.sizes[0].trials.empty());
    const auto& t = r.sizes[0].trials.front();
    EXPECT_EQ(t.status, Status::ok) << t.error;
    EXPECT_TRUE(t.verification.checked);
    EXPECT_TRUE(t.verification.passed) << t.verification.detail;
  }
  std::string python_;
};

}  // namespace

TEST_F(TritonInterpreter, FusedMoeGroupedGemm) {
  expect_ok(small_spec("fused_moe", "fused_moe",
                       {{"E", Value(4)}, {"topk", Value(2)}, {"N", Value(64)}, {"K", Value(64)}, {"M", Value(3)}},
                       Config({{"BLOCK_SIZE_M", Value(16)},
                               {"BLOCK_SIZE_N", Value(32)},
                               {"BLOCK_SIZE_K", Value(64)},
                               {"GROUP_SIZE_M", Value(1)},
                               {"num_warps", Value(4)},
                               {"num_stages", Value(2)}})));
}

TEST_F(TritonInterpreter, PrefillAttentionWithAPrefix) {
  expect_ok(small_spec(
      "prefill_attention", "prefill_attention",
      {{"D", Value(16)},
       {"causal", Value(1)},
       {"Hq", Value(2)},
       {"Hkv", Value(1)},
       {"P", Value(5)},
       {"Lq", Value(20)},
       {"B", Value(1)}},
      Config({{"BLOCK_M", Value(16)}, {"BLOCK_N", Value(16)}, {"num_warps", Value(4)}, {"num_stages", Value(2)}})));
}

TEST_F(TritonInterpreter, DecodeAttentionSplitAndCombined) {
  expect_ok(small_spec(
      "decode_attention_triton", "decode_attention",
      {{"B", Value(1)}, {"Hq", Value(4)}, {"Hkv", Value(1)}, {"L", Value(40)}, {"D", Value(16)}},
      Config({{"SPLITS", Value(2)}, {"BLOCK_N", Value(16)}, {"num_warps", Value(4)}, {"num_stages", Value(2)}})));
}

namespace {

// A vector add, a plain function beside it and two references, for the
// checks a real Triton makes (the fake inspector has no @triton.jit).
constexpr const char* kVectorAdd = R"P(import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, out, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


def helper(x):
    return x


def raising_reference(x, y):
    return x + y.no_such_method()


def refusing_setup(args, meta):
    raise ValueError("setup refuses BLOCK_SIZE %d" % meta["BLOCK_SIZE"])


def half_reference(x, y, out):
    out[:500] = (x + y)[:500]


@triton.jit
def scribble_kernel(x, y, out, n, BLOCK_SIZE: tl.constexpr, SCRIBBLE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)
    if SCRIBBLE:
        tl.store(x + offs, tl.zeros([BLOCK_SIZE], dtype=tl.float32), mask=mask)


autotuned = triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 64})], key=["n"])(add_kernel)
)P";

constexpr const char* kVectorAddSpec = R"Y(kernel:
  language: triton
  source: vadd.py
  entry: add_kernel
  grid: ["ceil_div(n, BLOCK_SIZE)"]
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: y, type: f32, shape: [n]}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 1000}
parameters: {BLOCK_SIZE: [64], num_warps: [2]}
reference: {python: vadd.py, entry: raising_reference}
measure: {warmup: 0ms, min_samples: 1, max_samples: 2}
)Y";

// The vector add's spec in a fresh folder, with `from` replaced by `to`.
fs::path vector_add_spec(const std::string& from = "", const std::string& to = "") {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "vadd.py", kVectorAdd);
  std::string text = kVectorAddSpec;
  if (!from.empty()) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  tunekit::testing::write_file(dir / "vadd.yaml", text);
  return dir / "vadd.yaml";
}

// What the one size of a tune that cannot verify anything says.
std::string size_error(const fs::path& spec) {
  TuneOptions opt;
  opt.out_dir = spec.parent_path() / "out";
  opt.jobs = 1;
  const TuneReport r = tune(load_spec(spec), opt);
  return r.sizes.size() == 1 ? r.sizes[0].error : "no size";
}

}  // namespace

TEST_F(TritonInterpreter, AnEntryThatIsNotJitIsLocatedAtKernelEntry) {
  const fs::path spec = vector_add_spec("entry: add_kernel", "entry: helper");
  try {
    load_spec(spec);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, spec.string()) << e.what();
    EXPECT_EQ(e.where().line, 4) << e.what();
    EXPECT_EQ(e.where().column, 10) << e.what();
    EXPECT_EQ(e.message(),
              "'helper' in vadd.py is a plain Python function: expected a @triton.jit function (vadd.py's "
              "@triton.jit functions: add_kernel, scribble_kernel)");
  }
}

// The reference's failure in the user's terms: their function, their line,
// their exception, and no class of tunekit's.
TEST_F(TritonInterpreter, AReferenceThatRaisesIsReportedInTheUsersTerms) {
  const std::string error = size_error(vector_add_spec());
  EXPECT_NE(error.find("the reference raising_reference raised at "), std::string::npos) << error;
  EXPECT_NE(error.find("vadd.py:17: AttributeError"), std::string::npos) << error;
  EXPECT_EQ(error.find("ReferenceError_"), std::string::npos) << error;
}

// A setup function that raises is the config's failure, named with its
// line, as a reference's is.
TEST_F(TritonInterpreter, ASetupFunctionThatRaisesIsNamedAtItsLine) {
  const fs::path spec = vector_add_spec("{python: vadd.py, entry: raising_reference}", "none");
  std::string text = tunekit::testing::read_file(spec);
  const std::string plain_y = "{name: y, type: f32, shape: [n]}";
  text.replace(text.find(plain_y), plain_y.size(), "{name: y, type: f32, shape: [n], fill: {setup: refusing_setup}}");
  tunekit::testing::write_file(spec, text);
  TuneOptions opt;
  opt.out_dir = spec.parent_path() / "out";
  opt.jobs = 1;
  const TuneReport r = tune(load_spec(spec), opt);
  ASSERT_EQ(r.sizes.size(), 1u);
  ASSERT_FALSE(r.sizes[0].trials.empty());
  const std::string& error = r.sizes[0].trials[0].error;
  EXPECT_EQ(error.rfind("the setup function refusing_setup raised at ", 0), 0u) << error;
  EXPECT_NE(error.find("vadd.py:21: ValueError: setup refuses BLOCK_SIZE 64"), std::string::npos) << error;
}

// An entry under @triton.autotune would run the autotuner's configs, not
// the trial's, and its (*args, **kwargs) would hide every parameter: it is
// refused at kernel.entry, saying what to point it at.
TEST_F(TritonInterpreter, AnAutotunedEntryIsRefusedAtKernelEntry) {
  const fs::path spec = vector_add_spec("entry: add_kernel", "entry: autotuned");
  try {
    load_spec(spec);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 4) << e.what();
    EXPECT_EQ(e.where().column, 10) << e.what();
    EXPECT_NE(e.message().find("'autotuned' in vadd.py (line 5) is wrapped in @triton.autotune: expected a "
                               "@triton.jit function"),
              std::string::npos)
        << e.what();
  }
}

// Outputs start as NaN: one the reference leaves unwritten is its own
// error, said once, not every config's "expected nan".
TEST_F(TritonInterpreter, AnOutputTheReferenceLeavesUnwrittenIsNamed) {
  const std::string error = size_error(vector_add_spec("entry: raising_reference", "entry: half_reference"));
  EXPECT_NE(error.find("the reference function 'half_reference' failed (wrong_result)"), std::string::npos) << error;
  EXPECT_NE(error.find("the reference's output 'out' has nan at element 500"), std::string::npos) << error;
}

// A config that writes into its input is wrong itself; the config after it
// in the same worker computes from the input as generated.
TEST_F(TritonInterpreter, AConfigThatWritesIntoItsInputDoesNotFailTheNext) {
  fs::path spec = vector_add_spec("entry: add_kernel", "entry: scribble_kernel");
  std::string text = tunekit::testing::read_file(spec);
  for (auto [from, to] : {std::pair<std::string, std::string>{"{BLOCK_SIZE: [64], num_warps: [2]}",
                                                              "{BLOCK_SIZE: [64], SCRIBBLE: [1, 0], num_warps: [2]}"},
                          {"{python: vadd.py, entry: raising_reference}", R"({torch: "x + y"})"}})
    text.replace(text.find(from), from.size(), to);
  tunekit::testing::write_file(spec, text);
  TuneOptions opt;
  opt.out_dir = spec.parent_path() / "out";
  opt.jobs = 1;
  const TuneReport r = tune(load_spec(spec), opt);
  ASSERT_EQ(r.sizes.size(), 1u);
  const auto& trials = r.sizes[0].trials;
  ASSERT_EQ(trials.size(), 2u) << r.sizes[0].error;
  // The scribbler first, or the test shows nothing.
  ASSERT_EQ(trials[0].config.find("SCRIBBLE")->as_int(), 1);
  EXPECT_EQ(trials[0].status, Status::wrong_result) << trials[0].error;
  EXPECT_EQ(trials[1].status, Status::ok) << trials[1].error;
}

// A torch reference has no function name: it is named by its expression.
TEST_F(TritonInterpreter, ATorchReferenceThatFailsIsNamedByItsExpression) {
  const std::string error =
      size_error(vector_add_spec("{python: vadd.py, entry: raising_reference}", R"({torch: "x + yy"})"));
  EXPECT_NE(error.find("the reference torch expression 'x + yy' failed"), std::string::npos) << error;
  EXPECT_NE(error.find("name 'yy' is not defined"), std::string::npos) << error;
}

namespace {

// Every trial of the tune of `spec` (written into a fresh folder with
// `files`), which must be ok and verified.
// A Triton kernel that copies x into out, for the tests that are about
// what reaches it; each adds its reference.
constexpr const char* kCopyKernel = R"P(import triton
import triton.language as tl


@triton.jit
def copy_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m), mask=m)
)P";

void expect_every_trial_ok(const std::string& spec, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path dir = tunekit::testing::fresh_dir();
  for (const auto& [name, text] : files) tunekit::testing::write_file(dir / name, text);
  tunekit::testing::write_file(dir / "k.yaml", spec);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  opt.jobs = 1;
  const TuneReport r = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_FALSE(r.sizes.empty());
  for (const auto& size : r.sizes) {
    EXPECT_EQ(size.error, "");
    ASSERT_FALSE(size.trials.empty());
    for (const auto& t : size.trials) {
      EXPECT_EQ(t.status, Status::ok) << t.error;
      EXPECT_TRUE(t.verification.passed) << t.verification.detail;
    }
  }
}

}  // namespace

// An integer output is poisoned with 0xA5 bytes before a verified run, as
// the C++ workers do: as a value its type holds (torch refuses 0xA5 for an
// int8, and every size stopped at the reference).
TEST_F(TritonInterpreter, SmallIntegerOutputsArePoisonedWithinTheirType) {
  const std::string kernel = std::string(kCopyKernel) + R"P(

def ref(x):
    return x.clone()
)P";
  for (const char* type : {"i8", "i16", "u8"}) {
    SCOPED_TRACE(type);
    expect_every_trial_ok(
        fmt::format(R"Y(kernel: {{language: triton, source: k.py, entry: copy_kernel, grid: ["ceil_div(n, BLOCK)"]}}
arguments:
  - {{name: x, type: {0}, shape: [n]}}
  - {{name: out, type: {0}, shape: [n], role: out}}
  - {{name: n, type: i32, value: n}}
sizes: {{n: 300}}
parameters: {{BLOCK: [128]}}
reference: {{python: k.py, entry: ref}}
measure: {{warmup: 0ms, min_samples: 1, max_samples: 2, early_stop: 0}}
)Y",
                    type),
        {{"k.py", kernel}});
  }
}

// fill: {file} reaches a Triton kernel as the file's elements (it was a
// random fill, which a reference computing from the same inputs passes):
// the reference here knows the file's values, not the kernel's inputs. Two
// configs, so the second refills the input from the file.
TEST_F(TritonInterpreter, AFileFillIsTheFilesElements) {
  std::string raw;
  for (int i = 0; i < 300; ++i) {
    const float v = 0.5f * static_cast<float>(i);
    raw.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  expect_every_trial_ok(R"Y(kernel: {language: triton, source: k.py, entry: copy_kernel, grid: ["ceil_div(n, BLOCK)"]}
arguments:
  - {name: x, type: f32, shape: [n], fill: {file: x.bin}}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 300}
parameters: {BLOCK: [64, 128]}
reference: {python: k.py, entry: ref}
measure: {warmup: 0ms, min_samples: 1, max_samples: 2, early_stop: 0}
)Y",
                        {{"x.bin", raw}, {"k.py", "import torch\n" + std::string(kCopyKernel) + R"P(

def ref(x):
    return torch.arange(x.numel(), dtype=x.dtype, device=x.device) * 0.5
)P"}});
}

// A setup function's values are made again for a size that differs from the
// last in a scalar alone (its buffers, and their version, stay), and it sees
// the launch options with the meta-parameters, as documented.
TEST_F(TritonInterpreter, ASetupFunctionSeesEachSizesScalarsAndTheLaunchOptions) {
  const std::string kernel = R"P(import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(x, idx, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + tl.load(idx + offs, mask=m), mask=m), mask=m)


def perm(n, stride, device):
    return (torch.arange(n, device=device) * stride % n).to(torch.int32)


def make_index(args, meta):
    assert meta["num_warps"] == 2, meta
    return {"idx": perm(args["n"], args["stride"], args["x"].device)}


def ref(x, n, stride):
    return x[perm(n, stride, x.device).long()]
)P";
  expect_every_trial_ok(R"Y(kernel: {language: triton, source: k.py, entry: gather_kernel, grid: ["ceil_div(n, BLOCK)"]}
arguments:
  - {name: x, type: f32, shape: [n]}
  - {name: idx, type: i32, fill: {setup: make_index}}
  - {name: out, type: f32, shape: [n], role: out}
  - {name: n, type: i32, value: n}
  - {name: stride, type: i32, value: stride, pass: false}
sizes:
  - grid: {n: [256], stride: [1, 3]}
parameters: {BLOCK: [128], num_warps: [2]}
reference: {python: k.py, entry: ref}
measure: {warmup: 0ms, min_samples: 1, max_samples: 2, early_stop: 0}
)Y",
                        {{"k.py", kernel}});
}
