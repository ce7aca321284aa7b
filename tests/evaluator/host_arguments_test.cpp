#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "evaluator/detail/host_arguments.hpp"

using namespace tunekit;
using tunekit::detail::HostArguments;

namespace {

std::vector<ResolvedArgument> split_k_args(std::uint64_t workspace) {
  return {{"A", ElementType::f32, Role::in, 1000, Fill::random, 0, {}, {}},
          {"C", ElementType::f32, Role::out, 100, Fill::zeros, 0, {}, {}},
          {"work", ElementType::f32, Role::in, workspace, Fill::zeros, 0, {}, {}},
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
    }
  }
  // A count whose bytes overflow 64 bits is said as such.
  args[0].count = std::uint64_t{1} << 63;
  EXPECT_THROW(h.prepare(args, 1), tunekit::detail::AllocationError);
  args[0].count = 16;
  EXPECT_TRUE(h.prepare(args, 1));
  EXPECT_NE(h.data(0), nullptr);
}
