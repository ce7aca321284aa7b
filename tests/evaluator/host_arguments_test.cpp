#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <cstring>
#include <vector>

#include "evaluator/detail/host_arguments.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using tunekit::detail::HostArguments;
namespace fs = std::filesystem;

namespace {

std::vector<ResolvedArgument> split_k_args(std::uint64_t workspace) {
  return {{"A", ElementType::f32, Role::in, 1000, Fill::random, 0, {}, {}},
          {"C", ElementType::f32, Role::out, 100, Fill::zeros, 0, {}, {}},
          {"work", ElementType::f32, Role::scratch, workspace, Fill::zeros, 0, {}, {}},
          {"acc", ElementType::f32, Role::inout, 10, Fill::random, 0, {}, {}}};
}

}  // namespace

// A config that resizes only its scratch buffer (split-K) must leave the
// other buffers, and their device copies, alone: regenerating gigabytes of
// inputs per config made a flash-decoding tune take 1.4 s per trial.
TEST(HostArguments, ResizingOneBufferRegeneratesOnlyThatOne) {
  HostArguments host;
  EXPECT_TRUE(host.prepare(split_k_args(100), 7));
  const auto a0 = host.version(0), c0 = host.version(1), w0 = host.version(2), acc0 = host.version(3);
  std::vector<std::byte> a_before(static_cast<std::byte*>(host.data(0)), static_cast<std::byte*>(host.data(0)) + 4000);

  EXPECT_TRUE(host.prepare(split_k_args(400), 7));
  EXPECT_EQ(host.version(0), a0);
  EXPECT_EQ(host.version(1), c0);
  EXPECT_EQ(host.version(3), acc0);
  EXPECT_NE(host.version(2), w0);
  EXPECT_EQ(host.bytes(2), 1600u);
  EXPECT_EQ(std::memcmp(host.data(0), a_before.data(), a_before.size()), 0);

  const auto w1 = host.version(2);
  EXPECT_FALSE(host.prepare(split_k_args(400), 7));  // nothing changed
  EXPECT_EQ(host.version(2), w1);

  EXPECT_TRUE(host.prepare(split_k_args(400), 8));  // another seed: everything anew
  EXPECT_NE(host.version(0), a0);
  EXPECT_NE(std::memcmp(host.data(0), a_before.data(), a_before.size()), 0);
}

TEST(HostArguments, ResetRestoresInoutAndPoisonsOutputs) {
  HostArguments host;
  host.prepare(split_k_args(100), 3);
  std::vector<float> acc(static_cast<float*>(host.data(3)), static_cast<float*>(host.data(3)) + 10);
  static_cast<float*>(host.data(3))[4] = 123.0f;
  static_cast<float*>(host.data(1))[0] = 1.0f;
  host.reset();
  EXPECT_EQ(static_cast<float*>(host.data(3))[4], acc[4]);
  EXPECT_TRUE(std::isnan(static_cast<float*>(host.data(1))[0]));
}

// Item 9: a buffer that cannot be allocated is an error naming the argument,
// and is not remembered as made: the next request with the same arguments
// fails the same way instead of running with a null buffer.
TEST(HostArguments, AFailedAllocationNamesTheArgumentAndIsNotRemembered) {
  // 2^61 floats: more than any machine has, and no overflow of 64 bits.
  std::vector<ResolvedArgument> args{{"x", ElementType::f32, Role::in, std::uint64_t{1} << 61, Fill::zeros, 0, {}, {}},
                                     {"y", ElementType::f32, Role::out, 16, Fill::zeros, 0, {}, {}}};
  HostArguments h;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      h.prepare(args, 1);
      FAIL() << "attempt " << attempt << ": the allocation succeeded";
    } catch (const tunekit::detail::AllocationError& e) {
      EXPECT_NE(std::string(e.what()).find("argument 'x'"), std::string::npos) << e.what();
      // More than the machine's memory and swap: no retry can allocate it.
      EXPECT_NE(std::string(e.what()).find("more than this machine's memory and swap"), std::string::npos) << e.what();
      EXPECT_TRUE(e.never_fits);
    }
  }
  // A count whose bytes overflow 64 bits is said as such.
  args[0].count = std::uint64_t{1} << 63;
  try {
    h.prepare(args, 1);
    FAIL() << "the allocation succeeded";
  } catch (const tunekit::detail::AllocationError& e) {
    EXPECT_NE(std::string(e.what()).find("overflow 64 bits"), std::string::npos) << e.what();
    EXPECT_TRUE(e.never_fits);
  }
  args[0].count = 16;
  EXPECT_TRUE(h.prepare(args, 1));
  EXPECT_NE(h.data(0), nullptr);
}

// The reference's outputs are read once per file and kept (a 4096 x 4096
// GEMM's took 30 ms to read again for each trial); every output is still
// compared, each with its own part of the file.
TEST(HostArguments, VerifyComparesEachOutputWithItsPartOfTheReference) {
  const auto dir = tunekit::testing::fresh_dir();
  HostArguments host;
  host.prepare(split_k_args(100), 3);
  const std::string first = (dir / "first.bin").string(), second = (dir / "second.bin").string();
  ASSERT_EQ(host.save_outputs(first), "");
  EXPECT_TRUE(host.verify(first, {0, 0}).passed);
  EXPECT_TRUE(host.verify(first, {0, 0}).passed);  // from the kept copy

  static_cast<float*>(host.data(3))[2] += 1.0f;  // acc, the second output
  Verification v = host.verify(first, {0, 0});
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("acc: 1 of 10"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("[2]"), std::string::npos) << v.detail;

  // Another file is read, not the copy kept of the first.
  ASSERT_EQ(host.save_outputs(second), "");
  EXPECT_TRUE(host.verify(second, {0, 0}).passed);
  EXPECT_FALSE(host.verify(first, {0, 0}).passed);

  static_cast<float*>(host.data(1))[99] = -5.0f;  // C, the first output: its last element
  v = host.verify(second, {0, 0});
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("C: 1 of 100"), std::string::npos) << v.detail;

  v = host.verify((dir / "missing.bin").string(), {0, 0});
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("reference outputs unreadable"), std::string::npos) << v.detail;
}

// The file packs the outputs; each is compared from an aligned copy (a
// 3-element bfloat16 output puts the next one 6 bytes into the file).
TEST(HostArguments, VerifyReadsOutputsOfOddSizesEachFromItsOwnPlace) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::vector<ResolvedArgument> args{{"small", ElementType::bf16, Role::out, 3, Fill::zeros, 0, {}, {}},
                                           {"wide", ElementType::f64, Role::out, 5, Fill::zeros, 0, {}, {}}};
  HostArguments host;
  host.prepare(args, 1);
  auto* wide = static_cast<double*>(host.data(1));
  for (int i = 0; i < 5; ++i) wide[i] = 0.5 * i;
  std::memset(host.data(0), 0, 6);
  const std::string ref = (dir / "ref.bin").string();
  ASSERT_EQ(host.save_outputs(ref), "");
  EXPECT_TRUE(host.verify(ref, {0, 0}).passed);
  wide[4] = 7.0;
  const Verification v = host.verify(ref, {0, 0});
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("wide: 1 of 5 elements differ; first at [4]: got 7, expected 2"), std::string::npos)
      << v.detail;
}

// Outputs cut short (a full disk; here a file size limit) leave no part of
// the file behind, which would fill the disk further at every rerun, and
// the error says why.
TEST(HostArguments, SavingOutputsCutShortLeavesNoPartBehind) {
  const auto dir = tunekit::testing::fresh_dir();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    HostArguments host;
    host.prepare({{"C", ElementType::f32, Role::out, 1 << 20, Fill::zeros, 0, {}, {}}}, 1);
    const rlimit small{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const std::string error = host.save_outputs((dir / "ref.bin").string());
    ::_exit(error.find("File too large") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the error does not say why";
  EXPECT_TRUE(fs::is_empty(dir)) << "a part of the file was left";
}

// A kernel's write just outside a buffer (an index off by one) landed in the
// allocation's padding or the allocator's next chunk, and the config was
// verified and timed as right. The guard bytes around each buffer find it,
// say where in the kernel's own indices, and are written again by reset().
TEST(HostArguments, AWriteOutsideABufferIsFoundAndNamedByElement) {
  // 1000 floats: the 64-byte rounding leaves 32 bytes of padding after them.
  std::vector<ResolvedArgument> args{{"x", ElementType::f32, Role::in, 1000, Fill::random, 0, {}, {}},
                                     {"y", ElementType::f32, Role::out, 1000, Fill::zeros, 0, {}, {}},
                                     {"z", ElementType::f64, Role::inout, 16, Fill::zeros, 0, {}, {}}};
  HostArguments h;
  h.prepare(args, 1);
  EXPECT_EQ(h.damaged_guard(), "");

  auto* y = static_cast<float*>(h.data(1));
  y[1000] = 42.0f;
  y[1001] = 42.0f;
  EXPECT_EQ(h.damaged_guard(),
            "wrote past the end of output 'y' (1000 elements of f32): elements [1000] to [1001] changed");
  h.reset();
  EXPECT_EQ(h.damaged_guard(), "");

  static_cast<double*>(h.data(2))[-1] = 1.0;
  EXPECT_EQ(h.damaged_guard(),
            "wrote before the start of inout argument 'z' (16 elements of f64): element [-1] changed");
  h.reset();

  // Past the padding too: a 16-double buffer fills its 128 bytes exactly.
  static_cast<double*>(h.data(2))[16] = 1.0;
  EXPECT_NE(h.damaged_guard().find("past the end of inout argument 'z'"), std::string::npos) << h.damaged_guard();
  h.reset();
  static_cast<float*>(h.data(0))[1000] = 1.0f;
  EXPECT_NE(h.damaged_guard().find("past the end of input 'x'"), std::string::npos) << h.damaged_guard();
  h.reset();
  EXPECT_EQ(h.damaged_guard(), "");
  // The buffers themselves are the kernel's to write, and stay aligned.
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(h.data(i)) % 64, 0u);
  std::memset(h.data(1), 0, h.bytes(1));
  EXPECT_EQ(h.damaged_guard(), "");
}
