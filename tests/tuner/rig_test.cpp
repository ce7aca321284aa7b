// A TuningRig kept across tune() calls: one worker process serves them all,
// it refuses another kernel, and a replay's time budget is each call's own.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "evaluator/detail/worker_evaluator.hpp"
#include "support/scale_spec.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

Spec scale_spec(const std::filesystem::path& dir, const std::string& body = "y[i] = 2 * x[i];") {
  return tunekit::testing::scale_spec(dir, "[{N: 1024}, {N: 2048}]", "[1, 2]", body);
}

// The spec with its i-th size alone, as an MPI rank tunes an assignment.
Spec one_size(Spec spec, std::size_t i) {
  spec.sizes = {spec.sizes.at(i)};
  return spec;
}

// Points TUNEKIT_WORKER, for this scope, at a script that counts the
// worker's starts in `count` and runs the real worker.
class CountedWorker {
 public:
  explicit CountedWorker(const std::filesystem::path& dir) : count_(dir / "starts") {
    const std::filesystem::path script = dir / "worker.sh";
    write_file(script, "#!/bin/sh\necho start >> '" + count_.string() + "'\nexec '" +
                           detail::find_worker().string() + "' \"$@\"\n");
    ::chmod(script.c_str(), 0755);
    ::setenv("TUNEKIT_WORKER", script.c_str(), 1);
  }
  ~CountedWorker() { ::unsetenv("TUNEKIT_WORKER"); }
  int starts() const {
    std::ifstream in(count_);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

 private:
  std::filesystem::path count_;
};

}  // namespace

TEST(TuningRig, OneWorkerServesEveryTuneOfTheRig) {
  const auto dir = fresh_dir();
  const Spec spec = scale_spec(dir);
  CountedWorker worker(dir);
  TuneOptions options;
  options.out_dir = dir / "out";
  options.fresh = true;

  // Without a rig each call starts its own worker.
  for (std::size_t i : {0u, 1u}) tune(one_size(spec, i), options);
  ASSERT_EQ(worker.starts(), 2);

  TuningRig rig(spec, options);
  EXPECT_EQ(worker.starts(), 2);  // a rig starts nothing until a trial needs it
  EXPECT_TRUE(rig.target().measures_on_host);
  EXPECT_FALSE(rig.target().machine.device.empty());
  options.rig = &rig;
  for (std::size_t i : {0u, 1u}) {
    const TuneReport r = tune(one_size(spec, i), options);
    ASSERT_EQ(r.sizes.size(), 1u);
    EXPECT_EQ(r.sizes[0].trials.size(), 2u);
    EXPECT_TRUE(r.sizes[0].best);
    EXPECT_EQ(r.device, rig.target().machine.device);
  }
  EXPECT_EQ(worker.starts(), 3);
}

TEST(TuningRig, ATuneOfAnotherKernelIsRefused) {
  const auto dir = fresh_dir();
  const Spec spec = scale_spec(dir / "a");
  const Spec other = scale_spec(dir / "b", "y[i] = 3 * x[i];");
  TuneOptions options;
  options.out_dir = dir / "out";
  TuningRig rig(spec, options);
  options.rig = &rig;
  EXPECT_THROW(tune(other, options), std::invalid_argument);
  EXPECT_NO_THROW(tune(one_size(spec, 0), options));
}

// The replay backend's clock runs on over the rig's calls; each call's time
// budget counts from where it stood when the call began.
TEST(TuningRig, AReplaysTimeBudgetIsEachTunesOwn) {
  const std::filesystem::path data = std::filesystem::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";
  Spec spec = load_spec(data / "conv_small.yaml");
  spec.search.strategy = "random";
  spec.search.max_time = Seconds(8);
  TuneOptions options;
  options.out_dir = fresh_dir() / "out";
  options.replay = data / "conv_small.json.gz";
  options.fresh = true;
  const std::size_t alone = tune(spec, options).sizes.at(0).trials.size();
  ASSERT_GT(alone, 2u);  // the budget ends the search, not the space
  ASSERT_LT(alone, 100u);

  TuningRig rig(spec, options);
  options.rig = &rig;
  for (int call = 0; call < 3; ++call) EXPECT_EQ(tune(spec, options).sizes.at(0).trials.size(), alone) << call;
}
