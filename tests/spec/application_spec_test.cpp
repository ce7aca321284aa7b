// The `application:` section (kernel.language: command): what it loads to,
// and every mistake reported at its file:line:column.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"
#include "support/spec_errors.hpp"

namespace fs = std::filesystem;
using namespace tunekit;
using ::testing::HasSubstr;

namespace {

class ApplicationSpec_ : public tunekit::testing::SpecErrors {
 protected:
  void SetUp() override {
    SpecErrors::SetUp();
    std::filesystem::create_directories(dir_ / "sub");
    std::ofstream(dir_ / "k.cpp") << "constexpr int T = 4; // tunable\nint main() {}\n";
  }
};

// 5 lines: a command kernel with one parameter and one size.
const std::string kHead =
    "kernel: {source: k.cpp, language: command}\n"
    "sizes: {N: 64}\n"
    "parameters: {T: [4, 8]}\n"
    "application:\n"
    "  run: [./app, '{N}']\n";

}  // namespace

TEST_F(ApplicationSpec_, LoadsEveryKey) {
  Spec s = load_spec(write(R"(kernel: {source: k.cpp, language: command}
sizes: {N: 64}
parameters: {T: [4, 8]}
application:
  build: [bash, build.sh, "{source}", "-DT={T}", "{{literal}}"]
  run: ["{binary}", "{N}", "--dir={dir}"]
  time: {json: 'result.runs[0].us', unit: ms}
  warmup: 3
  build_timeout: 90s
  run_timeout: 5s
  workdir: sub
)"));
  EXPECT_EQ(s.kernel.language, "command");
  EXPECT_EQ(s.name, "k");  // no entry: the source's stem
  EXPECT_TRUE(s.kernel.flags.empty());
  EXPECT_TRUE(s.arguments.empty());
  EXPECT_EQ(s.reference.kind, ReferenceSpec::Kind::none);
  ASSERT_TRUE(s.application.has_value());
  const ApplicationSpec& a = *s.application;
  EXPECT_EQ(a.build, (std::vector<std::string>{"bash", "build.sh", "{source}", "-DT={T}", "{{literal}}"}));
  EXPECT_EQ(a.run, (std::vector<std::string>{"{binary}", "{N}", "--dir={dir}"}));
  EXPECT_EQ(a.time.kind, TimeSource::Kind::json);
  EXPECT_EQ(a.time.pattern, "result.runs[0].us");
  EXPECT_DOUBLE_EQ(a.time.to_us, 1000.0);
  EXPECT_EQ(a.warmup, 3u);
  EXPECT_DOUBLE_EQ(a.build_timeout.count(), 90.0);
  ASSERT_TRUE(a.run_timeout.has_value());
  EXPECT_DOUBLE_EQ(a.run_timeout->count(), 5.0);
  EXPECT_EQ(a.workdir, (dir_ / "sub").lexically_normal());
}

TEST_F(ApplicationSpec_, Defaults) {
  Spec s = load_spec(write(kHead));
  ASSERT_TRUE(s.application.has_value());
  const ApplicationSpec& a = *s.application;
  EXPECT_TRUE(a.build.empty());
  EXPECT_EQ(a.time.kind, TimeSource::Kind::wall);
  EXPECT_EQ(a.warmup, 1u);
  EXPECT_FALSE(a.run_timeout.has_value());
  EXPECT_EQ(a.workdir, dir_.lexically_normal());
  EXPECT_FALSE(load_spec(write(kHead + "  time: wall\n")).application->time.pattern.size());
  Spec r = load_spec(write(kHead + "  time: {regex: 'took ([0-9.]+) s', unit: s}\n"));
  EXPECT_EQ(r.application->time.kind, TimeSource::Kind::regex);
  EXPECT_DOUBLE_EQ(r.application->time.to_us, 1e6);
}

TEST_F(ApplicationSpec_, Placeholders) {
  Bindings v{{"N", 64}, {"S", "a b; $(x)"}};
  EXPECT_EQ(substitute_placeholders("-n={N} {{N}} {S}", v), "-n=64 {N} a b; $(x)");
  EXPECT_EQ(placeholder_names("{a}x{ b }{{c}}"), (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(substitute_placeholders("{M}", v), InputError);
  EXPECT_THROW(placeholder_names("{N"), InputError);
  EXPECT_THROW(placeholder_names("N}"), InputError);
  EXPECT_THROW(placeholder_names("{1x}"), InputError);
}

TEST_F(ApplicationSpec_, ApplicationWithoutCommandLanguage) {
  expect_error("kernel: {source: k.cpp, entry: k}\narguments: []\napplication:\n  run: [a]\n", 3, 1,
               "'application' needs 'kernel.language: command'");
}

TEST_F(ApplicationSpec_, CommandWithoutApplication) {
  expect_error("kernel: {source: k.cpp, language: command}\n", 1, 1, "missing required key 'application' in spec");
}

TEST_F(ApplicationSpec_, ArgumentsDoNotApply) {
  expect_error(kHead + "arguments: []\n", 6, 1, "'arguments' does not apply to a command kernel");
}

TEST_F(ApplicationSpec_, ReferenceDoesNotApply) {
  expect_error(kHead + "reference: none\n", 6, 1, "'reference' does not apply to a command kernel");
}

TEST_F(ApplicationSpec_, CompilerFlagsDoNotApply) {
  expect_error("kernel: {source: k.cpp, language: command, flags: [-O2]}\n", 1, 44,
               "'flags' does not apply to a command kernel");
}

TEST_F(ApplicationSpec_, MissingRun) {
  expect_error("kernel: {source: k.cpp, language: command}\napplication:\n  build: [make]\n", 3, 3,
               "missing required key 'run' in 'application'");
}

TEST_F(ApplicationSpec_, UnknownKey) {
  expect_error(kHead + "  timeout: 5s\n", 6, 3, "unknown key 'timeout' in 'application'");
}

TEST_F(ApplicationSpec_, RunIsAStringNotAnArgv) {
  expect_error("kernel: {source: k.cpp, language: command}\napplication:\n  run: ./app 64\n", 3, 8,
               "'application.run' must be a list of strings (an argv: no shell runs it");
}

TEST_F(ApplicationSpec_, EmptyRun) {
  expect_error("kernel: {source: k.cpp, language: command}\napplication:\n  run: []\n", 3, 8,
               "'application.run' must be a non-empty argv list");
}

TEST_F(ApplicationSpec_, UnquotedPlaceholderIsAMapping) {
  expect_error("kernel: {source: k.cpp, language: command}\napplication:\n  run: [./app, {N}]\n", 3, 16,
               "quote an element that is a placeholder");
}

TEST_F(ApplicationSpec_, BuildPlaceholderNamesASize) {
  expect_error(kHead + "  build: [make, 'N={N}']\n", 6, 18,
               "'N' is a problem size, and sizes reach only the run command");
}

TEST_F(ApplicationSpec_, BuildPlaceholderTypo) {
  expect_error(kHead + "  build: [make, '{sourse}']\n", 6, 18, "did you mean {source}?");
}

TEST_F(ApplicationSpec_, UnclosedBrace) { expect_error(kHead + "  build: [make, 'x{T']\n", 6, 19, "unclosed '{'"); }

TEST_F(ApplicationSpec_, BadTimeString) {
  expect_error(kHead + "  time: cpu\n", 6, 9, "bad value 'cpu' for 'application.time'");
}

TEST_F(ApplicationSpec_, BadRegex) {
  expect_error(kHead + "  time: {regex: 'x(['}\n", 6, 18, "not a valid regular expression");
}

TEST_F(ApplicationSpec_, BothRegexAndJson) {
  expect_error(kHead + "  time: {regex: 'x', json: a.b}\n", 6, 28, "takes one of 'regex' and 'json', not both");
}

TEST_F(ApplicationSpec_, BadUnit) {
  expect_error(kHead + "  time: {regex: 'x (1)', unit: min}\n", 6, 32,
               "bad value 'min' for 'application.time.unit': expected one of us, ns, ms, s");
}

TEST_F(ApplicationSpec_, BadWorkdir) {
  expect_error(kHead + "  workdir: nowhere\n", 6, 12, "'application.workdir' 'nowhere' is not a folder");
}

TEST_F(ApplicationSpec_, NegativeWarmup) { expect_error(kHead + "  warmup: -1\n", 6, 11, "must be an integer >= 0"); }

TEST_F(ApplicationSpec_, ZeroTimeout) { expect_error(kHead + "  run_timeout: 0s\n", 6, 16, "must be a duration > 0"); }

// A JSON path the output could never match is the spec's error, at load,
// not every trial's launch_error.
TEST_F(ApplicationSpec_, AJsonPathThatIsNoPathIsRefused) {
  expect_error(kHead + "  time: {json: 'runs[0.time_us'}\n", 6, 17, "the '[' at character 5 is not closed");
  expect_error(kHead + "  time: {json: 'runs..time_us'}\n", 6, 17, "a name is missing at character 6");
  expect_error(kHead + "  time: {json: 'runs[-1].time_us'}\n", 6, 17, "'[-1]' is not an array index");
  expect_error(kHead + "  time: {json: 'runs.'}\n", 6, 17, "it ends with '.'");
  for (const char* path : {"a.b.c", "runs[0].time_us", "[2].t", "m[1][2]", "runs.0.us"})
    EXPECT_EQ(load_spec(write(kHead + "  time: {json: '" + path + "'}\n")).application->time.pattern, path);
}

// {source}, {dir} and {binary} are the build's: a parameter or size of that
// name would silently become a path.
TEST_F(ApplicationSpec_, AParameterOrSizeNamedLikeAVariantPathIsRefused) {
  std::ofstream(dir_ / "kd.cpp") << "constexpr int dir = 1; // tunable\n";
  expect_error(
      "kernel: {source: kd.cpp, language: command}\nparameters: {dir: [1, 2]}\napplication:\n  run: [echo, '{dir}']\n",
      2, 14, "parameter 'dir' has the name of a placeholder");
  expect_error("kernel: {source: k.cpp, language: command}\nsizes: {binary: 3}\napplication:\n  run: [echo]\n", 4, 3,
               "problem size 'binary' has the name of a placeholder");
}
