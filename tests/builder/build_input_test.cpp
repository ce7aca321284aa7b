#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "builder/detail/cache_claims.hpp"
#include "builder/detail/compiler.hpp"
#include "builder/detail/headers.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/builder.hpp"

using namespace tunekit;
namespace fs = std::filesystem;

namespace {

Spec spec_for(const std::filesystem::path& source, Injection injection = Injection::automatic) {
  Spec s;
  s.kernel.source = source;
  s.kernel.entry = "k";
  s.kernel.injection = injection;
  return s;
}

}  // namespace

TEST(BuildInput, HashFollowsEverythingThatShapesTheBinary) {
  BuildInput a;
  a.source = "int x;";
  a.entry = "k";
  a.compiler = "c++";
  a.flags = {"-O3"};
  const std::string base = a.hash();
  EXPECT_EQ(a.hash(), base);
  EXPECT_EQ(base.size(), 32u);
  auto changed = [&](auto mutate) {
    BuildInput b = a;
    mutate(b);
    return b.hash() != base;
  };
  EXPECT_TRUE(changed([](BuildInput& b) { b.source += " "; }));
  EXPECT_TRUE(changed([](BuildInput& b) { b.flags = {"-O2"}; }));
  EXPECT_TRUE(changed([](BuildInput& b) { b.flags = {"-O3", ""}; }));
  EXPECT_TRUE(changed([](BuildInput& b) { b.defines = {"A=1"}; }));
  EXPECT_TRUE(changed([](BuildInput& b) { b.compiler = "clang++"; }));
  EXPECT_TRUE(changed([](BuildInput& b) { b.entry = "k2"; }));
  EXPECT_TRUE(changed([](BuildInput& b) {
    ArgumentSpec x;
    x.name = "x";
    b.arguments = {x};
  }));
  // Where the source came from does not change the binary.
  EXPECT_FALSE(changed([](BuildInput& b) { b.source_name = "elsewhere.cpp"; }));
}

TEST(BuildInput, PlainSourcesGetDefines) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string src = "extern \"C\" void k() {}\n";
  BuildInput in = make_build_input(spec_for(dir / "k.cpp"), src, Config({{"BM", 64}, {"ORDER", "ikj"}}), {});
  EXPECT_EQ(in.source, src);
  EXPECT_EQ(in.defines, (std::vector<std::string>{"BM=64", "ORDER=ikj"}));
}

TEST(BuildInput, TunableLinesAreSubstituted) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string src = "constexpr int BM = 16; // tunable\nextern \"C\" void k() {}\n";
  BuildInput in = make_build_input(spec_for(dir / "k.cpp"), src, Config({{"BM", 64}}), {});
  EXPECT_TRUE(in.defines.empty());
  EXPECT_NE(in.source.find("constexpr int BM = 64;"), std::string::npos) << in.source;
  EXPECT_THROW(make_build_input(spec_for(dir / "k.cpp"), src, Config({{"BN", 64}}), {}), InputError);
}

TEST(BuildInput, RangeSourcesGetDefineLines) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string src = "// %RANGE% TUNE_BM bm 16:64:16\nextern \"C\" void k() {}\n";
  BuildInput in = make_build_input(spec_for(dir / "k.cpp"), src, Config({{"TUNE_BM", 32}}), {});
  EXPECT_TRUE(in.defines.empty());
  EXPECT_NE(in.source.find("#define TUNE_BM 32"), std::string::npos) << in.source;
  // An explicit choice overrides the detection.
  BuildInput forced = make_build_input(spec_for(dir / "k.cpp", Injection::defines), src, Config({{"TUNE_BM", 32}}), {});
  EXPECT_EQ(forced.defines, std::vector<std::string>{"TUNE_BM=32"});
}

TEST(BuildInput, AReferenceInTheKernelsSourceGetsTheDefaultsValues) {
  // An OpenCL kernel whose macros have no fallback: the reference function
  // beside it must be built with the default config's defines, or it does
  // not build at all.
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cl", "__kernel void k() { int a[TS]; }\n__kernel void ref() { int a[TS]; }\n");
  Spec s = spec_for(dir / "k.cl");
  s.kernel.language = "opencl";
  s.reference.kind = ReferenceSpec::Kind::function;
  s.reference.entry = "ref";
  s.default_config = Config({{"TS", 16}, {"WPT", 2}});
  BuildInput ref = make_reference_input(s);
  EXPECT_EQ(ref.entry, "ref");
  EXPECT_EQ(ref.defines, (std::vector<std::string>{"TS=16", "WPT=2"}));
  // A reference in a source of its own gets nothing injected.
  tunekit::testing::write_file(dir / "ref.cl", "__kernel void ref() {}\n");
  s.reference.source = dir / "ref.cl";
  EXPECT_TRUE(make_reference_input(s).defines.empty());
}

// kernel.defines go to every build: a reference function in the kernel's
// own source reads them as the variants do, evaluated at the size with the
// values it is built with. A separate reference source still gets nothing.
TEST(BuildInput, AReferenceInTheKernelsSourceGetsTheKernelsDefines) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void k() {}\nextern \"C\" void ref() {}\n");
  Spec s = spec_for(dir / "k.cpp");
  s.reference.kind = ReferenceSpec::Kind::function;
  s.reference.entry = "ref";
  s.default_config = Config({{"BM", 8}});
  s.kernel.defines = {{"SCALE", Expression::parse("BM + N"), {}}};
  const Config values({{"BM", 16}});
  EXPECT_EQ(make_reference_input(s, &values, {{"N", 4}}).defines, (std::vector<std::string>{"BM=16", "SCALE=20"}));
  EXPECT_EQ(make_reference_input(s, nullptr, {{"N", 4}}).defines, (std::vector<std::string>{"BM=8", "SCALE=12"}));
  EXPECT_EQ(make_reference_input(s, &values, {{"N", 4}}).defines, make_build_input(s, "", values, {{"N", 4}}).defines);
  tunekit::testing::write_file(dir / "ref.cpp", "extern \"C\" void ref() {}\n");
  s.reference.source = dir / "ref.cpp";
  EXPECT_TRUE(make_reference_input(s, &values, {{"N", 4}}).defines.empty());
}

// A file the flags hand the compiler (an extra source, an object, a library
// found in the flags' own -L folders) is built from its text: an edit to one
// is another variant, which the build cache must not serve from before it.
// Flags that name no file leave the hash as it was (files stays empty).
TEST(BuildInput, AFileTheFlagsNameIsPartOfTheHash) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string src = "extern \"C\" void k() {}\n";
  Spec s = spec_for(dir / "k.cpp");
  s.kernel.flags = {"-O2", "-o", (dir / "out.o").string(), "-MF", (dir / "k.d").string()};
  tunekit::testing::write_file(dir / "out.o", "written by every build");
  tunekit::testing::write_file(dir / "k.d", "written by every build");
  EXPECT_EQ(make_build_input(s, src, Config{}, {}).files, "");
  auto hash_with = [&](const std::vector<std::string>& flags) {
    s.kernel.flags = flags;
    return make_build_input(s, src, Config{}, {}).hash();
  };
  const std::vector<std::string> with_helper{"-O2", (dir / "helper.cpp").string()};
  tunekit::testing::write_file(dir / "helper.cpp", "extern \"C\" float helper(float a) { return 2 * a; }\n");
  const std::string before = hash_with(with_helper);
  EXPECT_NE(make_build_input(s, src, Config{}, {}).files, "");
  EXPECT_EQ(hash_with(with_helper), before);
  tunekit::testing::write_file(dir / "helper.cpp", "extern \"C\" float helper(float a) { return 30 * a; }\n");
  EXPECT_NE(hash_with(with_helper), before);
  // A relative operand is the compiler's: from the folder the build runs in.
  const fs::path here = fs::current_path();
  fs::current_path(dir);
  const std::string relative = hash_with({"-O2", "helper.cpp"});
  tunekit::testing::write_file(dir / "helper.cpp", "extern \"C\" float helper(float a) { return 4 * a; }\n");
  const std::string relative_edited = hash_with({"-O2", "helper.cpp"});
  fs::current_path(here);
  EXPECT_NE(relative_edited, relative);
  // -lNAME as the linker finds it in the -L folders the flags name.
  fs::create_directories(dir / "lib");
  tunekit::testing::write_file(dir / "lib" / "libhelp.a", "one");
  for (const auto& flags : {std::vector<std::string>{"-L" + (dir / "lib").string(), "-lhelp"},
                            std::vector<std::string>{"-L", (dir / "lib").string(), "-l", "help"}}) {
    tunekit::testing::write_file(dir / "lib" / "libhelp.a", "one");
    const std::string archive = hash_with(flags);
    tunekit::testing::write_file(dir / "lib" / "libhelp.a", "another");
    EXPECT_NE(hash_with(flags), archive);
  }
  // A library found on the system's own path is not followed.
  s.kernel.flags = {"-lm"};
  EXPECT_EQ(make_build_input(s, src, Config{}, {}).files, "");
}

namespace {
class CountingBuilder : public Builder {
 public:
  BuildResult build(const BuildInput& in) override {
    const int now = ++active_;
    int seen = max_active_.load();
    while (now > seen && !max_active_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --active_;
    BuildResult r;
    r.artifact.hash = in.source;
    return r;
  }
  std::atomic<int> active_{0}, max_active_{0};
};
}  // namespace

TEST(BuildParallel, BuildsEachInputOnceWithTheRequestedJobs) {
  std::vector<BuildInput> inputs(10);
  for (std::size_t i = 0; i < inputs.size(); ++i) inputs[i].source = std::to_string(i);
  CountingBuilder b;
  std::mutex m;
  std::multiset<std::size_t> done;
  build_parallel(b, inputs, 3, [&](std::size_t i, BuildResult r) {
    std::lock_guard lock(m);
    EXPECT_EQ(r.artifact.hash, std::to_string(i));
    done.insert(i);
  });
  EXPECT_EQ(done.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(done.count(i), 1u);
  EXPECT_LE(b.max_active_.load(), 3);
  EXPECT_GE(b.max_active_.load(), 2);  // it did build in parallel
}

// A compile log's words for a machine in trouble make a failed build the
// environment's, but not where the compiler quotes the source: an #error,
// a static assertion's message, a line of source under a diagnostic.
TEST(BuildFault, TheSourcesOwnWordsAreTheConfigs) {
  using tunekit::detail::build_fault;
  EXPECT_EQ(build_fault("cc1plus: out of memory allocating 65536 bytes\n", 0), Fault::environment);
  EXPECT_EQ(build_fault("/usr/bin/ld: final link failed: No space left on device\n", 0), Fault::environment);
  // A linker killed, as gcc's collect2 and clang's driver say it.
  EXPECT_EQ(build_fault("collect2: fatal error: ld terminated with signal 9 [Killed]\ncompilation terminated.\n", 1),
            Fault::environment);
  EXPECT_EQ(build_fault("clang: error: unable to execute command: Killed\n"
                        "clang: error: linker command failed due to signal (use -v to see invocation)\n",
                        1),
            Fault::environment);
  // A part of the toolchain that cannot run, a file it may not write, a
  // file-size limit: every config would fail alike.
  EXPECT_EQ(build_fault("c++: fatal error: cannot execute 'cc1plus': execvp: No such file or directory\n"
                        "compilation terminated.\n",
                        0),
            Fault::environment);
  EXPECT_EQ(build_fault("gcc: error trying to exec 'cc1plus': execvp: No such file or directory\n", 0),
            Fault::environment);
  EXPECT_EQ(build_fault("clang: error: unable to execute command: Executable \"ld\" doesn't exist!\n", 0),
            Fault::environment);
  EXPECT_EQ(build_fault("ccache: error: Failed to create temporary file for /home/a/.ccache/tmp/k.stdout: "
                        "Permission denied\n",
                        0),
            Fault::environment);
  EXPECT_EQ(build_fault("/usr/bin/ld: cannot open output file k.so: Permission denied\n", 0), Fault::environment);
  EXPECT_EQ(build_fault("/usr/bin/ld: final link failed: File too large\n", 0), Fault::environment);
  EXPECT_EQ(build_fault("", SIGXFSZ), Fault::environment);
  // The same words of the source's are still the config's.
  EXPECT_EQ(build_fault("k.cpp:2:2: error: #error \"Permission denied for this MODE\"\n", 0), Fault::config);
  EXPECT_EQ(build_fault("k.cpp:2:2: error: #error \"Cannot allocate memory for this MODE\"\n"
                        "    2 | #error \"Cannot allocate memory for this MODE\"\n"
                        "      |  ^~~~~\n",
                        0),
            Fault::config);
  EXPECT_EQ(build_fault("k.cpp:3:15: error: static assertion failed: No space left on device\n"
                        "    3 | static_assert(M > 1, \"No space left on device\");\n",
                        0),
            Fault::config);
  EXPECT_EQ(build_fault("k.cpp:1:1: error: expected ';'\n", SIGKILL), Fault::environment);
  // clang quotes the line bare, a caret line under it.
  EXPECT_EQ(build_fault("oom.cpp:4:3: error: use of undeclared identifier 'undefined_fn'\n"
                        "  std::puts(\"out of memory allocating scratch\"); undefined_fn();\n"
                        "                                                ^\n",
                        0),
            Fault::config);
  // A diagnostic at a place in the source carries the source's words (a
  // pragma's message, a deprecation's) and its path any words.
  EXPECT_EQ(build_fault("k.cpp:3:9: error: Permission denied to other kinds\n", 0), Fault::config);
  EXPECT_EQ(build_fault("k.cpp:7:3: warning: 'f' is deprecated: File too large for KIND 2 "
                        "[-Wdeprecated-declarations]\nk.cpp:9:1: error: expected ';'\n",
                        0),
            Fault::config);
  EXPECT_EQ(build_fault("/home/a/No space left on device/k.cpp:3:1: error: expected ';'\n", 0), Fault::config);
  EXPECT_EQ(build_fault("k.cu(12): error: Permission denied in this mode\n", 0), Fault::config);
  // A part of the compiler that crashed crashes again on the same input.
  EXPECT_EQ(build_fault("clang: error: unable to execute command: Segmentation fault (core dumped)\n", 0),
            Fault::config);
  // gcc may place its own failure to write its output at the source's last line.
  EXPECT_EQ(build_fault("k.cpp:26:1: fatal error: error writing to /tmp/ccYk3P.s: No space left on device\n", 0),
            Fault::environment);
}

// Silent every time: run twice, then the config's (a build script may
// reject a config without a word).
TEST(RunCompiler, ACompilerThatFailsSilentlyLeavesItsExitCode) {
  BuildResult r;
  EXPECT_FALSE(tunekit::detail::run_compiler({"false"}, "the compiler", kDefaultBuildTimeout, r));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_EQ(r.fault, Fault::config);
  EXPECT_EQ(r.log,
            "the compiler exited with code 1 and printed nothing, twice in a row (run again at once): taken to "
            "reject the config");
}

// A compiler never fails without a diagnostic: a silent failure once is run
// again at once, and a build that then succeeds is no compile_error stored
// against the config and reused on every resume.
TEST(RunCompiler, ACompilerThatFailsSilentlyOnceIsRunAgain) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const fs::path mark = dir / "fail-once";
  tunekit::testing::write_file(mark, "");
  BuildResult r;
  EXPECT_TRUE(tunekit::detail::run_compiler(
      {"sh", "-c", "if [ -e '" + mark.string() + "' ]; then rm '" + mark.string() + "'; exit 1; fi; exit 0"},
      "the compiler", kDefaultBuildTimeout, r))
      << r.log;
  EXPECT_FALSE(fs::exists(mark));

  // One that says why it failed is not run again.
  const fs::path count = dir / "runs";
  r = {};
  EXPECT_FALSE(tunekit::detail::run_compiler(
      {"sh", "-c", "echo run >> '" + count.string() + "'; echo 'k.cpp:1:1: error: nope'; exit 1"}, "the compiler",
      kDefaultBuildTimeout, r));
  EXPECT_EQ(tunekit::testing::read_file(count), "run\n");
  EXPECT_EQ(r.fault, Fault::config);
}

// The run again shares the build's limit with the first: a compiler silent
// after 2.5 s of a 4 s limit has 1.5 s left, not another 4, so a second run
// of 3 s is stopped (the time it could not have had).
TEST(RunCompiler, ACompilerRunAgainHasWhatIsLeftOfTheLimit) {
  const fs::path mark = tunekit::testing::fresh_dir() / "fail-once";
  tunekit::testing::write_file(mark, "");
  BuildResult r;
  EXPECT_FALSE(tunekit::detail::run_compiler(
      {"sh", "-c",
       "if [ -e '" + mark.string() + "' ]; then rm '" + mark.string() + "'; sleep 2.5; exit 1; fi; sleep 3; exit 0"},
      "the compiler", Seconds(4), r));
  EXPECT_FALSE(fs::exists(mark));  // it was run again
  EXPECT_EQ(r.log.substr(0, r.log.find('\n')), "the compiler timed out after 4 s (kernel.build_timeout)") << r.log;
}

// The limit is the build's (kernel.build_timeout), not a fixed 5 minutes: a
// compiler that would sleep a minute is stopped after 1 s, and the build is
// the config's compile_error, its log saying which limit ran out.
TEST(RunCompiler, StopsTheCompilerAtTheBuildsLimit) {
  BuildResult r;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(tunekit::detail::run_compiler({"sh", "-c", "echo started; sleep 60"}, "the compiler", Seconds(1), r));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_EQ(r.fault, Fault::config);
  EXPECT_EQ(r.log.substr(0, r.log.find('\n')), "the compiler timed out after 1 s (kernel.build_timeout)") << r.log;
  EXPECT_NE(r.log.find("started"), std::string::npos) << r.log;  // what it printed is kept
}

// make_build_input carries the spec's limit to the builder; the hash, which
// names what a build makes, does not depend on it.
TEST(BuildInput, CarriesTheSpecsBuildTimeoutOutsideTheHash) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "void k() {}\n");
  Spec s = spec_for(dir / "k.cpp");
  const BuildInput before = make_build_input(s, "void k() {}\n", Config{}, {});
  EXPECT_EQ(before.timeout, kDefaultBuildTimeout);
  s.kernel.build_timeout = Seconds(7);
  const BuildInput after = make_build_input(s, "void k() {}\n", Config{}, {});
  EXPECT_EQ(after.timeout, Seconds(7));
  EXPECT_EQ(after.hash(), before.hash());
}

// A compiler is told by the file its name runs, not by the name: c++ that
// now links to another compiler makes other variants (the build cache kept
// the first compiler's builds under the same name).
TEST(CompilerIdentity, IsTheFileTheNameRuns) {
  namespace fs = std::filesystem;
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "gcc-like", "#!/bin/sh\necho one\n");
  tunekit::testing::write_file(dir / "clang-like", "#!/bin/sh\necho two, longer\n");
  for (const char* f : {"gcc-like", "clang-like"}) fs::permissions(dir / f, fs::perms::owner_all);
  for (const char* d : {"a", "b", "c"}) fs::create_directories(dir / d);
  fs::create_symlink(dir / "gcc-like", dir / "a" / "cc");
  fs::create_symlink(dir / "clang-like", dir / "b" / "cc");
  fs::create_symlink(dir / "gcc-like", dir / "c" / "cc");
  using tunekit::detail::compiler_identity;
  const std::string a = compiler_identity((dir / "a" / "cc").string());
  EXPECT_NE(a.find("gcc-like"), std::string::npos) << a;
  EXPECT_NE(compiler_identity((dir / "b" / "cc").string()), a);
  EXPECT_EQ(compiler_identity((dir / "c" / "cc").string()), a);
  EXPECT_EQ(compiler_identity("no-such-compiler-anywhere"), "");
}

// In the kernel's identity a compiler is its release: what --version and
// -dumpmachine print, so the same release at another path, installed at
// another time, is the same compiler (a store read on another machine, an
// MPI rank's host), while another release, another target, or a wrapper
// script of other text is another. The build cache still tells the installs
// apart (BuildInput::hash keys on compiler_identity). A program that cannot
// say is known by its file, as before.
TEST(CompilerIdentity, TheReleaseIsWhatTheCompilerSaysNotItsFile) {
  const auto dir = tunekit::testing::fresh_dir();
  using tunekit::testing::write_file;
  const std::string says =
      "#!/bin/sh\nd=$(dirname \"$0\")\n"
      "case \"$1\" in --version) cat \"$d/version\";; -dumpmachine) cat \"$d/target\";; "
      "*) exit 1;; esac\n";
  auto install = [&](const std::string& folder, const std::string& script, const std::string& version,
                     const std::string& target) {
    fs::create_directories(dir / folder);
    write_file(dir / folder / "cc", script);
    fs::permissions(dir / folder / "cc", fs::perms::owner_all);
    write_file(dir / folder / "version", "\n" + version + "\nCopyright (C) the Fake Foundation\n");
    write_file(dir / folder / "target", target + "\n");
    return (dir / folder / "cc").string();
  };
  const std::string here = install("here", says, "fakecc (Fake 12.2.0-14) 12.2.0", "x86_64-linux-gnu");
  const std::string elsewhere = install("elsewhere", says, "fakecc (Fake 12.2.0-14) 12.2.0", "x86_64-linux-gnu");
  fs::last_write_time(elsewhere, fs::last_write_time(here) - std::chrono::hours(24 * 30));
  const std::string newer = install("newer", says, "fakecc (Fake 13.1.0-1) 13.1.0", "x86_64-linux-gnu");
  const std::string cross = install("cross", says, "fakecc (Fake 12.2.0-14) 12.2.0", "aarch64-linux-gnu");
  const std::string wrapper = install("wrapper", says + "# a wrapper that adds -DOFFSET=1\n",
                                      "fakecc (Fake 12.2.0-14) 12.2.0", "x86_64-linux-gnu");
  const std::string mute = install("mute", "#!/bin/sh\nexit 1\n", "", "");

  using tunekit::detail::compiler_identity;
  using tunekit::detail::compiler_release;
  const std::string release = compiler_release(here);
  EXPECT_EQ(release.rfind("fakecc (Fake 12.2.0-14) 12.2.0 for x86_64-linux-gnu script ", 0), 0u) << release;
  EXPECT_EQ(compiler_release(elsewhere), release);
  EXPECT_NE(compiler_identity(elsewhere), compiler_identity(here));
  EXPECT_NE(compiler_release(newer), release);
  EXPECT_NE(compiler_release(cross), release);
  EXPECT_NE(compiler_release(wrapper), release);
  EXPECT_EQ(compiler_release(mute), compiler_identity(mute));
  EXPECT_NE(compiler_release(mute), "");
  EXPECT_EQ(compiler_release("no-such-compiler-anywhere"), "");
}

// What a build killed before its rename left in the cache goes at the next
// builder's start: files of a pid that no longer runs, older than any build
// takes. A running process's, a fresh one's and the variants stay.
TEST(CacheFolder, FilesOfKilledBuildsAreRemoved) {
  namespace fs = std::filesystem;
  const auto dir = tunekit::testing::fresh_dir();
  const std::string hash(32, 'a');
  pid_t gone = 0;
  {
    char t[] = "true";
    char* argv[] = {t, nullptr};
    ASSERT_EQ(::posix_spawnp(&gone, "true", nullptr, nullptr, argv, environ), 0);
    int status = 0;
    ::waitpid(gone, &status, 0);
  }
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  const std::vector<std::string> leftovers{hash + "." + std::to_string(gone) + ".3.tmp.so",
                                           hash + "." + std::to_string(gone) + ".3.cpp",
                                           hash + ".cubin." + std::to_string(gone) + ".4.tmp"};
  const std::vector<std::string> kept{hash + ".so", hash + "." + std::to_string(::getpid()) + ".1.cpp",
                                      "notes." + std::to_string(gone) + ".1.txt"};
  for (const auto& f : leftovers) tunekit::testing::write_file(dir / f, "x");
  for (const auto& f : kept) tunekit::testing::write_file(dir / f, "x");
  for (const auto& f : leftovers) fs::last_write_time(dir / f, old);
  for (const auto& f : kept) fs::last_write_time(dir / f, old);
  tunekit::testing::write_file(dir / (hash + "." + std::to_string(gone) + ".5.cpp"), "x");  // fresh: a build of now
  tunekit::detail::remove_files_of_killed_builds(dir);
  for (const auto& f : leftovers) EXPECT_FALSE(fs::exists(dir / f)) << f;
  for (const auto& f : kept) EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_TRUE(fs::exists(dir / (hash + "." + std::to_string(gone) + ".5.cpp")));
}

// A Python kernel's own modules are its "headers": each import form that
// names a module beside the importer is followed, recursively; one that is
// not there (torch) is not.
TEST(BuildInput, APythonKernelsOwnModulesArePartOfItsDigest) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const std::string kernel =
      "import os, torch\nimport plain\nfrom dotted.sub import f\nfrom . import rel_a, rel_b\nfrom .rel_c import g\n";
  for (const char* module :
       {"plain.py", "dotted/__init__.py", "dotted/sub.py", "rel_a.py", "rel_b.py", "rel_c.py", "deep.py"})
    tunekit::testing::write_file(dir / module, "X = 1\n");
  tunekit::testing::write_file(dir / "rel_c.py", "import deep\n");
  tunekit::testing::write_file(dir / "k.py", kernel);
  auto digest = [&] { return detail::headers_digest_for(dir / "k.py", kernel, {}); };
  const std::string first = digest();
  ASSERT_FALSE(first.empty());
  for (const char* module : {"plain.py", "dotted/sub.py", "rel_a.py", "rel_b.py", "deep.py"}) {
    SCOPED_TRACE(module);
    tunekit::testing::write_file(dir / module, "X = 2\n");
    EXPECT_NE(digest(), first);
    tunekit::testing::write_file(dir / module, "X = 1\n");
    EXPECT_EQ(digest(), first);
  }
  tunekit::testing::write_file(dir / "unrelated.py", "X = 2\n");
  EXPECT_EQ(digest(), first);
}
