// What the spec loader refuses that it once accepted in silence, and lists
// large enough to show it loads them in linear time (issue #22).
#include <gtest/gtest.h>

#include <string>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

std::string load_error(const fs::path& dir, const std::string& yaml) {
  write_file(dir / "k.cpp", "extern \"C\" void f(float* y) { y[0] = 1; }\n");
  write_file(dir / "k.yaml",
             "kernel: {source: k.cpp, entry: f}\narguments:\n  - {name: y, type: f32, size: 1, role: out}\n" + yaml);
  try {
    (void)load_spec(dir / "k.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Item 22: the name becomes the output files' names; a path in it would
// write outside the output folder.
TEST(SpecLimits, ANameWithAPathIsRefused) {
  const auto dir = fresh_dir();
  for (const char* name : {"../../x", "a/b", "..", "."}) {
    const std::string e = load_error(dir, std::string("name: '") + name + "'\n");
    EXPECT_TRUE(contains(e, "k.yaml:4:")) << name << ": " << e;
    EXPECT_TRUE(contains(e, "must not contain '/'")) << e;
  }
  EXPECT_EQ(load_error(dir, "name: my_kernel.v2\n"), "");
}

// yaml-cpp gives up at about 500 levels of nesting in words of its own,
// "bad file": the error says what is wrong, in which file and on which line,
// and what a spec is like instead. In flow style ([[[...]]]) and in block
// style (each key indented under the one before).
TEST(SpecLimits, NestingPastTheYamlReadersLimitIsSaidAtItsLine) {
  const auto dir = fresh_dir();
  const std::string flow = load_error(dir, "sizes: " + std::string(600, '[') + "1" + std::string(600, ']') + "\n");
  EXPECT_TRUE(contains(flow, (dir / "k.yaml").string() + ":4:")) << flow;
  std::string deep = "sizes:\n";
  for (int i = 1; i <= 600; ++i) deep += std::string(2 * static_cast<std::size_t>(i), ' ') + "a:\n";
  const std::string block = load_error(dir, deep + std::string(1202, ' ') + "b: 1\n");
  EXPECT_TRUE(contains(block, (dir / "k.yaml").string() + ":")) << block.substr(0, 300);
  for (const std::string& e : {flow, block}) {
    EXPECT_TRUE(contains(e, "nested deeper than the YAML reader takes (about 500 levels")) << e.substr(0, 300);
    EXPECT_TRUE(contains(e, "expected a spec nested a few levels deep")) << e.substr(0, 300);
    EXPECT_FALSE(contains(e, "bad file")) << e.substr(0, 300);
  }
  // Under the limit, the spec's own error.
  const std::string shallow = load_error(dir, "sizes: " + std::string(100, '[') + "1" + std::string(100, ']') + "\n");
  EXPECT_TRUE(contains(shallow, "k.yaml:4:9: 'sizes[0]' must be a mapping")) << shallow;
}

// Item 28: a parameter is a macro; a reserved name would redefine the
// compiler's own.
TEST(SpecLimits, AReservedParameterNameIsRefused) {
  const auto dir = fresh_dir();
  for (const char* name : {"__cplusplus", "_GNU_SOURCE", "__x"}) {
    const std::string e = load_error(dir, std::string("parameters: {") + name + ": [1, 2]}\n");
    EXPECT_TRUE(contains(e, "is reserved")) << name << ": " << e;
    EXPECT_TRUE(contains(e, "k.yaml:4:")) << e;
  }
  EXPECT_EQ(load_error(dir, "parameters: {_tile: [1, 2], x_: [1]}\n"), "");
  // A configs list without parameters names them too.
  const std::string e = load_error(dir, "configs: [{__GNUC__: 1}]\n");
  EXPECT_TRUE(contains(e, "parameter name '__GNUC__' is reserved")) << e;
  EXPECT_TRUE(contains(e, "k.yaml:4:")) << e;
}

// Item 23: a default config with a value no config has is not dropped in
// silence: the spec loads, and the problem names the value and where the
// parameter's values are written (the tune prints it as a warning).
TEST(SpecLimits, ADefaultOutsideTheParametersValuesIsSaid) {
  const auto dir = fresh_dir();
  EXPECT_EQ(load_error(dir, "parameters: {BM: [16, 32]}\ndefault: {BM: 48}\n"), "");
  const Spec s = load_spec(dir / "k.yaml");
  const auto why = default_config_problem(s, s.sizes.front(), {});
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "BM = 48 is not among BM's values [16, 32] (")) << *why;
  EXPECT_TRUE(contains(*why, "k.yaml:4:")) << *why;
  // A string that reads like one of the numbers is told apart from it.
  const auto quoted = fresh_dir();
  EXPECT_EQ(load_error(quoted, "parameters: {BM: ['16', '32']}\ndefault: {BM: 16}\n"), "");
  const Spec q = load_spec(quoted / "k.yaml");
  const auto mixed = default_config_problem(q, q.sizes.front(), {});
  ASSERT_TRUE(mixed);
  EXPECT_TRUE(contains(*mixed, "BM = 16 is not among BM's values ['16', '32']")) << *mixed;
}

// Item 11: value lists and configs lists load in linear time. 200,000 values
// and 100,000 configs: the quadratic duplicate checks took hours on these
// (past the test's timeout); a linear load takes seconds.
TEST(SpecLimits, LongValueAndConfigListsLoad) {
  const auto dir = fresh_dir();
  std::string values, configs;
  values.reserve(200000 * 8);
  for (int i = 0; i < 200000; ++i) values += (i ? ", " : "") + std::to_string(i);
  configs.reserve(100000 * 12);
  for (int i = 0; i < 100000; ++i) configs += std::string(i ? ", " : "") + "{X: " + std::to_string(i) + "}";
  write_file(dir / "k.cpp", "extern \"C\" void f(float* y) { y[0] = 1; }\n");
  write_file(dir / "k.yaml",
             "kernel: {source: k.cpp, entry: f}\narguments:\n  - {name: y, type: f32, size: 1, role: out}\n"
             "parameters: {X: [" +
                 values + "]}\nconfigs: [" + configs + "]\n");
  const Spec s = load_spec(dir / "k.yaml");
  ASSERT_EQ(s.parameters.size(), 1u);
  EXPECT_EQ(s.parameters[0].values.size(), 200000u);
  EXPECT_EQ(s.configs.size(), 100000u);
  // A duplicate far down the list is still found, with both places.
  configs += ", {X: 99999}";
  write_file(dir / "k.yaml",
             "kernel: {source: k.cpp, entry: f}\narguments:\n  - {name: y, type: f32, size: 1, role: out}\n"
             "parameters: {X: [" +
                 values + "]}\nconfigs: [" + configs + "]\n");
  EXPECT_THROW((void)load_spec(dir / "k.yaml"), InputError);
}

// A Kernel Tuner port: tune_params written as a Python list expression, as
// Kernel Tuner's examples and a T1 file's Values write them. Once a quoted
// one was a single string value (each build got -Dblock_size_x=[128+64*i
// ...]), and an unquoted one a YAML list of one string.
TEST(SpecLimits, AParameterWrittenAsAPythonListExpressionIsEvaluated) {
  const auto dir = fresh_dir();
  EXPECT_EQ(load_error(dir,
                       "parameters:\n  BX: \"[128+64*i for i in range(3)]\"\n  BY: 'list(range(1, 4))'\n"
                       "  TX: \"[2**i for i in range(3)] + [16]\"\n"),
            "");
  const Spec s = load_spec(dir / "k.yaml");
  ASSERT_EQ(s.parameters.size(), 3u);
  std::vector<std::string> bx, by, tx;
  for (const auto& v : s.parameters[0].values) bx.push_back(v.repr());
  for (const auto& v : s.parameters[1].values) by.push_back(v.repr());
  for (const auto& v : s.parameters[2].values) tx.push_back(v.repr());
  EXPECT_EQ(bx, (std::vector<std::string>{"128", "192", "256"}));
  EXPECT_EQ(by, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(tx, (std::vector<std::string>{"1", "2", "4", "16"}));
  // Errors name the spec's line, and the parameter.
  const std::string bad = load_error(dir, "parameters:\n  BX: \"[i for i in rang(3)]\"\n");
  EXPECT_TRUE(contains(bad, "k.yaml:5:")) << bad;
  EXPECT_TRUE(contains(bad, "parameter 'BX'")) << bad;
  const std::string twice = load_error(dir, "parameters:\n  BX: \"[1, 2] + [2]\"\n");
  EXPECT_TRUE(contains(twice, "duplicate value 2 in parameter 'BX'")) << twice;
  // Unquoted, YAML reads a list of one string: said, with the quoting.
  const std::string unquoted = load_error(dir, "parameters:\n  BX: [128+64*i for i in range(3)]\n");
  EXPECT_TRUE(contains(unquoted, "k.yaml:5:")) << unquoted;
  EXPECT_TRUE(contains(unquoted, "reads as a Python comprehension")) << unquoted;
  EXPECT_TRUE(contains(unquoted, "BX: \"[128+64*i for i in range(3)]\"")) << unquoted;
  // A comma in it splits it into several strings: the quoting suggested
  // is of the whole list, which then loads.
  const std::string split = load_error(dir, "parameters:\n  BX: [2**i for i in range(3, 7)]\n");
  EXPECT_TRUE(contains(split, "a list of 2 strings, split at its commas")) << split;
  EXPECT_TRUE(contains(split, "BX: \"[2**i for i in range(3, 7)]\"")) << split;
  EXPECT_EQ(load_error(dir, "parameters:\n  BX: \"[2**i for i in range(3, 7)]\"\n"), "");
  // A range string and a quoted list element stay what they were.
  EXPECT_EQ(load_error(dir, "parameters:\n  BX: '1:3'\n  S: ['a for b in c']\n"), "");
}

// A Kernel Tuner port: Kernel Tuner's output buffer is a numpy.zeros array
// that a kernel may accumulate into. A fill on an `out` buffer was ignored
// in silence (outputs start as NaN before each verified run), and the tune
// stopped with "the reference's output 'c' has nan at element 0".
TEST(SpecLimits, AFillOnAnOutputIsRefusedForInout) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void f(float* y) { y[0] += 1; }\n");
  for (const char* fill : {"zeros", "{constant: 0}", "random"}) {
    write_file(dir / "k.yaml", std::string("kernel: {source: k.cpp, entry: f}\narguments:\n"
                                           "  - {name: y, type: f32, size: 1, role: out, fill: ") +
                                   fill + "}\n");
    try {
      (void)load_spec(dir / "k.yaml");
      ADD_FAILURE() << fill << ": loaded";
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_TRUE(contains(m, "k.yaml:3:")) << m;
      EXPECT_TRUE(contains(m, "argument 'y' has role 'out'")) << m;
      EXPECT_TRUE(contains(m, "role: inout")) << m;
    }
  }
  write_file(
      dir / "k.yaml",
      "kernel: {source: k.cpp, entry: f}\narguments:\n  - {name: y, type: f32, size: 1, role: inout, fill: zeros}\n"
      "  - {name: z, type: f32, size: 1, role: out}\n");
  EXPECT_NO_THROW((void)load_spec(dir / "k.yaml"));
}
