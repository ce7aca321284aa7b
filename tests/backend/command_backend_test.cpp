// The command backend (application-level tuning) against planted build
// scripts and programs: cached builds, each failure mode as its status,
// warm-up and sample counts, and reading the time from the output.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/command/detail/command_backend.hpp"
#include "tunekit/backend.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
using tunekit::command::read_time_us;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::size_t count_lines(const fs::path& p) {
  std::string s = slurp(p);
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

TimeSource regex_time(std::string pattern, double to_us = 1.0) {
  TimeSource t;
  t.kind = TimeSource::Kind::regex;
  t.pattern = std::move(pattern);
  t.to_us = to_us;
  return t;
}

TimeSource json_time(std::string path, double to_us = 1.0) {
  TimeSource t;
  t.kind = TimeSource::Kind::json;
  t.pattern = std::move(path);
  t.to_us = to_us;
  return t;
}

class CommandBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(TUNEKIT_BINARY_DIR) / "test-tmp" /
           (std::string("CommandBackend.") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "work");
    app_.workdir = dir_ / "work";
    app_.run = {"bash", "run.sh"};
    app_.time = regex_time("time: ([0-9.]+)");
  }

  // A script in the working directory.
  void script(const std::string& name, const std::string& body) {
    std::ofstream(app_.workdir / name) << "#!/usr/bin/env bash\n" << body << "\n";
  }

  std::unique_ptr<Backend> backend(bool rebuild = false) {
    BackendOptions o;
    o.work_dir = dir_ / "cache";
    o.rebuild = rebuild;
    o.application = app_;
    return make_backend("command", o);
  }

  static BuildInput input(const std::string& source, Config config = {}) {
    BuildInput in;
    in.source = source;
    in.source_name = "/somewhere/kernel.cpp";
    in.language = "command";
    in.config = std::move(config);
    return in;
  }

  static TrialRequest request(const Artifact& a, Bindings values = {}) {
    TrialRequest rq;
    rq.artifact = a;
    rq.values = std::move(values);
    rq.measure.warmup = Microseconds(0);
    rq.measure.min_samples = 3;
    rq.measure.max_samples = 3;
    rq.measure.max_time = 10s;
    rq.measure.timeout = 120s;  // not about timeouts: a busy machine must not fail it
    return rq;
  }

  // Builds `source` (no build command unless set) and evaluates it once.
  TrialResult run(const std::string& run_body, Bindings values = {}) {
    script("run.sh", run_body);
    auto b = backend();
    BuildResult br = b->make_builder()->build(input("int x;\n"));
    EXPECT_EQ(br.status, Status::ok) << br.log;
    return b->make_evaluator()->evaluate(request(br.artifact, std::move(values)));
  }

  fs::path dir_;
  ApplicationSpec app_;
};

}  // namespace

TEST(CommandTime, RegexTakesTheFirstGroupOfTheLastMatch) {
  std::string why;
  auto t = read_time_us(regex_time("time: ([0-9.]+)"), "warming up\ntime: 10.5\ntime: 12.25\ndone\n", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 12.25);
  t = read_time_us(regex_time("took ([0-9.e+-]+) ms", 1e3), "took 1.5e-1 ms\n", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 150.0);
  t = read_time_us(regex_time("[0-9]+", 1e-3), "5000", why);  // no group: the whole match
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 5.0);
}

// A program's long lines are no reason to fail: the regex search once
// recursed per character (a line of 30k digits overflowed the stack), and it
// takes time quadratic in a line's length, so it keeps to each line's ends
// and the output's last 256 KiB.
TEST(CommandTime, LongLinesAreSearchedAtTheirEnds) {
  std::string why;
  auto t = read_time_us(regex_time("time_us: ([0-9.eE+-]+)"), "time_us: " + std::string(300000, '0') + "1.5\n", why);
  EXPECT_FALSE(t);  // the line's head holds the number's head: 0
  EXPECT_NE(why.find("not a positive number"), std::string::npos) << why;
  t = read_time_us(regex_time("([0-9.]+) us"), std::string(500000, '.') + " 7.25 us\n", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 7.25);
  t = read_time_us(regex_time("([0-9]+[.][0-9]+) ms", 1e3),
                   std::string(40000, '0') + "\nelapsed 1.5 ms\n" + std::string(200000, '9') + " x\n", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 1500.0);
  t = read_time_us(regex_time("time: ([0-9.]+)"), "time: 2.5 " + std::string(100000, '#') + "\n", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 2.5);
  // A time printed before more than 256 KiB of other lines is not looked for.
  std::string log = "time: 4\n";
  for (int i = 0; i < 30000; ++i) log += "step done\n";
  EXPECT_FALSE(read_time_us(regex_time("time: ([0-9.]+)"), log, why));
  EXPECT_NE(why.find("matches nothing in the output (searched from its last line up, 256 KiB of it)"),
            std::string::npos)
      << why;
  EXPECT_TRUE(read_time_us(regex_time("time: ([0-9.]+)"), log.substr(0, 200000), why)) << why;
}

TEST(CommandTime, RegexFailuresSayWhy) {
  std::string why;
  EXPECT_FALSE(read_time_us(regex_time("time: ([0-9.]+)"), "nothing here\n", why));
  EXPECT_NE(why.find("matches nothing"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(regex_time("time: (\\S+)"), "time: fast\n", why));
  EXPECT_NE(why.find("'fast', which is not a number"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(regex_time("time: (\\S+)"), "time: -3\n", why));
  EXPECT_NE(why.find("negative"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(regex_time("time: (\\S+)"), "time: 1e-320\n", why));
  EXPECT_NE(why.find("less than a picosecond"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(regex_time("time: (\\S+)", 1e-6), "time: 0.5\n", why));        // in ps
  EXPECT_TRUE(read_time_us(regex_time("time: (\\S+)", 1e-3), "time: 0.5\n", why)) << why;  // 0.5 ns
}

TEST(CommandTime, JsonPathInTheWholeOutputOrInALine) {
  std::string why;
  auto t = read_time_us(json_time("result.time_us"), R"({"result": {"time_us": 42.5}})", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 42.5);
  t = read_time_us(json_time("runs[1].s", 1e6), "log line\n{\"runs\": [{\"s\": 1}, {\"s\": 0.002}]}\nbye\n", why);
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 2000.0);
  t = read_time_us(json_time("runs.0.s"), "{\"runs\": [{\"s\": \"7\"}]}", why);  // a numeric string
  ASSERT_TRUE(t) << why;
  EXPECT_DOUBLE_EQ(*t, 7.0);
  EXPECT_FALSE(read_time_us(json_time("a.b"), "{\"a\": {\"c\": 1}}", why));
  EXPECT_NE(why.find("no 'a.b'"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(json_time("a"), "{\"a\": [1]}", why));
  EXPECT_NE(why.find("not a number"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(json_time("a"), "plain text", why));
  EXPECT_NE(why.find("no JSON"), std::string::npos) << why;
}

// A time too large for a double stops nlohmann's parser as if the output
// held no JSON: the message names the number as out of range, as it does
// for a string or a regex match that holds one.
TEST(CommandTime, ANumberOutOfRangeIsNamed) {
  std::string why;
  EXPECT_FALSE(read_time_us(json_time("time"), "{\"time\": 1e999}\n", why));
  EXPECT_EQ(why, "the number 1e999 in the JSON output is out of range for a double");
  EXPECT_FALSE(read_time_us(json_time("time"), "{\"time\": \"1e999\"}", why));
  EXPECT_NE(why.find("the number 1e999 at 'time' in the JSON output is out of range"), std::string::npos) << why;
  EXPECT_FALSE(read_time_us(regex_time("time: (\\S+)"), "time: 1e999\n", why));
  EXPECT_NE(why.find("the number 1e999 that the regex 'time: (\\S+)' matched is out of range"), std::string::npos)
      << why;
  // A word is still not a number.
  EXPECT_FALSE(read_time_us(regex_time("time: (\\S+)"), "time: inf\n", why));
  EXPECT_NE(why.find("'inf', which is not a number"), std::string::npos) << why;
}

TEST_F(CommandBackendTest, BackendNeedsAnApplication) {
  BackendOptions o;
  o.work_dir = dir_ / "cache";
  auto bare = make_backend("command", o);  // its machine is known without an application
  EXPECT_TRUE(bare->machine().properties.count("cores"));
  EXPECT_THROW(bare->make_builder(), InputError);
  EXPECT_THROW(bare->make_evaluator(), InputError);
  auto b = backend();
  EXPECT_EQ(b->name(), "command");
  EXPECT_NE(b->machine().device.find("host"), std::string::npos);
  EXPECT_TRUE(b->machine().properties.count("cores"));
  EXPECT_FALSE(b->measures_while_building());
}

TEST_F(CommandBackendTest, BuildWritesTheVariantAndIsCached) {
  script("build.sh", R"(echo "$@" >> builds.log
cp "$1" "$2"
echo built)");
  app_.build = {"bash", "build.sh", "{source}", "{binary}", "{dir}", "-DT={T}"};
  auto b = backend();
  auto builder = b->make_builder();
  Config c({{"T", 8}});
  BuildResult r = builder->build(input("int t = 8;\n", c));
  ASSERT_EQ(r.status, Status::ok) << r.log;
  EXPECT_FALSE(r.cached);
  EXPECT_EQ(r.artifact.path.filename(), "kernel.cpp");  // the original name, in the variant's folder
  EXPECT_EQ(slurp(r.artifact.path), "int t = 8;\n");
  EXPECT_EQ(slurp(r.artifact.path.parent_path() / "app"), "int t = 8;\n");
  const std::string d = r.artifact.path.parent_path().string();
  EXPECT_EQ(slurp(app_.workdir / "builds.log"), r.artifact.path.string() + " " + d + "/app " + d + " -DT=8\n");
  EXPECT_NE(r.log.find("built"), std::string::npos);

  BuildResult again = b->make_builder()->build(input("int t = 8;\n", c));  // a new run: served from disk
  EXPECT_EQ(again.status, Status::ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.artifact.path, r.artifact.path);
  EXPECT_EQ(count_lines(app_.workdir / "builds.log"), 1u);

  BuildResult other = builder->build(input("int t = 16;\n", Config({{"T", 16}})));
  EXPECT_EQ(other.status, Status::ok);
  EXPECT_NE(other.artifact.path.parent_path(), r.artifact.path.parent_path());
  EXPECT_EQ(count_lines(app_.workdir / "builds.log"), 2u);

  // --fresh rebuilds, once per run.
  auto fresh = backend(/*rebuild=*/true)->make_builder();
  EXPECT_FALSE(fresh->build(input("int t = 8;\n", c)).cached);
  EXPECT_TRUE(fresh->build(input("int t = 8;\n", c)).cached);
  EXPECT_EQ(count_lines(app_.workdir / "builds.log"), 3u);
}

TEST_F(CommandBackendTest, FailedBuildIsACompileErrorWithItsLog) {
  script("build.sh", "echo 'kernel.cpp:3: error: expected ;' >&2\nexit 1");
  app_.build = {"bash", "build.sh"};
  auto builder = backend()->make_builder();
  BuildResult r = builder->build(input("x"));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_EQ(r.log.substr(0, r.log.find('\n')), "build command exited with code 1: kernel.cpp:3: error: expected ;");
  EXPECT_NE(r.log.find("$ bash build.sh"), std::string::npos) << r.log;
  // Not marked as built: the next run tries again.
  EXPECT_FALSE(builder->build(input("x")).cached);
}

// A copy of the source that cannot be written whole (a full disk; here a
// file-size limit) is the machine's failure, says why, and leaves no part
// of itself in the build folder.
TEST_F(CommandBackendTest, ASourceCutShortIsTheMachinesAndLeavesNoPartBehind) {
  app_.build = {"true"};
  auto builder = backend()->make_builder();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit small{64, 64};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const BuildResult r = builder->build(input(std::string(1000, 'x')));
    const bool told = r.status == Status::compile_error && r.fault == Fault::environment &&
                      r.log.find("File too large") != std::string::npos;
    ::_exit(told ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "not the machine's failure, or the log does not say why";
  std::vector<std::string> parts;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "cache"))
    if (entry.is_regular_file() && entry.path().extension() == ".tmp") parts.push_back(entry.path().string());
  EXPECT_EQ(parts, std::vector<std::string>{}) << "a part of the source was left";
}

TEST_F(CommandBackendTest, BuildTimeoutAndMissingBuildTool) {
  // A build that would sleep ten minutes: the timeout, not its end, stops it.
  script("build.sh", "sleep 600");
  app_.build = {"bash", "build.sh"};
  app_.build_timeout = Seconds(0.3);
  BuildResult r = backend()->make_builder()->build(input("a"));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("timed out after 0.3 s"), std::string::npos) << r.log;
  EXPECT_LT(r.time.count(), 300.0);

  app_.build = {"no-such-build-tool-here"};
  r = backend()->make_builder()->build(input("b"));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("cannot run the build command"), std::string::npos) << r.log;
}

TEST_F(CommandBackendTest, TimeIsReadAndWarmupRunsCount) {
  app_.warmup = 2;
  TrialResult r = run("echo run >> runs.log\necho \"time: $1\"", {});
  // run.sh gets no $1 here: "time: " matches nothing numeric.
  EXPECT_EQ(r.status, Status::launch_error);

  app_.run = {"bash", "run.sh", "{N}"};
  fs::remove(app_.workdir / "runs.log");
  r = run("echo run >> runs.log\necho \"time: $1\"", {{"N", 250}});
  ASSERT_EQ(r.status, Status::ok) << r.error;
  ASSERT_EQ(r.samples.size(), 3u);
  for (auto s : r.samples) EXPECT_DOUBLE_EQ(s.count(), 250.0);
  EXPECT_DOUBLE_EQ(r.stats.median.count(), 250.0);
  EXPECT_EQ(count_lines(app_.workdir / "runs.log"), 5u);  // 2 warm-up + 3 samples

  app_.warmup = 0;
  fs::remove(app_.workdir / "runs.log");
  r = run("echo run >> runs.log\necho \"time: $1\"", {{"N", 7}});
  ASSERT_EQ(r.status, Status::ok) << r.error;
  EXPECT_EQ(r.samples.size(), 3u);
  EXPECT_EQ(count_lines(app_.workdir / "runs.log"), 3u);  // every run is a sample
}

TEST_F(CommandBackendTest, WallTimeWhenNothingIsPrinted) {
  app_.time = TimeSource{};
  TrialResult r = run("sleep 0.05");
  ASSERT_EQ(r.status, Status::ok) << r.error;
  EXPECT_GE(r.stats.median.count(), 50000.0);
  // In microseconds: nanoseconds read as such would be 5e7 or more.
  EXPECT_LT(r.stats.median.count(), 3e7);
}

TEST_F(CommandBackendTest, NonZeroExitIsACrashWithTheOutput) {
  TrialResult r = run("echo 'checking results'\necho 'mismatch at 3' >&2\nexit 3");
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.error.substr(0, r.error.find('\n')), "run exited with code 3: checking results");
  EXPECT_NE(r.error.find("mismatch at 3"), std::string::npos) << r.error;
  EXPECT_TRUE(r.samples.empty());
}

TEST_F(CommandBackendTest, SignalIsACrash) {
  TrialResult r = run("kill -SEGV $$");
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_NE(r.error.find("SIGSEGV"), std::string::npos) << r.error;
  EXPECT_EQ(r.fault, Fault::none);
  // A user's signals are the machine's doing, as for a worker's kernel: the
  // trial is made again at once. A program killed so again is the config's
  // (the OOM killer ends a program whose memory use passes a limit every
  // time), recorded rather than measured again on every resume.
  for (const char* sig : {"TERM", "QUIT"}) {  // (bash ignores its own SIGQUIT)
    const std::string kill = std::string("exec perl -e 'kill \"") + sig + "\", $$; sleep 5'";
    std::ofstream(app_.workdir / "once") << "";
    r = run("if rm once 2>/dev/null; then " + kill + "; fi\necho 'time: 5'");
    EXPECT_EQ(r.status, Status::ok) << sig << ": " << r.error;
    EXPECT_FALSE(fs::exists(app_.workdir / "once")) << sig;
    r = run(kill);
    EXPECT_EQ(r.status, Status::crash) << sig;
    EXPECT_EQ(r.fault, Fault::config) << sig << ": " << r.error;
    EXPECT_EQ(r.error.rfind("run killed by SIG" + std::string(sig), 0), 0u) << r.error;
    EXPECT_NE(r.error.find("twice in a row"), std::string::npos) << r.error;
  }
}

TEST_F(CommandBackendTest, HangIsATimeout) {
  app_.run_timeout = Seconds(0.3);
  const auto t0 = std::chrono::steady_clock::now();
  TrialResult r = run("echo started\nsleep 600");
  EXPECT_EQ(r.status, Status::timeout);
  EXPECT_NE(r.error.find("timed out after 0.3 s"), std::string::npos) << r.error;
  // Ended by the timeout, not by the ten-minute sleep.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 300.0);
}

TEST_F(CommandBackendTest, UnreadableTimeIsALaunchError) {
  TrialResult r = run("echo 'elapsed: soon'");
  EXPECT_EQ(r.status, Status::launch_error);
  EXPECT_EQ(r.error.substr(0, r.error.find('\n')),
            "no time in the output: the regex 'time: ([0-9.]+)' matches nothing in the output");
  EXPECT_NE(r.error.find("elapsed: soon"), std::string::npos) << r.error;
}

TEST_F(CommandBackendTest, MissingProgramAndUnknownPlaceholderAreLaunchErrors) {
  app_.run = {"./does-not-exist"};
  TrialResult r = run("");
  EXPECT_EQ(r.status, Status::launch_error);
  EXPECT_NE(r.error.find("cannot run the program"), std::string::npos) << r.error;
  EXPECT_EQ(r.fault, Fault::none);  // the build made no program: the config's

  app_.run = {"bash", "run.sh", "{NOPE}"};
  r = run("echo time: 1");
  EXPECT_EQ(r.status, Status::launch_error);
  EXPECT_NE(r.error.find("{NOPE}"), std::string::npos) << r.error;
}

// Before anything is built, once the sizes are known: a placeholder of the
// run command that names no parameter, size, machine property or variant
// path is the spec's error, at `run`, with a guess.
TEST_F(CommandBackendTest, AnUnknownPlaceholderOfTheRunIsFoundBeforeAnyBuild) {
  app_.run = {"bash", "run.sh", "{binary}", "{N}", "{TILE}", "{cores}"};
  app_.run_where = {"app.yaml", 7, 8};
  const Config config(std::vector<std::pair<std::string, Value>>{{"TILE", Value(std::int64_t{4})}});
  auto sizes = [&](const Bindings& size) {
    return std::vector<SizeToServe>{{size, [&](const auto& visit) { visit(config); }}};
  };
  auto b = backend();
  EXPECT_NO_THROW(b->check_sizes(sizes({{"N", Value(std::int64_t{64})}})));
  try {
    b->check_sizes(sizes({{"M", Value(std::int64_t{64})}}));
    ADD_FAILURE() << "{N} names nothing at size M=64";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("app.yaml:7:8: placeholder {N} in application.run names no parameter, size"), std::string::npos)
        << what;
    EXPECT_NE(what.find("did you mean {M}?"), std::string::npos) << what;
  }
  // With no sizes to serve there is nothing to check.
  EXPECT_NO_THROW(b->check_sizes({}));
}

TEST_F(CommandBackendTest, CommandLineIsTheRunArgvAsExecuted) {
  app_.run = {"{binary}", "--n={N}", "{T}", "{{x}}"};
  auto b = backend();
  BuildInput in = input("y", Config(std::vector<std::pair<std::string, Value>>{{"T", Value("a b")}}));
  BuildResult br = b->make_builder()->build(in);
  ASSERT_EQ(br.status, Status::ok);
  auto argv = b->command_line(in, {{"N", 5}, {"T", "a b"}});
  EXPECT_EQ(argv, (std::vector<std::string>{(br.artifact.path.parent_path() / "app").string(), "--n=5", "a b", "{x}"}));
}
