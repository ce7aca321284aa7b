// Two tunes of one kernel into one store: the second learns of the first
// where their sizes meet.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/detail/kernel_claim.hpp"
#include "support/temp_dir.hpp"

using tunekit::Bindings;
using tunekit::Value;
using tunekit::detail::KernelClaim;

namespace {
const std::vector<Bindings> kOneSize{Bindings{}};
}

TEST(KernelClaim, ASecondTuneOfTheKernelSeesWhoHoldsItUntilItEnds) {
  const auto db = tunekit::testing::fresh_dir() / "tunekit.db";
  const std::string kernel = "0123456789abcdef0123456789abcdef", other = "fedcba9876543210fedcba9876543210";
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t first = ::fork();
  ASSERT_GE(first, 0);
  if (first == 0) {       // the first tune: claims, says so, holds until told
    ::close(release[1]);  // else its read would wait for itself
    KernelClaim claim(db, kernel, kOneSize);
    char c = claim.held_by() ? 'n' : 'y';
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    (void)::read(release[0], &c, 1);  // returns at the parent's close
    ::_exit(0);
  }
  ::close(release[0]);
  char claimed = 0;
  ASSERT_EQ(::read(ready[0], &claimed, 1), 1);
  EXPECT_EQ(claimed, 'y');
  {
    const KernelClaim second(db, kernel, kOneSize);
    ASSERT_TRUE(second.held_by());
    EXPECT_EQ(*second.held_by(), first);
    ASSERT_TRUE(second.warning());
    EXPECT_NE(second.warning()->find("pid " + std::to_string(first)), std::string::npos) << *second.warning();
    EXPECT_NE(second.warning()->find(db.string()), std::string::npos) << *second.warning();
    EXPECT_FALSE(KernelClaim(db, other, kOneSize).held_by());  // another kernel's trials are apart
  }
  ::close(release[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(first, &status, 0), first);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The first tune's end (a kill too) releases it.
  EXPECT_FALSE(KernelClaim(db, kernel, kOneSize).held_by());
  EXPECT_FALSE(KernelClaim(db, kernel, kOneSize).warning());
}

// `tune -s N=64` and `tune -s N=128` side by side store apart: neither is
// warned. A tune of both sizes meets the first at its size, and names it.
TEST(KernelClaim, TunesOfTheKernelAtOtherSizesDoNotMeet) {
  const auto db = tunekit::testing::fresh_dir() / "tunekit.db";
  const std::string kernel = "0123456789abcdef0123456789abcdef";
  const Bindings n64{{"N", Value(64)}}, n128{{"N", Value(128)}};
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t first = ::fork();
  ASSERT_GE(first, 0);
  if (first == 0) {  // the first tune, at N = 64
    ::close(release[1]);
    KernelClaim claim(db, kernel, {n64});
    char c = claim.held_by() ? 'n' : 'y';
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    (void)::read(release[0], &c, 1);
    ::_exit(0);
  }
  ::close(release[0]);
  char claimed = 0;
  ASSERT_EQ(::read(ready[0], &claimed, 1), 1);
  EXPECT_EQ(claimed, 'y');
  {
    const KernelClaim other_size(db, kernel, {n128});
    EXPECT_FALSE(other_size.held_by());
    EXPECT_FALSE(other_size.warning()) << *other_size.warning();
  }
  {
    const KernelClaim both(db, kernel, {n64, n128});
    ASSERT_TRUE(both.held_by());
    EXPECT_EQ(*both.held_by(), first);
    ASSERT_EQ(both.held_sizes().size(), 1u);
    ASSERT_TRUE(both.warning());
    EXPECT_NE(both.warning()->find("at {N: 64} into"), std::string::npos) << *both.warning();
  }
  ::close(release[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(first, &status, 0), first);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
