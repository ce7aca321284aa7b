// `mpirun -n N tunekit tune`: the ranks tune the spec's sizes into rank 0's
// store, rank 0 alone writes the outputs, and a rerun with another number of
// ranks resumes it. Without MPI, a rank of a launcher refuses to run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "tunekit/store.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;

namespace {

void write_spec(const std::filesystem::path& dir) {
  write_file(dir / "twice.cpp", R"(
extern "C" void twice(const float* x, float* y, int n) {
  for (int i = 0; i < n; i += BLOCK)
    for (int j = i; j < i + BLOCK && j < n; ++j) y[j] = 2 * x[j];
}
)");
  write_file(dir / "twice.yaml", R"(name: twice
kernel: {source: twice.cpp, entry: twice, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: [{N: 1000}, {N: 2000}, {N: 3000}, {N: 4000}]
parameters:
  BLOCK: [16, 64, 256]
measure: {warmup: 0s, min_samples: 3, max_samples: 5, max_time: 50ms, cache: hot, timeout: 120s}
)");
}

// mpiexec as root (CI runs as root) and with more ranks than cores (CI has 2),
// unbound as README.md says: Open MPI binds 2 ranks to a core each but not 3
// (oversubscribed), and a bound rank's trials are another machine's.
// Each rank runs `program` (tunekit, or a shell around it) with `args`.
detail::ProcessResult mpirun(int ranks, const std::vector<std::string>& args,
                             const std::vector<std::string>& program = {tunekit_exe().string()}) {
  std::vector<std::string> argv{"env",
                                "OMPI_ALLOW_RUN_AS_ROOT=1",
                                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                TUNEKIT_MPIEXEC,
                                "--oversubscribe",
                                "--bind-to",
                                "none",
                                "-n",
                                std::to_string(ranks)};
  argv.insert(argv.end(), program.begin(), program.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return detail::run_process(argv, std::chrono::seconds(600));
}

}  // namespace

TEST(Mpi, RanksTuneEverySizeIntoOneStoreAndAnotherCountResumesIt) {
  if (std::string(TUNEKIT_MPIEXEC).empty()) GTEST_SKIP() << "tunekit was built without MPI";
  const auto dir = fresh_dir();
  write_spec(dir);
  const std::vector<std::string> args{"tune",   (dir / "twice.yaml").string(), "--no-progress", "-o",
                                      (dir / "out").string(), "--output",      "console,json"};
  const auto first = mpirun(3, args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // One report, from rank 0.
  EXPECT_EQ(first.output.find("all sizes: 12 trials"), first.output.rfind("all sizes: 12 trials")) << first.output;
  EXPECT_TRUE(contains(first.output, "all sizes: 12 trials")) << first.output;
  EXPECT_TRUE(contains(first.output, "ran on one host")) << first.output;
  const auto json = nlohmann::json::parse(read_file(dir / "out" / "twice.json"));
  ASSERT_EQ(json["sizes"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(json["sizes"][i]["size"]["N"], 1000 * (i + 1));
  EXPECT_GE(json["ranks"].get<int>(), 1);
  EXPECT_LE(json["ranks"].get<int>(), 3);
  {
    Store store(dir / "out" / "tunekit.db", Store::Access::read_only);
    EXPECT_EQ(store.all().size(), 12u);
  }

  const auto again = mpirun(2, args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "12 resumed from the store")) << again.output;
  Store store(dir / "out" / "tunekit.db", Store::Access::read_only);
  EXPECT_EQ(store.all().size(), 12u);
}

TEST(Mpi, ASpecErrorEndsTheJob) {
  if (std::string(TUNEKIT_MPIEXEC).empty()) GTEST_SKIP() << "tunekit was built without MPI";
  const auto dir = fresh_dir();
  write_spec(dir);
  write_file(dir / "bad.yaml", read_file(dir / "twice.yaml") + "constraints: [BLOK > 1]\n");
  const auto r = mpirun(2, {"tune", (dir / "bad.yaml").string(), "--no-progress", "-o", (dir / "out").string()});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(contains(r.output, "bad.yaml:")) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean 'BLOCK'")) << r.output;
}

// What is wrong before the job starts (the spec, a flag, the command line)
// is every rank's alike: rank 0 says it once, and mpirun exits 1 (bad
// input). Run again, each rank through a shell that writes down how it
// exited and exits 0 (so that mpirun, which ends the job when a rank fails,
// ends none): every rank exited 1.
TEST(Mpi, AnErrorBeforeTheTuneIsSaidOnceAndEveryRankExitsWithItsStatus) {
  if (std::string(TUNEKIT_MPIEXEC).empty()) GTEST_SKIP() << "tunekit was built without MPI";
  const auto dir = fresh_dir();
  write_spec(dir);
  write_file(dir / "bad.yaml", read_file(dir / "twice.yaml") + "parameters: {B: [1]}\n");
  const auto count = [](const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  const std::vector<std::vector<std::string>> commands = {
      {"tune", (dir / "bad.yaml").string(), "--no-progress", "-o", (dir / "out").string()},
      {"tune", (dir / "twice.yaml").string(), "--no-progress", "-o", (dir / "out").string(), "--max-time", "soon"},
      {"tune", (dir / "twice.yaml").string(), "--no-progres"},
      {"tune", (dir / "twice.yaml").string(), "--no-progress", "-o", (dir / "out").string(), "--device-index", "1"},
  };
  const std::vector<std::string> errors = {"bad.yaml:11:1: duplicate key 'parameters'",
                                           "error: --max-time: bad duration", "error: unknown flag '--no-progres'",
                                           "error: --device-index: is not taken under mpirun"};
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto r = mpirun(3, commands[i]);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(count(r.output, errors[i]), 1u) << r.output;

    const auto statuses = dir / ("statuses-" + std::to_string(i));
    std::filesystem::create_directories(statuses);
    const auto each =
        mpirun(3, commands[i],
               {"sh", "-c", "\"$0\" \"$@\"; echo $? > " + statuses.string() + "/rank-$OMPI_COMM_WORLD_RANK",
                tunekit_exe().string()});
    EXPECT_EQ(each.exit_code, 0) << each.output;
    EXPECT_EQ(count(each.output, errors[i]), 1u) << each.output;
    for (int rank = 0; rank < 3; ++rank)
      EXPECT_EQ(read_file(statuses / ("rank-" + std::to_string(rank))), "1\n") << i << ", rank " << rank;
  }
}

TEST(Mpi, WithoutMpiARankOfALauncherRefusesToTune) {
  if (!std::string(TUNEKIT_MPIEXEC).empty()) GTEST_SKIP() << "tunekit was built with MPI";
  const auto dir = fresh_dir();
  write_spec(dir);
  const auto r = detail::run_process({"env", "OMPI_COMM_WORLD_SIZE=4", tunekit_exe().string(), "tune",
                                      (dir / "twice.yaml").string(), "-o", (dir / "out").string()},
                                     std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "one of 4 ranks, but it was built without MPI")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "tunekit.db"));
}
