// The index budget bounds the memory the process holds while the index is
// built: counted by replacing the global allocation functions of this test
// binary (they forward to malloc and count what it hands out).
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "tunekit/space.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TUNEKIT_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TUNEKIT_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef TUNEKIT_COUNTS_ALLOCATIONS
#define TUNEKIT_COUNTS_ALLOCATIONS 1
#endif

namespace {

std::atomic<std::int64_t> held_bytes{0};
std::atomic<std::int64_t> peak_bytes{0};

}  // namespace

#if TUNEKIT_COUNTS_ALLOCATIONS
void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  const std::int64_t now = held_bytes += static_cast<std::int64_t>(malloc_usable_size(p));
  std::int64_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return p;
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept {
  if (!p) return;
  held_bytes -= static_cast<std::int64_t>(malloc_usable_size(p));
  std::free(p);
}
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
#endif

namespace {

using tunekit::Expression;
using tunekit::Parameter;
using tunekit::Space;
using tunekit::Value;

// Builds `space`'s index under `budget`, which it must give up on, and
// checks what the attempt held at its peak. docs/space-index.md: a vector
// that grows holds its old copy until the new one is filled, so the attempt
// may peak at about half as much again.
void expect_build_fails_within(Space& space, std::size_t budget) {
  space.set_index_budget(budget);
  const std::int64_t before = held_bytes.load();
  peak_bytes = before;
  EXPECT_FALSE(space.build());
  const std::int64_t peak = peak_bytes.load() - before;
  EXPECT_LE(peak, static_cast<std::int64_t>(budget + budget / 2))
      << "a failed attempt under a budget of " << budget << " bytes held " << peak << " bytes at its peak";
}

TEST(IndexBudget, BoundsWhatTheBuildHolds) {
  if (!TUNEKIT_COUNTS_ALLOCATIONS) GTEST_SKIP() << "the sanitizer's allocator counts allocations its own way";
  // Eight parameters whose weighted sum and two products every later layer
  // carries as its context: the graph has millions of nodes, far past the
  // budget, with most of its bytes in the contexts' memo tables.
  std::vector<Parameter> params;
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    std::vector<Value> values;
    for (std::int64_t v = 1; v <= 12; ++v) values.emplace_back(v);
    params.push_back(Parameter{name, std::move(values), {}});
  }
  std::vector<Expression> constraints{Expression::parse("a*3 + b*5 + c*7 + d*11 + e*13 + f*17 + g*19 + h*23 <= 400"),
                                      Expression::parse("(a*b*c*d + e*f*g*h) % 13 == 5"), Expression::parse("a <= h")};
  Space space(std::move(params), std::move(constraints));
  expect_build_fails_within(space, std::size_t{16} << 20);
}

// A space with no valid config, or one, keeps no node: its memo tables, one
// entry per context tried, are all its build holds, and they are held to the
// budget as the index's vectors are (they once grew unchecked, to 3.2 GB under
// the default 1 GiB budget on a space of 4.3e9 combinations).
TEST(IndexBudget, BoundsTheMemoTablesOfASpaceWithFewValidConfigs) {
  if (!TUNEKIT_COUNTS_ALLOCATIONS) GTEST_SKIP() << "the sanitizer's allocator counts allocations its own way";
  // The digits so far as one number are every later parameter's context:
  // 10^6 contexts at the last parameter, none of them alike.
  const std::string number = "a*1000000 + b*100000 + c*10000 + d*1000 + e*100 + f*10 + g";
  for (const std::string& constraint : {number + " < 0", number + " == 9999999"}) {
    SCOPED_TRACE(constraint);
    std::vector<Parameter> params;
    for (const char* name : {"a", "b", "c", "d", "e", "f", "g"}) {
      std::vector<Value> values;
      for (std::int64_t v = 0; v <= 9; ++v) values.emplace_back(v);
      params.push_back(Parameter{name, std::move(values), {}});
    }
    Space space(std::move(params), {Expression::parse(constraint)});
    expect_build_fails_within(space, std::size_t{4} << 20);
  }
}

}  // namespace
