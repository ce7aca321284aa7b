// The distributed tune's protocol in one process: rank 0's coordinator with
// ranks that are threads, some of them the real serve(), some played by the
// test to meet the cases a real job meets rarely (another machine, a spec
// error, a rank that fails).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "backend/cpu/detail/machine.hpp"
#include "builder/detail/compiler.hpp"
#include "distribute/detail/job.hpp"
#include "distribute/detail/local.hpp"
#include "store/detail/json_value.hpp"
#include "support/scale_spec.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/error.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/store.hpp"

using namespace tunekit;
using detail::Message;
using ojson = nlohmann::ordered_json;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

constexpr const char* kSizes = "[{N: 1024}, {N: 2048}, {N: 4096}]";

Spec scale_spec(const std::filesystem::path& dir) { return tunekit::testing::scale_spec(dir, kSizes, "[1, 2, 3]"); }

// A job of two ranks in this process, over scale_spec's kernel; taken apart
// as `auto& [dir, spec, options, transport] = job;`.
struct TwoRanks {
  explicit TwoRanks(const std::string& sizes = kSizes, const std::string& scales = "[1, 2, 3]")
      : dir(fresh_dir()), spec(tunekit::testing::scale_spec(dir, sizes, scales)) {
    options.out_dir = dir / "out";
  }
  std::filesystem::path dir;
  Spec spec;
  TuneOptions options;
  detail::LocalTransport transport{2};
};

// What a rank played by the test does with each size it is handed.
using Answer = std::function<void(detail::Link&, const ojson& assignment)>;

// Plays a rank of `spec`'s tune on `device`; the assignments it got go to
// `seen`.
std::thread play(detail::Link& link, const Spec& spec, std::string device, Answer answer, std::vector<ojson>& seen,
                 std::optional<std::string> compiler = std::nullopt) {
  const std::string tune = detail::tune_identity(spec);
  const std::string cc = compiler.value_or(detail::kernel_compiler_identity(spec));
  return std::thread([&link, device, answer, &seen, tune, cc] {
    link.send({Message::Kind::hello, 0,
               ojson{{"host", "test"}, {"device", device}, {"tune", tune}, {"compiler", cc}}.dump()});
    for (Message m = link.receive(); m.kind == Message::Kind::assign; m = link.receive()) {
      seen.push_back(ojson::parse(m.body));
      answer(link, seen.back());
    }
  });
}

// A rank's answer: the size tuned, with one ok trial of SCALE 1 at 10 us
// (stored first, as serve() passes a trial on); `interrupted`: stopped
// after that trial.
void tune_it(detail::Link& link, const ojson& a, const Spec& spec, const std::string& device,
             bool interrupted = false) {
  TrialRecord t;
  t.spec_hash = spec_hash(spec);
  t.kernel = spec.name;
  t.device = device;
  t.size = detail::bindings_from_json(a.at("size"));
  t.config.set("SCALE", Value(1));
  t.stats.median = t.stats.min = t.stats.max = t.stats.mean = Microseconds(10);
  t.stats.count = 1;
  t.samples = {Microseconds(10)};
  link.send({Message::Kind::trial, 0,
             ojson{{"index", a.at("index")}, {"exclusive", false}, {"trial", detail::trial_to_json(t)}}.dump()});
  SizeReport s;
  s.size = t.size;
  s.trials = {t};
  s.best = 0;
  link.send({Message::Kind::done, 0,
             ojson{{"index", a.at("index")},
                   {"sizes", ojson::array({detail::size_report_to_json(s)})},
                   {"warnings", ojson::array()},
                   {"seeded_by", ojson::array()},
                   {"resumed", 0},
                   {"retried", 0},
                   {"measured_again_after_kill", 0},
                   {"interrupted", interrupted},
                   {"build", 0.0},
                   {"build_wait", 0.0},
                   {"measure", 0.0},
                   {"device_busy", 0.0},
                   {"flush", 0.0},
                   {"verify", 0.0}}
                 .dump()});
}

void fail_it(detail::Link& link, const ojson& a, const ojson& error) {
  link.send({Message::Kind::failed, 0, ojson{{"index", a.at("index")}, {"error", error}}.dump()});
}

std::size_t stored(const TuneReport& r) { return Store(r.db).trials(r.spec_hash).size(); }

// Waits, as serve() does between its trials, for rank 0 to halt the job;
// true once it did (a bound, so that a job that never halts fails).
bool halted(detail::Link& link) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < until) {
    if (auto m = link.poll()) return m->kind == Message::Kind::halt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool any_says(const TuneReport& r, std::string_view text) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

}  // namespace

// Who says why a job cannot start: the first rank that failed (rank 0 when
// every rank meets the same spec error), once; every rank exits, with its
// own status, or with the speaker's where it failed in nothing.
TEST(Distribute, AnErrorBeforeTheTuneIsSaidByTheFirstRankThatMetIt) {
  using detail::end_before_tune;
  for (int rank = 0; rank < 3; ++rank) EXPECT_FALSE(end_before_tune({0, 0, 0}, rank)) << rank;
  for (int rank = 0; rank < 3; ++rank) {
    const auto end = end_before_tune({1, 1, 1}, rank);
    ASSERT_TRUE(end) << rank;
    EXPECT_EQ(end->speaks, rank == 0) << rank;
    EXPECT_EQ(end->status, 1) << rank;
  }
  // Only rank 1 failed (a file missing on its host): it says why, and the
  // others end with its status.
  for (int rank = 0; rank < 3; ++rank) {
    const auto end = end_before_tune({0, 2, 0}, rank);
    ASSERT_TRUE(end) << rank;
    EXPECT_EQ(end->speaks, rank == 1) << rank;
    EXPECT_EQ(end->status, 2) << rank;
  }
  const auto own = end_before_tune({1, 0, 2}, 2);
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->speaks);
  EXPECT_EQ(own->status, 2);
}

// The rank a launcher gave this process, read before MPI is joined (the
// command line's own errors are said by rank 0 alone).
TEST(Distribute, TheLaunchedRankIsReadFromTheLaunchersEnvironment) {
  const char* names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
  for (const char* name : names) ASSERT_EQ(std::getenv(name), nullptr) << name << " is set: run outside mpirun";
  EXPECT_EQ(detail::launched_rank(), 0);
  for (const char* name : names) {
    ::setenv(name, "2", 1);
    EXPECT_EQ(detail::launched_rank(), 2) << name;
    ::unsetenv(name);
  }
}

TEST(Distribute, RanksTuneEverySizeIntoRankZerosStoreAndAResumeRunsNothing) {
  const auto dir = fresh_dir();
  const Spec spec = scale_spec(dir);
  TuneOptions options;
  options.out_dir = dir / "out";
  // Told of each trial as rank 0 stores it, as a run alone tells its own
  // (the command line says what a run an error ends had stored).
  std::set<std::string> told;
  options.on_stored = [&](const TrialRecord& t, bool) { told.insert(size_key(t.size) + t.config.key()); };
  std::vector<ProgressEvent> events;
  auto job = [&](int ranks) {
    detail::LocalTransport transport(ranks);
    std::vector<std::thread> served;
    for (int r = 0; r < ranks; ++r)
      served.emplace_back([&, r] { detail::serve(transport.link(r), spec, options); });
    events.clear();
    TuneReport report =
        detail::coordinate(transport, spec, options, [&](const ProgressEvent& e) { events.push_back(e); });
    for (auto& t : served) t.join();
    return report;
  };

  // A rank killed before it removed its scratch folder (SIGKILL) left one in
  // the temporary directory; a living process's is not touched.
  const auto temp = std::filesystem::temp_directory_path();
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const auto orphan = temp / fmt::format("tunekit-{}-{}-rank-1", host, dead);
  const auto alive = temp / fmt::format("tunekit-{}-{}-rank-99", host, ::getpid());
  // A temporary directory shared with another host: its pids are not ours.
  const auto elsewhere = temp / fmt::format("tunekit-{}x-{}-rank-1", host, dead);
  for (const auto& folder : {orphan, alive, elsewhere}) write_file(folder / "size-0.db", "trials");

  const TuneReport report = job(2);
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(elsewhere));
  std::filesystem::remove_all(alive);
  std::filesystem::remove_all(elsewhere);
  ASSERT_EQ(report.sizes.size(), 3u);
  // The progress counts every rank's trials against a total (the sizes not
  // begun counted as those begun plan), and ends at what was measured.
  ASSERT_FALSE(events.empty());
  for (const auto& e : events) {
    ASSERT_TRUE(e.total);
    EXPECT_LE(e.done, *e.total);
    EXPECT_GE(*e.total, 3u);
  }
  EXPECT_EQ(events.back().done, 9u);
  EXPECT_EQ(events.back().total, 9u);
  Store store(report.db);
  for (std::size_t i = 0; i < 3; ++i) {
    const SizeReport& s = report.sizes[i];
    EXPECT_EQ(size_key(s.size), size_key(spec.sizes[i]));  // the spec's order, whoever tuned it
    ASSERT_EQ(s.trials.size(), 3u);
    ASSERT_TRUE(s.best);
    for (const auto& t : s.trials) {
      // SCALE 3 repeats the loop: the early stop may cut it short.
      EXPECT_TRUE(t.status == Status::ok || t.status == Status::slower) << to_string(t.status) << ": " << t.error;
      auto kept = store.find(report.spec_hash, report.device, t.size, t.config);
      ASSERT_TRUE(kept) << t.config.str();
      EXPECT_EQ(kept->id, t.id);  // the store's row, not the rank's scratch one
      EXPECT_EQ(kept->stats.median, t.stats.median);
    }
  }
  EXPECT_EQ(stored(report), 9u);
  EXPECT_EQ(told.size(), 9u);
  EXPECT_GE(report.ranks, 1u);
  EXPECT_LE(report.ranks, 2u);
  EXPECT_FALSE(report.device.empty());
  // Both time CPU kernels on this host's cores: the report says they
  // disturbed each other (beside, on a busy machine, the noise it saw).
  EXPECT_TRUE(std::any_of(report.warnings.begin(), report.warnings.end(),
                          [](const std::string& w) { return w.find("ranks 0, 1 ran on one host") != std::string::npos; }))
      << fmt::format("{}", fmt::join(report.warnings, "\n"));

  // The ranks share the job's builds; their scratch files are their own.
  EXPECT_FALSE(std::filesystem::is_empty(options.out_dir / "cache" / "cpu" / "build"));
  for (const char* rank : {"rank-0", "rank-1"})
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "ranks" / rank / "cache" / "cpu" / "build")) << rank;
  // Rank 0 is handed the first size, whoever says hello first.
  EXPECT_TRUE(std::filesystem::exists(options.out_dir / "ranks" / "rank-0" / "cache" / "cpu" / "worker.log"));

  // Rank 0's store is the truth: three ranks now resume what two tuned.
  const TuneReport again = job(3);
  ASSERT_EQ(again.sizes.size(), 3u);
  EXPECT_EQ(again.resumed, 9u);
  EXPECT_EQ(stored(again), 9u);
}

TEST(Distribute, ARankOnAnotherMachineTunesNothing) {
  TwoRanks job;
  // Named references, not a structured binding: the lambdas below capture
  // them, which clang before 16 refuses for a binding.
  auto& spec = job.spec;
  auto& options = job.options;
  auto& transport = job.transport;
  std::vector<ojson> seen0, seen1;
  auto tune0 = [&](detail::Link& l, const ojson& a) { tune_it(l, a, spec, "machine A"); };
  auto tune1 = [&](detail::Link& l, const ojson& a) { tune_it(l, a, spec, "machine B"); };
  std::thread rank1 = play(transport.link(1), spec, "machine B", tune1, seen1);
  std::thread rank0 = play(transport.link(0), spec, "machine A", tune0, seen0);
  const TuneReport report = detail::coordinate(transport, spec, options);
  rank0.join();
  rank1.join();
  EXPECT_EQ(seen0.size(), 3u);
  EXPECT_TRUE(seen1.empty());
  EXPECT_EQ(report.device, "machine A");
  ASSERT_EQ(report.sizes.size(), 3u);
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_NE(report.warnings[0].find("rank 1 (test) tunes on machine B, not on rank 0's machine A"), std::string::npos)
      << report.warnings[0];
}

// A rank started with another space (or source, or sizes) than rank 0's:
// its trials would be stored and reported as this tune's, so it tunes
// nothing, and the report says why.
TEST(Distribute, ARankOfAnotherSpecTunesNothing) {
  TwoRanks job;
  auto& spec = job.spec;
  Spec other = spec;
  other.parameters.front().values.push_back(Value(12));
  std::vector<ojson> seen0, seen1;
  auto tune0 = [&](detail::Link& l, const ojson& a) { tune_it(l, a, spec, "m"); };
  auto tune1 = [&](detail::Link& l, const ojson& a) { tune_it(l, a, other, "m"); };
  std::thread rank1 = play(job.transport.link(1), other, "m", tune1, seen1);
  std::thread rank0 = play(job.transport.link(0), spec, "m", tune0, seen0);
  const TuneReport report = detail::coordinate(job.transport, spec, job.options);
  rank0.join();
  rank1.join();
  EXPECT_EQ(seen0.size(), 3u);
  EXPECT_TRUE(seen1.empty());
  EXPECT_TRUE(
      any_says(report, "rank 1 (test) was started with another spec, kernel source, space or sizes than rank 0"))
      << fmt::format("{}", fmt::join(report.warnings, "\n"));
  EXPECT_NE(detail::tune_identity(other), detail::tune_identity(spec));
  Spec resized = spec;
  resized.sizes.pop_back();
  EXPECT_NE(detail::tune_identity(resized), detail::tune_identity(spec));
}

// The compiler's identity (its release) is the kernel's: a rank whose host
// has another release would store its trials as another kernel's. It is
// retired, and told why, not that its command differed.
TEST(Distribute, ARankWithAnotherCompilerReleaseTunesNothingAndIsToldWhy) {
  TwoRanks job;
  auto& spec = job.spec;
  std::vector<ojson> seen0, seen1;
  auto tune0 = [&](detail::Link& l, const ojson& a) { tune_it(l, a, spec, "m"); };
  std::thread rank1 = play(job.transport.link(1), spec, "m", tune0, seen1, "g++ (GCC) 14.2.0 for x86_64-linux-gnu");
  std::thread rank0 = play(job.transport.link(0), spec, "m", tune0, seen0);
  const TuneReport report = detail::coordinate(job.transport, spec, job.options);
  rank0.join();
  rank1.join();
  EXPECT_EQ(seen0.size(), 3u);
  EXPECT_TRUE(seen1.empty());
  EXPECT_TRUE(any_says(report,
                       "rank 1 (test)'s compiler is not rank 0's (g++ (GCC) 14.2.0 for x86_64-linux-gnu "
                       "against "))
      << fmt::format("{}", fmt::join(report.warnings, "\n"));
  EXPECT_FALSE(any_says(report, "was started with another spec"))
      << fmt::format("{}", fmt::join(report.warnings, "\n"));
}

TEST(Distribute, ASpecErrorOnARankIsTheJobsErrorWhereItWas) {
  TwoRanks job;
  auto& [dir, spec, options, transport] = job;
  std::vector<ojson> seen0, seen1;
  const ojson error{{"input", true}, {"file", "scale.yaml"}, {"line", 3}, {"column", 5}, {"message", "bad N"}};
  std::thread rank0 = play(
      transport.link(0), spec, "m", [&](detail::Link& l, const ojson& a) { fail_it(l, a, error); }, seen0);
  std::thread rank1 = play(
      transport.link(1), spec, "m", [&](detail::Link& l, const ojson& a) { fail_it(l, a, error); }, seen1);
  try {
    (void)detail::coordinate(transport, spec, options);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "scale.yaml");
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 5);
    EXPECT_EQ(e.message(), "bad N");
  }
  // Both were told to stop (else the joins would wait for ever), and no
  // size was handed out after the error.
  rank0.join();
  rank1.join();
  EXPECT_LE(seen0.size() + seen1.size(), 2u);
}

TEST(Distribute, ASizeARankCannotTuneGoesToAnotherRank) {
  const auto dir = fresh_dir();
  Spec spec = scale_spec(dir);
  spec.sizes.resize(2);
  TuneOptions options;
  options.out_dir = dir / "out";
  detail::LocalTransport transport(2);
  std::vector<ojson> seen0, seen1;
  std::promise<void> failed;
  auto rank1_failed = failed.get_future().share();
  // Rank 0 holds its first size until rank 1 has failed its own.
  std::thread rank0 = play(
      transport.link(0), spec, "m",
      [&](detail::Link& l, const ojson& a) {
        rank1_failed.wait();
        tune_it(l, a, spec, "m");
      },
      seen0);
  std::thread rank1 = play(
      transport.link(1), spec, "m",
      [&](detail::Link& l, const ojson& a) {
        fail_it(l, a, {{"input", false}, {"message", "out of device memory"}});
        failed.set_value();
      },
      seen1);
  const TuneReport report = detail::coordinate(transport, spec, options);
  rank0.join();
  rank1.join();
  ASSERT_EQ(seen1.size(), 1u);
  EXPECT_EQ(seen0.size(), 2u);  // its own, then rank 1's
  ASSERT_EQ(report.sizes.size(), 2u);
  EXPECT_EQ(size_key(report.sizes[1].size), size_key(spec.sizes[1]));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("rank 1 (test) could not tune size N=2048: out of device memory"),
            std::string::npos)
      << report.warnings[0];
  EXPECT_EQ(report.ranks, 1u);
}

// A batch system signals one node before it ends a job. The rank stopped
// ends the job, not only its size: the others end theirs after their trial
// in flight, and no size goes to the stopped rank, which would fail it at
// once and be retired as broken.
TEST(Distribute, ARankStoppedBySignalStopsTheJob) {
  TwoRanks job("[{N: 1024}, {N: 2048}, {N: 4096}, {N: 8192}]");
  // Named references, not a structured binding: the lambdas below capture
  // them, which clang before 16 refuses for a binding.
  auto& spec = job.spec;
  auto& options = job.options;
  auto& transport = job.transport;
  std::vector<ojson> seen0, seen1;
  bool halted0 = false;
  auto tune0 = [&](detail::Link& l, const ojson& a) {
    halted0 = halted(l);
    tune_it(l, a, spec, "m", true);
  };
  auto tune1 = [&](detail::Link& l, const ojson& a) { tune_it(l, a, spec, "m", true); };
  std::thread rank0 = play(transport.link(0), spec, "m", tune0, seen0);
  std::thread rank1 = play(transport.link(1), spec, "m", tune1, seen1);
  const TuneReport report = detail::coordinate(transport, spec, options);
  rank0.join();
  rank1.join();
  EXPECT_TRUE(halted0);
  EXPECT_EQ(seen0.size(), 1u);
  EXPECT_EQ(seen1.size(), 1u);
  EXPECT_TRUE(report.interrupted);
  EXPECT_EQ(report.sizes.size(), 2u);  // the two begun, with their trials so far
  EXPECT_TRUE(any_says(report, "rank 1 (test) was stopped (a signal) while it tuned size"))
      << fmt::format("{}", fmt::join(report.warnings, "\n"));
  EXPECT_FALSE(any_says(report, "could not tune"));
  EXPECT_FALSE(stop_requested());  // the coordinator halts the ranks; it does not stop its process
}

// The halt as serve() takes it: a real rank amid a size of many configs
// drops its trial in flight and reports the size as stopped.
TEST(Distribute, AServingRankHaltedEndsItsSizeAmidIt) {
  std::string scales = "[1";
  for (int s = 2; s <= 40; ++s) scales += ", " + std::to_string(s);
  TwoRanks job("[{N: 1024}, {N: 2048}]", scales + "]");
  // Named references, not a structured binding: the lambdas below capture
  // them, which clang before 16 refuses for a binding.
  auto& spec = job.spec;
  auto& options = job.options;
  auto& transport = job.transport;
  std::vector<ojson> seen0;
  // Rank 0 is stopped by a signal of its own once rank 1 has stored a trial.
  auto tune0 = [&](detail::Link& l, const ojson& a) {
    const auto db = options.out_dir / "tunekit.db";
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (std::chrono::steady_clock::now() < until &&
           (!std::filesystem::exists(db) || Store(db, Store::Access::read_only).all().empty()))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tune_it(l, a, spec, "m", true);
  };
  std::thread rank0;
  std::thread rank1([&] { detail::serve(transport.link(1), spec, options); });
  // Rank 0 must be on rank 1's machine, or rank 1 would tune nothing.
  rank0 = play(transport.link(0), spec, cpu::probe_machine().device, tune0, seen0);
  const TuneReport report = detail::coordinate(transport, spec, options);
  rank0.join();
  rank1.join();
  const bool rank1_stopped = stop_requested();
  clear_stop();
  EXPECT_TRUE(rank1_stopped);  // by the halt
  EXPECT_TRUE(report.interrupted);
  ASSERT_EQ(report.sizes.size(), 2u);
  EXPECT_LT(report.sizes[1].trials.size(), 40u);
  EXPECT_TRUE(any_says(report, "rank 0 (test) was stopped (a signal) while it tuned size"))
      << fmt::format("{}", fmt::join(report.warnings, "\n"));
}

// Rank 0 stopped (Ctrl-C on it, or pkill on every host): a rank amid a long
// size ends it after its trial in flight, rather than tuning it to its end
// while rank 0 waits.
TEST(Distribute, RankZeroStoppedHaltsTheOthersAfterTheirTrialInFlight) {
  TwoRanks job;
  // Named references, not a structured binding: the lambdas below capture
  // them, which clang before 16 refuses for a binding.
  auto& spec = job.spec;
  auto& options = job.options;
  auto& transport = job.transport;
  std::vector<ojson> seen0, seen1;
  bool halted1 = false;
  // Rank 1 begins first, so that the stop finds it busy.
  std::promise<void> begun;
  auto tune0 = [&](detail::Link& l, const ojson& a) {
    begun.get_future().wait();
    request_stop();
    tune_it(l, a, spec, "m", true);
  };
  auto tune1 = [&](detail::Link& l, const ojson& a) {
    begun.set_value();
    halted1 = halted(l);
    tune_it(l, a, spec, "m", true);
  };
  std::thread rank0 = play(transport.link(0), spec, "m", tune0, seen0);
  std::thread rank1 = play(transport.link(1), spec, "m", tune1, seen1);
  const TuneReport report = detail::coordinate(transport, spec, options);
  rank0.join();
  rank1.join();
  clear_stop();
  EXPECT_TRUE(halted1);
  EXPECT_EQ(seen0.size() + seen1.size(), 2u);
  EXPECT_TRUE(report.interrupted);
  EXPECT_FALSE(any_says(report, "was stopped (a signal)"));  // the user stopped rank 0: nothing to explain
}

TEST(Distribute, AnAssignmentCarriesItsSizesTrialsAndTheFastestOfTheOthers) {
  const auto dir = fresh_dir();
  Spec spec = scale_spec(dir);
  spec.sizes.resize(2);
  TuneOptions options;
  options.out_dir = dir / "out";
  {
    // An earlier run: two trials at N=1024, twenty at N=2048 (SCALE is only
    // a label here), and one of another machine.
    Store store(options.out_dir / "tunekit.db");
    auto put = [&](const Bindings& size, int scale, double us, const std::string& device) {
      TrialRecord t;
      t.spec_hash = spec_hash(spec);
      t.device = device;
      t.size = size;
      t.config.set("SCALE", Value(scale));
      t.stats.median = Microseconds(us);
      t.stats.count = 1;
      store.put(t);
    };
    put(spec.sizes[0], 1, 5, "m");
    put(spec.sizes[0], 2, 6, "m");
    for (int i = 0; i < 20; ++i) put(spec.sizes[1], 100 + i, 100.0 - i, "m");
    put(spec.sizes[0], 3, 1, "another machine");
  }
  auto first_assignment = [&](bool fresh) {
    options.fresh = fresh;
    detail::LocalTransport transport(1);
    std::vector<ojson> seen;
    std::thread rank0 = play(
        transport.link(0), spec, "m", [&](detail::Link& l, const ojson& a) { tune_it(l, a, spec, "m"); }, seen);
    (void)detail::coordinate(transport, spec, options);
    rank0.join();
    return seen.at(0);
  };
  const ojson a = first_assignment(false);
  EXPECT_EQ(a.at("index"), 0);
  std::map<std::string, std::vector<std::int64_t>> scales;  // by size
  for (const auto& t : a.at("known")) {
    const TrialRecord r = detail::trial_from_json(t);
    EXPECT_EQ(r.device, "m");
    scales[size_key(r.size)].push_back(r.config.at("SCALE").as_int());
  }
  EXPECT_EQ(scales["N=1024"], (std::vector<std::int64_t>{1, 2}));  // a resume's
  // Transfer's: the 16 fastest of N=2048, fastest first.
  std::vector<std::int64_t> fastest;
  for (int i = 19; i >= 4; --i) fastest.push_back(100 + i);
  EXPECT_EQ(scales["N=2048"], fastest);

  // A fresh run reuses nothing stored before it.
  EXPECT_TRUE(first_assignment(true).at("known").empty());
}
