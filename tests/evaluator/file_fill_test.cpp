// `fill: {file: PATH}`: an argument's values from a NumPy .npy file or a
// raw one (Kernel Tuner's numpy arrays, a T1 file's BinaryRaw). The spec
// names the file, resolve_arguments checks its type and length at each
// size, and the worker's host buffers hold its bytes; a tune verifies a
// kernel against a reference that knows the file's values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "evaluator/detail/host_arguments.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/report.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using ::testing::HasSubstr;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

// An .npy file (format 1.0) as numpy.save writes one: the magic, the
// header's length, a dict padded with spaces to a multiple of 64 bytes and
// ending in a newline, then the data.
void write_npy(const fs::path& file, const std::string& descr, const std::string& shape, const void* data,
               std::size_t bytes, bool fortran = false) {
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr, fortran ? "True" : "False", shape);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(file, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

std::vector<float> halves(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) + 0.5f;
  return v;
}

const char* kKernel = R"(
extern "C" void copy(const float* x, float* y, int n) {
  for (int i = 0; i < n; i += BLOCK)
    for (int j = i; j < i + BLOCK && j < n; ++j) y[j] = x[j];
}
// What the file holds, known without reading it: a kernel that got other
// data fails the check.
extern "C" void expected(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = i + 0.5f;
}
)";

std::string spec_text(const std::string& fill, const std::string& n = "1000") {
  return fmt::format(R"(kernel: {{source: copy.cpp, entry: copy, language: c++}}
arguments:
  - {{name: x, type: f32, size: N, fill: {}}}
  - {{name: y, type: f32, size: N, role: out}}
  - {{name: n, type: i32, value: N}}
sizes: {{N: {}}}
parameters: {{BLOCK: [1, 8, 64]}}
reference: {{entry: expected}}
tolerance: {{atol: 0, rtol: 0}}
measure: {{min_samples: 2, max_samples: 3, max_time: 20ms, early_stop: off}}
)",
                     fill, n);
}

}  // namespace

TEST(FileFill, AnNpyFilesValuesReachTheKernelAndAreVerified) {
  const auto dir = fresh_dir();
  write_file(dir / "copy.cpp", kKernel);
  const std::vector<float> data = halves(1000);
  write_npy(dir / "x.npy", "<f4", "(1000,)", data.data(), data.size() * 4);
  write_file(dir / "spec.yaml", spec_text("{file: x.npy}"));
  const Spec spec = load_spec(dir / "spec.yaml");
  EXPECT_EQ(spec.arguments[0].fill, Fill::file);
  EXPECT_EQ(spec.arguments[0].fill_file, dir / "x.npy");

  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  ASSERT_EQ(report.sizes[0].trials.size(), 3u);
  for (const TrialRecord& t : report.sizes[0].trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    EXPECT_TRUE(t.verification.checked) << t.config.str();
  }

  // The same values from a raw file: its bytes as they are.
  std::ofstream(dir / "x.bin", std::ios::binary).write(reinterpret_cast<const char*>(data.data()), 4000);
  write_file(dir / "raw.yaml", spec_text("{file: x.bin}"));
  const TuneReport raw = tune(load_spec(dir / "raw.yaml"), opt);
  for (const TrialRecord& t : raw.sizes[0].trials) EXPECT_EQ(t.status, Status::ok) << t.error;
}

// A file whose values the argument cannot take is said at the fill, before
// anything runs.
TEST(FileFill, AFileThatDoesNotFitIsAnErrorAtTheFill) {
  const auto dir = fresh_dir();
  write_file(dir / "copy.cpp", kKernel);
  const std::vector<double> doubles(1000, 1.0);
  write_npy(dir / "f8.npy", "<f8", "(1000,)", doubles.data(), 8000);
  const std::vector<float> data = halves(1000);
  write_npy(dir / "short.npy", "<f4", "(10, 50)", data.data(), 2000);
  write_npy(dir / "fortran.npy", "<f4", "(10, 100)", data.data(), 4000, true);
  std::ofstream(dir / "x.bin", std::ios::binary).write(reinterpret_cast<const char*>(data.data()), 3996);
  write_file(dir / "bad.npy", "not numpy");

  auto error = [&](const std::string& fill) -> std::string {
    write_file(dir / "spec.yaml", spec_text(fill));
    try {
      const Spec spec = load_spec(dir / "spec.yaml");
      TuneOptions opt;
      opt.out_dir = dir / "out";
      (void)tune(spec, opt);
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().line, 3) << e.what();
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error("{file: f8.npy}"),
              HasSubstr("argument 'x' is filled from " + (dir / "f8.npy").string() +
                        ", which holds dtype '<f8', but the argument is f32 ('<f4' in NumPy)"));
  EXPECT_THAT(error("{file: short.npy}"), HasSubstr("which holds 500 elements, but the argument has 1000 here"));
  EXPECT_THAT(error("{file: fortran.npy}"), HasSubstr("which is in Fortran order"));
  EXPECT_THAT(error("{file: x.bin}"),
              HasSubstr("which is 3996 bytes, but the argument's 1000 elements of f32 are 4000"));
  EXPECT_THAT(error("{file: bad.npy}"), HasSubstr("which is not a NumPy .npy file"));
  EXPECT_THAT(error("{file: nothere.npy}"), HasSubstr("fill file 'nothere.npy' not found"));
  EXPECT_THAT(error("file"), HasSubstr("fill 'file' of argument 'x' needs a path: {file: data.npy}"));
}

// The worker side: the buffer holds the file's data, past an .npy header,
// and a file edited in place is new data (its stamp is in the signature).
TEST(FileFill, HostBuffersHoldTheFilesBytes) {
  const auto dir = fresh_dir();
  const std::vector<float> data = halves(16);
  write_npy(dir / "x.npy", "<f4", "(16,)", data.data(), 64);
  ArgumentSpec spec;
  spec.name = "x";
  spec.size = Expression::parse("16");
  spec.fill = Fill::file;
  spec.fill_file = dir / "x.npy";
  const std::vector<ResolvedArgument> args = resolve_arguments({spec}, {});
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].fill_offset, 128u);  // numpy pads its version 1 header to 128 bytes here
  detail::HostArguments host;
  EXPECT_TRUE(host.prepare(args, 1));
  EXPECT_EQ(std::memcmp(host.data(0), data.data(), 64), 0);
  EXPECT_FALSE(host.prepare(resolve_arguments({spec}, {}), 1));  // the same file: nothing read again

  std::vector<float> edited = data;
  edited[3] = -1;
  write_npy(dir / "x.npy", "<f4", "(16,)", edited.data(), 64);
  fs::last_write_time(dir / "x.npy", fs::last_write_time(dir / "x.npy") + std::chrono::seconds(10));
  EXPECT_TRUE(host.prepare(resolve_arguments({spec}, {}), 1));
  EXPECT_EQ(static_cast<const float*>(host.data(0))[3], -1.0f);
}
