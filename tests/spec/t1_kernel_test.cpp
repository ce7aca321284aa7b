// A Kernel Tuner T1 file with a KernelSpecification is a spec: the kernel,
// its launch and arguments as Kernel Tuner's tune_kernel_T1 reads them, and
// every mistake located in the file. The same file tuned on an OpenCL
// device: tests/tuner/opencl_t1_tune_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/t1.hpp"

using namespace tunekit;
using ::testing::Contains;
using ::testing::HasSubstr;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

// The shape of the benchmark hub's kernels/convolution_milo.json, with its
// GlobalSize that disagrees with GridDivX/Y as the hub's does, and without
// its constant-memory filter.
const std::string kConvolution = R"json({
  "General": {"BenchmarkName": "convolution", "OutputFormat": "JSON"},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": "[16, 32, 48, 64]", "Default": 16},
      {"Name": "block_size_y", "Type": "int", "Values": "[1, 2, 4, 8, 16]", "Default": 16},
      {"Name": "tile_size_x", "Type": "int", "Values": "[1, 2, 3, 4]", "Default": 1},
      {"Name": "tile_size_y", "Type": "int", "Values": "[1, 2, 3, 4]", "Default": 1},
      {"Name": "filter_width", "Type": "int", "Values": "[15]", "Default": [15]}
    ],
    "Conditions": [{"Parameters": ["block_size_x", "block_size_y"], "Expression": "block_size_x*block_size_y<=1024"}]
  },
  "Search": {"Name": "genetic_algorithm", "Attributes": [{"Name": "popsize", "Value": 10}, {"Name": "method", "Value": "uniform"}, {"Name": "maxiter", "Value": 30}]},
  "Budget": [{"Type": "ConfigurationCount", "BudgetValue": 50}],
  "KernelSpecification": {
    "Language": "CUDA",
    "CompilerOptions": ["-std=c++17"],
    "KernelName": "convolution_kernel",
    "KernelFile": "convolution.cu",
    "GlobalSizeType": "CUDA",
    "LocalSize": {"X": "block_size_x", "Y": "block_size_y", "Z": "1"},
    "GlobalSize": {"X": "(262144 // block_size_x) // tile_size_x", "Y": "(262144 // block_size_y) // tile_size_y", "Z": "1"},
    "GridDivX": ["block_size_x", "tile_size_x"],
    "GridDivY": ["block_size_y", "tile_size_y"],
    "ProblemSize": [4096, 2048],
    "SharedMemory": 0,
    "Arguments": [
      {"Name": "output_image", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
       "FillType": "Constant", "Size": "ProblemSize[0]*ProblemSize[1]", "FillValue": 0.0, "Output": 1},
      {"Name": "input_image", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
       "FillType": "Random", "Size": "(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[1]+max(filter_width)-1)",
       "FillValue": 1.0},
      {"Name": "scale", "Type": "float", "MemoryType": "Scalar", "FillValue": 0.5},
      {"Name": "count", "Type": "int32", "MemoryType": "Scalar", "FillValue": 7}
    ]
  }
})json";

class T1Kernel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir();
    write_file(dir_ / "convolution.cu", "__global__ void convolution_kernel(float*, const float*, float, int) {}\n");
  }
  Spec load(const std::string& text) {
    write_file(dir_ / "t1.json", text);
    return load_spec(dir_ / "t1.json");
  }
  // `text` with `from` replaced by `to` (once; the test fails if absent).
  static std::string with(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  }
  // The error of loading `text`: located at `line` (0: anywhere) of the T1
  // file, its message holding `message`.
  void expect_error(const std::string& text, int line, const std::string& message) {
    try {
      load(text);
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, (dir_ / "t1.json").string());
      if (line > 0) EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  }
  std::filesystem::path dir_;
};

std::vector<std::string> texts(const std::vector<Expression>& es) {
  std::vector<std::string> out;
  for (const auto& e : es) out.push_back(e.text());
  return out;
}

// The message of the error that loading `text` as a spec in `dir` gives,
// which must be at `line`; "no error" when it loads.
std::string load_error(const std::filesystem::path& dir, const std::string& text, int line) {
  write_file(dir / "s.yaml", text);
  try {
    load_spec(dir / "s.yaml");
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, line) << e.what();
    return e.what();
  }
  return "no error";
}

const ArgumentSpec& argument(const Spec& s, const std::string& name) {
  for (const auto& a : s.arguments)
    if (a.name == name) return a;
  throw std::runtime_error("no argument " + name);
}

}  // namespace

// An argument the file gives no AccessType (the benchmark hub's) is `in`,
// as before `scratch` existed: the role is in the spec's hash, and a T1
// kernel (CUDA, OpenCL) treats the two alike.
TEST_F(T1Kernel, AnArgumentWithoutAccessTypeStaysAnInput) {
  const std::string text = with(kConvolution, R"("AccessType": "ReadOnly",)", "");
  EXPECT_EQ(argument(load(text), "input_image").role, Role::in);
  EXPECT_EQ(argument(load(text), "input_image").fill, Fill::normal);  // the file's fill, as before
  EXPECT_EQ(argument(load(kConvolution), "input_image").role, Role::in);
}

TEST_F(T1Kernel, TheKernelItsLaunchAndItsArgumentsAreKernelTunersReading) {
  const Spec s = load(kConvolution);
  EXPECT_EQ(s.name, "convolution");
  EXPECT_EQ(s.kernel.language, "cuda");
  EXPECT_EQ(s.kernel.entry, "convolution_kernel");
  EXPECT_EQ(s.kernel.source, dir_ / "convolution.cu");
  // CompilerOptions are not read, as Kernel Tuner reads none (a warning
  // below says so).
  EXPECT_EQ(s.kernel.flags, backend_for_language("cuda").kernel.default_flags);
  EXPECT_EQ(s.kernel.injection, Injection::defines);
  ASSERT_EQ(s.parameters.size(), 5u);
  // The file's condition, and Kernel Tuner's on the block's threads.
  ASSERT_EQ(s.constraints.size(), 2u);
  EXPECT_EQ(s.constraints[1].text(), "block_size_x * block_size_y <= max_threads_per_block");
  EXPECT_EQ(s.size_names, (std::vector<std::string>{"problem_size_x", "problem_size_y"}));
  ASSERT_EQ(s.sizes.size(), 1u);
  EXPECT_EQ(s.sizes[0].at("problem_size_x"), Value(4096));
  EXPECT_EQ(s.sizes[0].at("problem_size_y"), Value(2048));

  // The grid is Kernel Tuner's, from ProblemSize and GridDivX/Y (its
  // GlobalSize, 64 times as large, is not read).
  EXPECT_EQ(texts(s.kernel.launch.grid),
            (std::vector<std::string>{"ceil_div(problem_size_x, int(block_size_x) * int(tile_size_x))",
                                      "ceil_div(problem_size_y, int(block_size_y) * int(tile_size_y))"}));
  EXPECT_EQ(texts(s.kernel.launch.block), (std::vector<std::string>{"block_size_x", "block_size_y", "1"}));
  EXPECT_FALSE(s.kernel.launch.shared_memory);

  // A WriteOnly buffer keeps its fill (as Kernel Tuner passes it); sizes
  // see a parameter as its list of values.
  const ArgumentSpec& out = argument(s, "output_image");
  EXPECT_EQ(out.role, Role::inout);
  EXPECT_EQ(out.fill, Fill::zeros);
  EXPECT_EQ(out.size->evaluate_int(s.sizes[0]), 4096 * 2048);
  const ArgumentSpec& in = argument(s, "input_image");
  EXPECT_EQ(in.role, Role::in);
  EXPECT_EQ(in.fill, Fill::normal);  // numpy.random.randn
  EXPECT_EQ(in.size->evaluate_int(s.sizes[0]), (4096 + 14) * (2048 + 14));
  const ArgumentSpec& scale = argument(s, "scale");
  EXPECT_EQ(scale.role, Role::scalar);
  EXPECT_EQ(scale.type, ElementType::f32);
  EXPECT_EQ(scale.value->evaluate(Bindings{}), Value(0.5));
  EXPECT_EQ(argument(s, "count").value->evaluate(Bindings{}), Value(7));
  EXPECT_EQ(argument(s, "count").type, ElementType::i32);

  // Each parameter's Default (the hub's key) is the default config.
  ASSERT_TRUE(s.default_config);
  EXPECT_EQ(
      s.default_config->str(),
      Config({{"block_size_x", 16}, {"block_size_y", 16}, {"tile_size_x", 1}, {"tile_size_y", 1}, {"filter_width", 15}})
          .str());
  // Search and Budget, with Kernel Tuner's strategy and option names: one
  // that means the same here is read under its name here, one that does not
  // is left out with a warning that says why.
  EXPECT_EQ(s.search.strategy, "genetic");
  ASSERT_EQ(s.search.options.size(), 1u);
  EXPECT_EQ(s.search.options[0].name, "population");
  EXPECT_EQ(s.search.options[0].value, Value(10));
  EXPECT_EQ(s.search.max_evaluations, 50u);
  ASSERT_EQ(s.warnings.size(), 3u);
  EXPECT_THAT(s.warnings[0], HasSubstr("t1.json:17:5: KernelSpecification.CompilerOptions is not read, as Kernel "
                                       "Tuner does not read it"));
  EXPECT_THAT(s.warnings[1], HasSubstr("t1.json:13:"));
  EXPECT_THAT(s.warnings[1], HasSubstr("Kernel Tuner's option 'method' is left out: 'crossover' stands for it here, "
                                       "but is the share of the differing parameters"));
  EXPECT_THAT(s.warnings[2], HasSubstr("Kernel Tuner's option 'maxiter' is left out: strategy 'genetic' has no such "
                                       "option"));
}

// `tunekit replay --t1` reads a T1 file's Search, Budget and KernelName
// alone, as a tune of the file reads them; the file may give a space alone.
TEST_F(T1Kernel, ItsSearchIsReadAloneAsATuneReadsIt) {
  const Spec s = load(kConvolution);
  const T1Search t = load_t1_search(dir_ / "t1.json");
  EXPECT_TRUE(t.has_search);
  EXPECT_EQ(t.search.strategy, s.search.strategy);
  EXPECT_EQ(t.search.strategy_alias, "genetic_algorithm");
  ASSERT_EQ(t.search.options.size(), 1u);
  EXPECT_EQ(t.search.options[0].name, "population");
  EXPECT_EQ(t.search.max_evaluations, s.search.max_evaluations);
  EXPECT_EQ(t.search.max_evaluations_where.str(), s.search.max_evaluations_where.str());
  ASSERT_EQ(t.search_warnings.size(), 2u);
  EXPECT_EQ(t.search_warnings[0], s.warnings[1]);
  EXPECT_TRUE(t.budget_warnings.empty());
  EXPECT_EQ(t.kernel_name, "convolution_kernel");
  EXPECT_EQ(t.kernel_name_where.line, 18);
  // A space alone: no search, the defaults.
  write_file(
      dir_ / "space.json",
      R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2]"}], "Conditions": []}})");
  const T1Search bare = load_t1_search(dir_ / "space.json");
  EXPECT_FALSE(bare.has_search);
  EXPECT_EQ(bare.search.strategy, "auto");
  EXPECT_FALSE(bare.search.max_evaluations);
  EXPECT_TRUE(bare.kernel_name.empty());
}

// Kernel Tuner's `restart` of its hillclimbers (first or best improvement)
// is not local's: under Kernel Tuner's name it is left out with a warning
// that says what it means there, as an option with no counterpart is; under
// local's own name it is local's.
TEST_F(T1Kernel, KernelTunersRestartIsLeftOutNotTakenForLocals) {
  const std::string search =
      R"({"Name": "genetic_algorithm", "Attributes": [{"Name": "popsize", "Value": 10}, {"Name": "method", "Value": "uniform"}, {"Name": "maxiter", "Value": 30}]})";
  const Spec theirs = load(
      with(kConvolution, search, R"({"Name": "greedy_ils", "Attributes": [{"Name": "restart", "Value": false}]})"));
  EXPECT_EQ(theirs.search.strategy, "local");
  EXPECT_TRUE(theirs.search.options.empty());
  EXPECT_THAT(theirs.warnings, Contains(HasSubstr("Kernel Tuner's option 'restart' is left out: it has no counterpart "
                                                  "in strategy 'local' (it chooses a descent's moves")));
  const Spec ours =
      load(with(kConvolution, search, R"({"Name": "local", "Attributes": [{"Name": "restart", "Value": false}]})"));
  ASSERT_EQ(ours.search.options.size(), 1u);
  EXPECT_EQ(ours.search.options[0].name, "restart");
}

// Kernel Tuner defines block_size_x/y/z, grid_size_x/y/z and kernel_tuner
// for the kernels written for it; a parameter reaches the build as itself.
TEST_F(T1Kernel, EachBuildGetsKernelTunersMacrosAtItsSize) {
  const Spec s = load(kConvolution);
  const Config c(
      {{"block_size_x", 48}, {"block_size_y", 4}, {"tile_size_x", 3}, {"tile_size_y", 2}, {"filter_width", 15}});
  const BuildInput in = make_build_input(s, "", c, s.sizes[0]);
  const std::vector<std::string> expected{"block_size_x=48", "block_size_y=4", "tile_size_x=3",  "tile_size_y=2",
                                          "filter_width=15", "grid_size_x=29", "block_size_z=1", "grid_size_y=256",
                                          "grid_size_z=1",   "kernel_tuner=1"};
  std::vector<std::string> got = in.defines, want = expected;
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);  // 4096 / (48 * 3) = 28.4 blocks: 29
  EXPECT_EQ(in.size, s.sizes[0]);
}

// Kernel Tuner's cmem_args: the hub's "MemType": "Constant" (or the schema's
// MemoryType Symbol) is CUDA constant memory; in OpenCL a __constant
// argument is a buffer like any other.
TEST_F(T1Kernel, ConstantMemoryIsASymbolInCudaAndABufferInOpenCl) {
  const std::string text =
      with(kConvolution, R"("AccessType": "ReadOnly",)", R"("AccessType": "ReadOnly", "MemType": "Constant",)");
  EXPECT_TRUE(argument(load(text), "input_image").constant_memory);
  EXPECT_TRUE(argument(load(text), "input_image").passed);  // as tune_kernel_T1 passes it
  EXPECT_FALSE(argument(load(text), "output_image").constant_memory);
  write_file(dir_ / "convolution.cl", "__kernel void convolution_kernel() {}\n");
  std::string opencl =
      with(with(text, R"("Language": "CUDA")", R"("Language": "OpenCL")"), "convolution.cu", "convolution.cl");
  EXPECT_FALSE(argument(load(opencl), "input_image").constant_memory);
  expect_error(with(opencl, R"("MemType": "Constant",)", R"("MemoryType": "Symbol",)"), 0,
               "duplicate key 'MemoryType'");
  opencl = with(opencl, R"("MemoryType": "Vector", "AccessType": "ReadOnly", "MemType": "Constant",)",
                R"("MemoryType": "Symbol", "AccessType": "ReadOnly",)");
  expect_error(opencl, 30, "argument 'input_image': a Symbol (constant memory) applies to cuda kernels, not opencl");
}

// A BinaryRaw argument's values are its DataSource's bytes (beside the file).
TEST_F(T1Kernel, ABinaryRawArgumentIsFilledFromItsDataSource) {
  write_file(dir_ / "image.bin", "");
  const Spec s =
      load(with(kConvolution, R"("FillType": "Random")", R"("FillType": "BinaryRaw", "DataSource": "image.bin")"));
  EXPECT_EQ(argument(s, "input_image").fill, Fill::file);
  EXPECT_EQ(argument(s, "input_image").fill_file, dir_ / "image.bin");
}

// Kernel Tuner's launch, whatever GlobalSize and LocalSize say: the block is
// the block_size parameters (else 256 threads in x), the grid ProblemSize
// over GridDiv's entries, each truncated to an integer, or over the block
// where GridDiv is absent or empty.
TEST_F(T1Kernel, TheLaunchIsKernelTunersWhateverGlobalAndLocalSizeSay) {
  const Config c(
      {{"block_size_x", 48}, {"block_size_y", 4}, {"tile_size_x", 3}, {"tile_size_y", 2}, {"filter_width", 15}});
  auto define = [&](const Spec& s, const std::string& name) {
    for (const std::string& d : make_build_input(s, "", c, s.sizes[0]).defines)
      if (d.rfind(name + "=", 0) == 0) return d.substr(name.size() + 1);
    return std::string("none");
  };
  std::string text = with(kConvolution, R"("GridDivX": ["block_size_x", "tile_size_x"],)", "");
  text = with(text, R"("GridDivY": ["block_size_y", "tile_size_y"],)", R"("GridDivY": [],)");
  const Spec s = load(text);
  EXPECT_EQ(texts(s.kernel.launch.grid), (std::vector<std::string>{"ceil_div(problem_size_x, block_size_x)",
                                                                   "ceil_div(problem_size_y, block_size_y)"}));
  EXPECT_EQ(define(s, "grid_size_x"), "86");  // 4096 / 48, rounded up
  EXPECT_EQ(define(s, "grid_size_y"), "512");

  // int(block_size_x / 32) at 48 is 1, as int(eval(...)) there.
  const Spec truncated = load(
      with(kConvolution, R"("GridDivX": ["block_size_x", "tile_size_x"],)", R"("GridDivX": ["block_size_x/32"],)"));
  EXPECT_EQ(define(truncated, "grid_size_x"), "4096");

  // LocalSize is not read where a block_size parameter gives the block, and
  // the warning says so.
  const Spec local =
      load(with(kConvolution, R"("X": "block_size_x", "Y": "block_size_y")", R"("X": "64", "Y": "block_size_y")"));
  EXPECT_EQ(texts(local.kernel.launch.block), (std::vector<std::string>{"block_size_x", "block_size_y", "1"}));
  EXPECT_THAT(local.warnings, Contains(HasSubstr("t1.json:21:25: LocalSize.X is not read: the block's X is the "
                                                 "parameter block_size_x, as Kernel Tuner launches it")));
  // Without a block_size_x parameter and without LocalSize: Kernel Tuner's 256.
  std::string renamed = with(kConvolution, R"("LocalSize": {"X": "block_size_x", "Y": "block_size_y", "Z": "1"},)", "");
  renamed = with(renamed, R"({"Name": "block_size_x",)", R"({"Name": "bx",)");
  renamed =
      with(renamed, R"("Expression": "block_size_x*block_size_y<=1024")", R"("Expression": "bx*block_size_y<=1024")");
  renamed = with(renamed, R"("GridDivX": ["block_size_x", "tile_size_x"],)", R"("GridDivX": ["bx", "tile_size_x"],)");
  renamed = with(renamed, R"(["block_size_x", "block_size_y"])", R"(["bx", "block_size_y"])");
  const Spec kt_default = load(renamed);
  EXPECT_EQ(texts(kt_default.kernel.launch.block), (std::vector<std::string>{"256", "block_size_y", "1"}));
  EXPECT_EQ(kt_default.constraints.back().text(), "block_size_y <= max_threads_per_block");

  // A file without ProblemSize, which Kernel Tuner cannot run: the schema's
  // GlobalSize, in blocks for GlobalSizeType CUDA, in threads for OpenCL.
  std::string schema = with(kConvolution, R"("ProblemSize": [4096, 2048],)", "");
  schema = with(schema, R"("GridDivX": ["block_size_x", "tile_size_x"],)", "");
  schema = with(schema, R"("GridDivY": ["block_size_y", "tile_size_y"],)", "");
  schema = with(schema, R"("ProblemSize[0]*ProblemSize[1]")", R"("4096*2048")");
  schema = with(schema, R"x("(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[1]+max(filter_width)-1)")x", "4110");
  const Spec blocks = load(schema);
  EXPECT_EQ(texts(blocks.kernel.launch.grid),
            (std::vector<std::string>{"(262144 // block_size_x) // tile_size_x",
                                      "(262144 // block_size_y) // tile_size_y", "1"}));
  const Spec threads = load(with(schema, R"("GlobalSizeType": "CUDA")", R"("GlobalSizeType": "OpenCL")"));
  EXPECT_EQ(
      texts(threads.kernel.launch.grid),
      (std::vector<std::string>{"ceil_div((262144 // block_size_x) // tile_size_x, block_size_x)",
                                "ceil_div((262144 // block_size_y) // tile_size_y, block_size_y)", "ceil_div(1, 1)"}));
  expect_error(with(schema, R"("SharedMemory": 0,)", R"("SharedMemory": 0, "GridDivX": ["block_size_x"],)"), 26,
               "GridDivX/Y/Z divide KernelSpecification.ProblemSize, which the file does not give");
}

// Values as Kernel Tuner makes them: an argument's Size and an integer
// Scalar truncated to integers; the hub's Misc, which nothing reads, taken
// with a warning.
TEST_F(T1Kernel, SizesAndScalarsAreTruncatedAsThere) {
  std::string text = with(kConvolution, R"("Size": "ProblemSize[0]*ProblemSize[1]")", R"("Size": "ProblemSize[0]/3")");
  text = with(text, R"("FillValue": 7)", R"("FillValue": 7.9)");
  text = with(text, R"("SharedMemory": 0,)", R"("SharedMemory": 0, "Misc": {"jitify": true},)");
  const Spec s = load(text);
  EXPECT_EQ(argument(s, "output_image").size->evaluate_int(s.sizes[0]), 1365);
  EXPECT_EQ(argument(s, "count").value->evaluate(Bindings{}), Value(7));
  EXPECT_THAT(s.warnings, Contains(HasSubstr("t1.json:26:24: KernelSpecification.Misc is not read")));
}

// Budget as Kernel Tuner reads it: its first entry only, over the options'
// max_fevals, time_limit and fraction of its other kinds; without any, the
// stop of Kernel Tuner's strategy where that is a count.
TEST_F(T1Kernel, TheBudgetIsKernelTunersFirstEntryOverItsOptions) {
  std::string text =
      with(kConvolution, R"({"Name": "maxiter", "Value": 30})", R"({"Name": "max_fevals", "Value": 30})");
  text = with(text, R"([{"Type": "ConfigurationCount", "BudgetValue": 50}])",
              R"([{"Type": "TuningDuration", "BudgetValue": 60}, {"Type": "ConfigurationCount", "BudgetValue": 5}])");
  const Spec s = load(text);
  EXPECT_EQ(s.search.max_evaluations, 30u);
  ASSERT_TRUE(s.search.max_time);
  EXPECT_EQ(s.search.max_time->count(), 60);
  EXPECT_THAT(s.warnings, Contains(HasSubstr("Budget[1] is not read: Kernel Tuner reads the first Budget only")));

  std::string bare = with(kConvolution, R"(  "Budget": [{"Type": "ConfigurationCount", "BudgetValue": 50}],
)",
                          "");
  bare = with(
      bare,
      R"({"Name": "genetic_algorithm", "Attributes": [{"Name": "popsize", "Value": 10}, {"Name": "method", "Value": "uniform"}, {"Name": "maxiter", "Value": 30}]})",
      R"({"Name": "random_sample"})");
  EXPECT_EQ(load(bare).search.max_fraction, 0.1);
  const Spec greedy = load(with(bare, "random_sample", "greedy_ils"));
  EXPECT_EQ(greedy.search.max_evaluations, 100u);
  EXPECT_FALSE(load(with(bare, "random_sample", "brute_force")).search.max_evaluations);
  const Spec genetic = load(with(bare, "random_sample", "genetic_algorithm"));
  EXPECT_FALSE(genetic.search.max_evaluations);
  EXPECT_FALSE(genetic.search.max_fraction);
  EXPECT_THAT(genetic.warnings, Contains(HasSubstr("no Budget: Kernel Tuner's genetic_algorithm stops after its own "
                                                   "iterations")));
  const Spec fraction = load(with(bare, R"({"Name": "random_sample"})",
                                  R"({"Name": "random_sample", "Attributes": [{"Name": "fraction", "Value": 0.25}]})"));
  EXPECT_EQ(fraction.search.max_fraction, 0.25);
}

TEST_F(T1Kernel, WhatItCannotRunIsAnErrorAtItsLine) {
  // Lines of kConvolution: Search 13, Budget 14, Language 16, KernelFile
  // 19, LocalSize 21, SharedMemory 26; output_image 28, input_image 30,
  // scale 33.
  expect_error(with(kConvolution, R"("Language": "CUDA")", R"("Language": "Vulkan")"), 16,
               "Language 'Vulkan' has no tunekit backend here; a T1 kernel is one of CUDA, OpenCL");
  expect_error(with(kConvolution, R"("KernelFile": "convolution.cu")", R"("KernelFile": "conv.cu")"), 19,
               "KernelFile 'conv.cu' not found (looked for " + (dir_ / "conv.cu").string() + ", " +
                   (dir_.parent_path() / "conv.cu").string() + " or " +
                   (std::filesystem::current_path() / "conv.cu").string() + ")");
  expect_error(with(kConvolution, R"("FillType": "Random")", R"("FillType": "BinaryHDF")"), 31,
               "argument 'input_image': FillType 'BinaryHDF' is not supported");
  expect_error(with(kConvolution, R"("FillType": "Random")", R"("FillType": "BinaryRaw")"), 30,
               "argument 'input_image' has FillType BinaryRaw but no DataSource (the file)");
  expect_error(
      with(kConvolution, R"("AccessType": "WriteOnly",)", R"("AccessType": "WriteOnly", "MemType": "Constant",)"), 28,
      "argument 'output_image' is in constant memory, which a kernel only reads: its AccessType must be "
      "ReadOnly");
  expect_error(
      with(kConvolution, R"("Type": "float", "MemoryType": "Scalar")", R"("Type": "float4", "MemoryType": "Scalar")"),
      33, "argument 'scale': Type 'float4' is not one tunekit fills");
  expect_error(with(kConvolution, R"("FillValue": 0.5)", R"("Size": 1)"), 33,
               "argument 'scale' is a Scalar: its value is FillValue, which it lacks");
  expect_error(with(kConvolution, "*ProblemSize[1]", "*ProblemSize[2]"), 29,
               "'ProblemSize[2]', but KernelSpecification.ProblemSize has 2 entries");
  expect_error(with(kConvolution, R"("SharedMemory": 0,)", R"("SharedMemory": 0, "ReferenceArguments": [],)"), 26,
               "ReferenceArguments are not read");
  expect_error(with(kConvolution, R"("LocalSize")", R"("LocalSiz")"), 21,
               "unknown key \"LocalSiz\" in KernelSpecification (known: Device, ");
  expect_error(with(kConvolution, R"("genetic_algorithm")", R"("genetic_algorythm")"), 13, "genetic_algorythm");
  expect_error(with(kConvolution, R"("ConfigurationCount")", R"("ConfigurationCounts")"), 14,
               "did you mean 'ConfigurationCount'?");
  // A parameter named like a macro Kernel Tuner defines would be defined twice.
  expect_error(with(kConvolution, R"("Name": "filter_width")", R"("Name": "grid_size_y")"), 0,
               "has the name of a macro Kernel Tuner defines for its kernels (grid_size_y)");
}

// A KernelFile not found names each place looked in once, at the key's line:
// run from the T1 file's folder, that folder and the working directory are
// one place; an absolute path is the only place, named once.
TEST_F(T1Kernel, AKernelFileNotFoundNamesEachPlaceOnce) {
  const auto was = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  const std::string here = (dir_ / "conv.cu").string();
  expect_error(
      with(kConvolution, R"("KernelFile": "convolution.cu")", R"("KernelFile": "conv.cu")"), 19,
      "KernelFile 'conv.cu' not found (looked for " + here + " or " + (dir_.parent_path() / "conv.cu").string() + ")");
  std::filesystem::current_path(was);
  const std::string absolute = (dir_ / "gone" / "conv.cu").string();
  try {
    load(with(kConvolution, R"("KernelFile": "convolution.cu")", R"("KernelFile": ")" + absolute + "\""));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, (dir_ / "t1.json").string());
    EXPECT_EQ(e.where().line, 19);
    EXPECT_EQ(e.message(), "KernelFile '" + absolute + "' not found");
  }
}

// The spec's own key, Kernel Tuner's `defines`: evaluated per variant at its
// size, refused where it would clash or name nothing.
TEST(KernelDefines, AreEvaluatedPerVariantAtItsSize) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cu", "__global__ void k(float* x, int n) {}\n");
  const std::string head = R"yaml(kernel:
  source: k.cu
  entry: k
  language: cuda
  grid: ["ceil_div(N, BS)"]
  block: [BS]
)yaml";
  const std::string rest = R"(arguments:
  - {name: x, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: [{N: 1000}, {N: 4096}]
parameters: {BS: [64, 128]}
)";
  write_file(dir / "ok.yaml", head + "  defines: {grid_size_x: \"ceil_div(N, BS)\", HALF: \"BS // 2\"}\n" + rest);
  const Spec s = load_spec(dir / "ok.yaml");
  const BuildInput at_1000 = make_build_input(s, "", Config({{"BS", 128}}), s.sizes[0]);
  EXPECT_EQ(at_1000.defines, (std::vector<std::string>{"BS=128", "grid_size_x=8", "HALF=64"}));
  const BuildInput at_4096 = make_build_input(s, "", Config({{"BS", 128}}), s.sizes[1]);
  EXPECT_EQ(at_4096.defines, (std::vector<std::string>{"BS=128", "grid_size_x=32", "HALF=64"}));
  EXPECT_NE(at_1000.hash(), at_4096.hash());

  EXPECT_THAT(load_error(dir, head + "  defines: {BS: \"N\"}\n" + rest, 7),
              HasSubstr("define 'BS' is a tuned parameter"));
  EXPECT_THAT(load_error(dir, head + "  defines: {G: \"ceil_div(M, BS)\"}\n" + rest, 7),
              HasSubstr("define 'G': 'M' is neither a size nor a parameter; did you mean 'N'?"));
  write_file(dir / "cpu.cpp", "void f(float* x) {}\n");
  write_file(dir / "host.yaml", R"(kernel: {source: cpu.cpp, entry: f, defines: {A: 1}}
arguments: [{name: x, type: f32, size: 4}]
)");
  EXPECT_NO_THROW(load_spec(dir / "host.yaml"));  // a host build takes -D too
  // A Triton kernel takes its parameters as constexprs: a define would reach
  // no code.
  write_file(dir / "k.py", "def k(x):\n    pass\n");
  const std::string triton = load_error(
      dir, "kernel: {language: triton, source: k.py, entry: k, grid: [1], defines: {A: 1}}\narguments: []\n", 1);
  EXPECT_THAT(triton, HasSubstr("'defines' applies to kernels whose build takes -D values ("));
  EXPECT_THAT(triton, HasSubstr("), not triton"));
}

// `memory: constant` (Kernel Tuner's cmem_args): a CUDA input's, refused
// where a kernel could not read it so.
TEST(ConstantMemory, IsACudaInputsAndSaidWhereItCannotBe) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cu", "__constant__ float f[9];\n__global__ void k(float* x) {}\n");
  write_file(dir / "k.cl", "__kernel void k(__global float* x, __constant float* f) {}\n");
  auto spec = [&](const std::string& language, const std::string& filter) {
    return "kernel: {source: k." + std::string(language == "cuda" ? "cu" : "cl") + ", entry: k, language: " + language +
           ", grid: [1], block: [32]}\narguments:\n  - {name: x, type: f32, size: 32, role: out}\n  - " + filter + "\n";
  };
  auto error = [&](const std::string& text) { return load_error(dir, text, 4); };
  write_file(dir / "ok.yaml", spec("cuda", "{name: f, type: f32, size: 9, memory: constant}"));
  EXPECT_TRUE(load_spec(dir / "ok.yaml").arguments.back().constant_memory);
  EXPECT_FALSE(load_spec(dir / "ok.yaml").arguments.back().passed);  // the symbol alone, as cmem_args
  write_file(dir / "passed.yaml", spec("cuda", "{name: f, type: f32, size: 9, memory: constant, pass: true}"));
  EXPECT_TRUE(load_spec(dir / "passed.yaml").arguments.back().passed);
  EXPECT_THAT(error(spec("cuda", "{name: f, type: f32, size: 9, pass: false}")),
              HasSubstr("'shape', 'pass' and 'fill: {setup: ...}' apply to triton kernels, not cuda (and 'pass' to an "
                        "argument in constant memory)"));
  EXPECT_THAT(error(spec("opencl", "{name: f, type: f32, size: 9, memory: constant}")),
              HasSubstr("argument 'f': 'memory: constant' applies to cuda kernels, not opencl (an OpenCL __constant "
                        "argument is a buffer like any other)"));
  EXPECT_THAT(error(spec("cuda", "{name: f, type: f32, size: 9, role: inout, memory: constant}")),
              HasSubstr("argument 'f' is in constant memory, which a kernel only reads: its role must be 'in', not "
                        "'inout'"));
  EXPECT_THAT(error(spec("cuda", "{name: f, type: f32, value: 1, memory: constant}")),
              HasSubstr("argument 'f' is a scalar (it has 'value'); 'memory' applies to buffers only"));
  EXPECT_THAT(error(spec("cuda", "{name: f, type: f32, size: 9, memory: shared}")),
              HasSubstr("bad value 'shared' for 'arguments[1].memory': expected one of global, constant"));
}

// `tunekit space` reads a T1 file through the function `tunekit tune` reads
// its space with (load_t1), which checks the keys of every section: a
// misspelt one is the same error, at the key, whichever command reads it.
TEST_F(T1Kernel, SpaceAndTuneRefuseAMisspeltKeyAlike) {
  const std::pair<std::string, std::string> typos[] = {{"KernelName", "KernelNmae"},
                                                       {"AccessType", "AccesType"},
                                                       {"Attributes", "Atributes"},
                                                       {"BudgetValue", "BudgetVal"}};
  for (const auto& [key, typo] : typos) {
    write_file(dir_ / "t1.json", with(kConvolution, "\"" + key + "\"", "\"" + typo + "\""));
    std::string tune_error = "no error", space_error = "no error";
    try {
      load_spec(dir_ / "t1.json");
    } catch (const InputError& e) {
      tune_error = e.what();
    }
    try {
      load_space_file(dir_ / "t1.json");
    } catch (const InputError& e) {
      space_error = e.what();
    }
    EXPECT_EQ(space_error, tune_error) << typo;
    EXPECT_THAT(space_error, HasSubstr("unknown key \"" + typo + "\"")) << typo;
    EXPECT_THAT(space_error, HasSubstr("did you mean \"" + key + "\"?")) << typo;
  }
  // At the key, not its value.
  expect_error(with(kConvolution, R"("KernelName")", R"("KernelNmae")"), 18, ":18:5: unknown key \"KernelNmae\"");
}

// KernelSpecification's Device and Profiling: Device.Name is the device the
// file was written for (checked when the tune starts: tests/tuner); the
// rest is said to be left out where it asks for what tunekit does not do.
TEST_F(T1Kernel, DeviceAndProfilingAreReadOrSaidToBeLeftOut) {
  const std::string language = R"("Language": "CUDA",)";
  Spec s =
      load(with(kConvolution, language,
                R"("Device": {"Name": "NVIDIA A100-PCIE-40GB", "PlatformId": 0, "DeviceId": 1}, "Profiling": true,)"
                R"( "SimulationInput": "cache.json", "Stream": null, "Language": "CUDA",)"));
  EXPECT_EQ(s.intended_device, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(s.intended_device_where.str(), (dir_ / "t1.json").string() + ":16:25");
  const std::string at = (dir_ / "t1.json").string() + ":16:";
  // DeviceId picks the device (tune checks it against the devices there are).
  EXPECT_EQ(s.device, 1);
  EXPECT_EQ(s.device_where.str(), at + "78");
  EXPECT_THAT(s.warnings, Contains(HasSubstr(at + "95: KernelSpecification.Profiling is not read: tunekit times each "
                                                  "config (the spec's measure settings) and collects no profiler "
                                                  "counters")));
  EXPECT_THAT(s.warnings, Contains(HasSubstr(at + "121: KernelSpecification.SimulationInput is not read")));
  for (const std::string& w : s.warnings) {
    EXPECT_THAT(w, ::testing::Not(HasSubstr("Device.PlatformId"))) << "0 is the platform tunekit numbers from";
    EXPECT_THAT(w, ::testing::Not(HasSubstr("DeviceId"))) << "read, not warned of";
    EXPECT_THAT(w, ::testing::Not(HasSubstr("KernelSpecification.Stream"))) << "null asks for nothing";
  }
  // false asks for what tunekit does; a Profiling of another type is refused.
  s = load(with(kConvolution, language, R"("Device": {"Name": "A100"}, "Profiling": false, "Language": "CUDA",)"));
  EXPECT_EQ(s.intended_device, "A100");
  EXPECT_FALSE(s.device) << "no DeviceId: the tune's own";
  s = load(with(kConvolution, language, R"("Device": {"PlatformId": 1}, "Language": "CUDA",)"));
  EXPECT_THAT(s.warnings, Contains(HasSubstr(at + "30: KernelSpecification.Device.PlatformId is not read: tunekit "
                                                  "numbers the devices of every platform in one list")));
  for (const std::string& w : s.warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("KernelSpecification.Profiling")));
  expect_error(with(kConvolution, language, R"("Profiling": "yes", "Language": "CUDA",)"), 16,
               "'KernelSpecification.Profiling' must be true or false, got 'yes'");
  expect_error(with(kConvolution, language, R"("Device": {"Nmae": "A100"}, "Language": "CUDA",)"), 16,
               "unknown key \"Nmae\" in KernelSpecification.Device (known: PlatformId, DeviceId, Name); did you mean "
               "\"Name\"?");
}
