// Child processes under a hostile program (issue #22): one that prints
// without end, one that leaves a background process holding its output.
#include <gtest/gtest.h>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace std::chrono_literals;

// Item 15: output is kept up to a cap, and the timeout holds however much
// the program prints (`yes` never pauses, so a deadline checked only when
// the pipe is quiet was never reached).
TEST(Process, EndlessOutputIsCappedAndTheTimeoutHolds) {
  auto r = detail::run_process({"yes"}, 3s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_GT(r.output_dropped, 0u);
  EXPECT_LE(r.output.size(), 2 * detail::kKeptOutputBytes + 200);
  EXPECT_NE(r.output.find("bytes of output not kept"), std::string::npos);
}

// Item 17: a program that exits 0 and leaves a background process holding
// its output has ended: not a timeout, and the leftover is killed.
TEST(Process, ABackgroundProcessHoldingTheOutputDoesNotHoldTheRun) {
  auto r = detail::run_process({"sh", "-c", "sleep 600 & echo done"}, 120s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "done\n");
}

// A worker lives for many requests, each logging up to kLogBytesPerRequest:
// its log is rotated when a request starts, not only when a worker does
// (a run of 75 chatty configs on one worker left a 78 MB log).
TEST(Process, AWorkersLogIsRotatedWhenARequestStarts) {
  namespace fs = std::filesystem;
  const fs::path log = tunekit::testing::fresh_dir() / "worker.log";
  detail::Child child;
  child.start({"/bin/sh", "-c", "sleep 600"}, log);
  // As if earlier requests had logged that much.
  fs::resize_file(log, detail::Child::kLogRotateBytes + 1);
  child.mark_output();
  EXPECT_EQ(fs::file_size(log.string() + ".1"), detail::Child::kLogRotateBytes + 1);
  ASSERT_TRUE(fs::exists(log));
  EXPECT_EQ(fs::file_size(log), 0u);
  child.kill();
}
