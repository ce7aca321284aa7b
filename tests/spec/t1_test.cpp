// Kernel Tuner T1 and neutral JSON spaces: the Values list evaluator (the
// expected lists are Python's own eval of the same text), the loaders, and
// the exact counts of the T1 files in tests/spec/data/t1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "support/temp_dir.hpp"
#include "tunekit/error.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/t1.hpp"

namespace fs = std::filesystem;
using namespace tunekit;

namespace {

std::string show(const std::vector<Value>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i].repr();
  return out + "]";
}

std::string eval(const std::string& text) { return show(evaluate_value_list(text)); }

// The T1 files and published spaces these tests read, in the repository.
fs::path t1_dir() { return fs::path(std::string(TUNEKIT_SOURCE_DIR) + "/tests/spec/data/t1"); }
fs::path spaces_dir() { return fs::path(std::string(TUNEKIT_SOURCE_DIR) + "/tests/space/data/spaces"); }

}  // namespace

TEST(T1Values, PythonListExpressions) {
  EXPECT_EQ(eval("[2**i for i in range(0,6)]"), "[1, 2, 4, 8, 16, 32]");
  EXPECT_EQ(evaluate_value_list("range(32, 1025, 32)").size(), 32u);
  EXPECT_EQ(eval("range(32, 1025, 32)").substr(0, 14), "[32, 64, 96, 1");
  auto bx = evaluate_value_list("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))");
  ASSERT_EQ(bx.size(), 37u);
  EXPECT_EQ(bx[5].as_int(), 32);
  EXPECT_EQ(bx.back().as_int(), 1024);
  EXPECT_EQ(eval("[i for i in range(1, 10+1)]"), "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
  EXPECT_EQ(eval("[2**i for i in range(5, 11)][::-1]"), "[1024, 512, 256, 128, 64, 32]");
  EXPECT_EQ(eval("[a*b for a in range(1,4) for b in range(a) if (a+b) % 2 == 0]"), "[0, 3]");
  EXPECT_EQ(eval("(1, 2.5, 'x')"), "[1, 2.5, 'x']");
  EXPECT_EQ(eval("[x // 2 for x in [8, -7, 3] if x]"), "[4, -4, 1]");
  EXPECT_EQ(eval("list(range(10))[2:8:3]"), "[2, 5]");
  EXPECT_EQ(eval("list(range(10))[-3:]"), "[7, 8, 9]");
  EXPECT_EQ(eval("list(range(10))[::-4]"), "[9, 5, 1]");
  EXPECT_EQ(eval("sorted([3, 1, 2], reverse=True)"), "[3, 2, 1]");
  EXPECT_EQ(eval("[0] * 3 + [1]"), "[0, 0, 0, 1]");
  EXPECT_EQ(eval("[True, False]"), "[1, 0]");  // bools are the ints 1 and 0
  EXPECT_EQ(eval("tuple(range(3, 0, -1))"), "[3, 2, 1]");
  EXPECT_EQ(eval("[]"), "[]");
  EXPECT_EQ(eval("[x for x in range(0)]"), "[]");
  EXPECT_EQ(eval("[min(x, 4) for x in range(8) if x % 3 != 1]"), "[0, 2, 3, 4, 4]");
  EXPECT_EQ(eval("[\"a\", \"b,c\"]"), "['a', 'b,c']");
  EXPECT_EQ(eval("[i * 0.5 for i in range(3)]"), "[0.0, 0.5, 1.0]");
  EXPECT_EQ(eval(" [ 1 ,2, ] "), "[1, 2]");
  EXPECT_EQ(eval("([1] + [2])"), "[1, 2]");
}

TEST(T1Values, ErrorsAreInputErrors) {
  for (const char* bad : {"range(1.5)", "[1, 2", "[x for x in range(3)", "[i for i in range(3)][1]", "banana",
                          "[y for x in range(3)]", "range(1, 5, 0)", "[1/0]", "[1] + 2", "range(1, 2, 3, 4)"}) {
    EXPECT_THROW(evaluate_value_list(bad, SourceLocation{"t1.json", 0, 0}), InputError) << bad;
  }
  try {
    evaluate_value_list("range(2.5)", SourceLocation{"t1.json", 0, 0});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("range() needs integers"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().file, "t1.json");
  }
}

// A repetition binds tighter than a concatenation, as in Python, on either
// side of its count (Python's eval gives each of these lists).
TEST(T1Values, RepetitionBindsTighterThanConcatenation) {
  EXPECT_EQ(eval("[1, 2] + [3] * 0 + [4]"), "[1, 2, 4]");
  EXPECT_EQ(eval("[3] * 2 + [1]"), "[3, 3, 1]");
  EXPECT_EQ(eval("[1] + [2] * 2"), "[1, 2, 2]");
  EXPECT_EQ(eval("[1] + 2 * [0] + [5]"), "[1, 0, 0, 5]");
  EXPECT_EQ(eval("2 * [1, 2]"), "[1, 2, 1, 2]");
  EXPECT_EQ(eval("2**1 * [7] * 2"), "[7, 7, 7, 7]");
  EXPECT_EQ(eval("(1 + 1) * [7]"), "[7, 7]");
  EXPECT_EQ(eval("[1] * 2 * 2"), "[1, 1, 1, 1]");
  EXPECT_EQ(eval("[1] * -1 + [2]"), "[2]");
  EXPECT_EQ(eval("[x for x in 2 * [1, 2] if x > 1]"), "[2, 2]");
  EXPECT_EQ(eval("(1, 2) * 2 + (3,)"), "[1, 2, 1, 2, 3]");
}

// Python concatenates a list to a list and a tuple to a tuple only, and
// repeats neither a range nor a generator: such a Values text does not load
// in Kernel Tuner, so it is refused here too, at the operator.
TEST(T1Values, SequencesOfOtherTypesDoNotCombine) {
  EXPECT_EQ(eval("list(range(2)) + [5]"), "[0, 1, 5]");
  EXPECT_EQ(eval("tuple([1]) + (2,)"), "[1, 2]");
  EXPECT_EQ(eval("list(range(5)[1:3]) + sorted((4, 3))"), "[1, 2, 3, 4]");
  EXPECT_EQ(eval("(range(3))[1:]"), "[1, 2]");
  for (const auto& [text, why, column] : std::vector<std::tuple<std::string, std::string, int>>{
           {"list(range(3)) + range(0)", "can only concatenate list (not \"range\") to list", 20},
           {"tuple(range(4)) + []", "can only concatenate tuple (not \"list\") to tuple", 21},
           {"[1] + (2,)", "can only concatenate list (not \"tuple\") to list", 9},
           {"range(3) + [1]", "unsupported operand type(s) for +: 'range' and 'list'", 14},
           {"(range(3)) * 1", "unsupported operand type(s) for *: 'range' and 'int'", 16},
           {"2 * range(3)", "unsupported operand type(s) for *: 'int' and 'range'", 5},
           {"(x for x in [1])[:]", "'generator' object is not subscriptable", 22},
       }) {
    try {
      evaluate_value_list(text, SourceLocation{"t1.json", 3, 5});
      ADD_FAILURE() << text << " was evaluated";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
      EXPECT_EQ(e.where().line, 3) << text;
      EXPECT_EQ(e.where().column, column) << text << ": " << e.what();
    }
  }
}

// However deeply a Values expression nests, it ends as an error, not as a
// stack overflow (30,000 levels of each of these crashed); a long sum is
// one concatenation, so it neither nests nor counts its parts again; and
// the bound on the work an inner loop does (20 million elements made) says
// so, not that the list is too long.
TEST(T1Values, DeepOrLongExpressionsEndAsErrorsOrLists) {
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 30000;
  for (const std::string& text :
       {repeat("(", n) + "[1]" + repeat(")", n), "[1]" + repeat("[:]", n), "[1]" + repeat("*1", n),
        repeat("sorted(", n) + "[1]" + repeat(")", n), "[1" + repeat(" for x in [1]", n) + "]"}) {
    try {
      evaluate_value_list(text, SourceLocation{"t1.json", 3, 5});
      ADD_FAILURE() << text.substr(0, 20) << " was evaluated";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("nested too deeply"), std::string::npos) << e.what();
    }
  }
  std::string sum = "[0]";
  for (int i = 1; i < 5000; ++i) sum += "+[" + std::to_string(i) + "]";
  const auto values = evaluate_value_list(sum);
  ASSERT_EQ(values.size(), 5000u);
  EXPECT_EQ(values.back().as_int(), 4999);
  try {
    evaluate_value_list("[x for x in range(5000) for y in range(5000) if 0]");
    ADD_FAILURE() << "25 million steps ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("counting the lists it builds on the way"), std::string::npos) << e.what();
  }
}

TEST(T1Files, SharedT1CountsMatchPython) {
  ASSERT_TRUE(fs::is_directory(t1_dir())) << t1_dir() << " is missing from the repository";
  struct Want {
    const char* file;
    std::size_t params, conditions;
    std::uint64_t cartesian, valid;
  };
  // From tests/spec/data/t1/README.md (Python's eval over the Cartesian product).
  for (const Want& w :
       {Want{"convolution_milo.json", 10, 4, 10240, 4362}, Want{"dedispersion_milo.json", 8, 3, 22272, 11130},
        Want{"hotspot_milo.json", 10, 4, 4440000, 82984}, Want{"gemm_milo.json", 17, 8, 663552, 116928}}) {
    SpaceDefinition d = load_space_definition(t1_dir() / w.file);
    EXPECT_EQ(d.format, "t1");
    EXPECT_EQ(d.parameters.size(), w.params) << w.file;
    EXPECT_EQ(d.constraints.size(), w.conditions) << w.file;
    Space s(d.parameters, d.constraints, d.constants);
    EXPECT_EQ(s.cartesian_size(), w.cartesian) << w.file;
    EXPECT_EQ(s.count(), w.valid) << w.file;
  }
}

TEST(T1Files, NeutralJsonSpaces) {
  ASSERT_TRUE(fs::is_directory(spaces_dir())) << spaces_dir() << " is missing from the repository";
  for (const char* f : {"dedispersion.json", "expdist.json", "gemm.json", "hotspot.json", "microhh.json"}) {
    SpaceDefinition d = load_space_definition(spaces_dir() / f);
    EXPECT_EQ(d.format, "json");
    ASSERT_TRUE(d.expected_valid.has_value());
    Space s(d.parameters, d.constraints, d.constants);
    EXPECT_EQ(s.cartesian_size(), *d.expected_cartesian) << f;
    EXPECT_EQ(s.count(), *d.expected_valid) << f;
  }
}

TEST(T1Files, HandWrittenT1AndErrors) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto write = [&](const std::string& name, const std::string& text) {
    fs::path p = dir / name;
    tunekit::testing::write_file(p, text);
    return p;
  };
  fs::path ok = write("k.json", R"({"General": {"BenchmarkName": "k"}, "ConfigurationSpace": {
      "TuningParameters": [
        {"Name": "a", "Type": "int", "Values": "[2**i for i in range(4)]"},
        {"Name": "b", "Type": "int", "Values": [1, 2, 3]},
        {"Name": "s", "Type": "string", "Values": "['x', 'y']"}],
      "Conditions": [{"Expression": "a * b <= 8", "Parameters": ["a", "b"]}, "s == 'x' or a > 1"]}})");
  SpaceDefinition d = load_t1(ok);
  EXPECT_EQ(d.name, "k");
  ASSERT_EQ(d.parameters.size(), 3u);
  EXPECT_EQ(show(d.parameters[0].values), "[1, 2, 4, 8]");
  Space s(d.parameters, d.constraints);
  std::uint64_t want = 0;
  for (int a : {1, 2, 4, 8})
    for (int b : {1, 2, 3})
      for (int x = 0; x < 2; ++x) want += a * b <= 8 && (x == 0 || a > 1);
  EXPECT_EQ(s.count(), want);

  EXPECT_THROW(load_t1(write("bad1.json", R"({"ConfigurationSpace": {}})")), InputError);
  EXPECT_THROW(
      load_t1(write("bad2.json", R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Values": "[1,"}]}})")),
      InputError);
  EXPECT_THROW(load_t1(write("bad3.json", "{not json")), InputError);
  // A syntax error is located at its line and column, as a YAML spec's is.
  try {
    load_t1(write("comma.json", "{\"ConfigurationSpace\": {\n  \"TuningParameters\": [],\n}}"));
    ADD_FAILURE() << "a trailing comma was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, (dir / "comma.json").string());
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 1);
    EXPECT_EQ(std::string(e.message()).rfind("invalid JSON: syntax error while parsing object key", 0), 0u)
        << e.message();
  }
  // A number past double's range: found by tests/fuzz/t1_fuzz, once an
  // exception other than InputError that ended the program.
  EXPECT_THROW(load_t1(write("overflow.json", "111e1115")), InputError);
  try {
    load_t1(
        write("overflow2.json",
              "{\"ConfigurationSpace\": {\"TuningParameters\": [\n  {\"Name\": \"a\", \"Values\": [1, -1e999]}]}}"));
    ADD_FAILURE() << "1e999 was read";
  } catch (const InputError& e) {  // where it is, not the parser's exception id
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 31);
    EXPECT_EQ(e.message(), "invalid JSON: a number too large for a double (beyond 1.8e308)");
  }
  EXPECT_THROW(load_space_json(write("bad4.json", R"({"parameters": [{"name": "a", "values": [[1]]}]})")), InputError);
  // A parameter without values, in either format (once a crash of `tunekit
  // space` when a constraint read it).
  EXPECT_THROW(load_space_json(write("empty.json", R"({"parameters": [{"name": "a", "values": []}],
      "constraints": ["a > 1"]})")),
               InputError);
  EXPECT_THROW(load_t1(write("empty_t1.json", R"({"ConfigurationSpace": {"TuningParameters": [
      {"Name": "a", "Type": "int", "Values": "[]"}], "Conditions": [{"Expression": "a > 1", "Parameters": ["a"]}]}})")),
               InputError);
  // Built anyway (the engine allows it), such a space is empty and says why.
  const Space no_values({Parameter{"a", {}, {}}}, {Expression::parse("a > 1")});
  EXPECT_TRUE(no_values.constraint_errors().empty());
  EXPECT_EQ(no_values.why_empty(), "parameter 'a' has no values");
  EXPECT_THROW(load_space_definition(dir / "missing.json"), InputError);

  // An error inside a condition or a Values string is located at its line
  // and column in the file, and names the entry.
  // What `load` says of `text` written to `name` ("read" when it is read).
  auto error_of = [&](SpaceDefinition (*load)(const fs::path&), const std::string& name,
                      const std::string& text) -> std::string {
    try {
      load(write(name, text));
    } catch (const InputError& e) {
      return e.what();
    }
    return "read";
  };
  auto where_of = [&](const std::string& name, const std::string& text) { return error_of(load_t1, name, text); };
  const std::string head = "{\"ConfigurationSpace\": {\n \"TuningParameters\": [\n  {\"Name\": \"a\", \"Values\": ";
  EXPECT_EQ(where_of("cond.json", head + "[1, 2]}],\n \"Conditions\": [\"a > 1\",\n  {\"Expression\": \"a >\"}]}}"),
            (dir / "cond.json").string() +
                ":5:22: ConfigurationSpace.Conditions[1].Expression: expected an expression after '>'");
  EXPECT_EQ(where_of("values.json", head + "\"[1, 2 +]\"}]}}"),
            (dir / "values.json").string() + ":3:35: ConfigurationSpace.TuningParameters[0].Values: " +
                "expected an expression after '+'");
  EXPECT_EQ(where_of("name.json", head + "[1]},\n  {\"Values\": [2]}]}}"),
            (dir / "name.json").string() + ":4:3: ConfigurationSpace.TuningParameters[1]: a tuning parameter has no \"Name\"");

  // A name the space lacks, found when the space is built, is located at the
  // condition's text too; so is a "Parameters" entry that is no parameter.
  const auto unknown =
      load_t1(write("unknown.json", head + "[1, 2]}],\n \"Conditions\": [\n  {\"Expression\": \"a * ty > 1\"}]}}"));
  try {
    (void)Space(unknown.parameters, unknown.constraints);
    ADD_FAILURE() << "an unknown name was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "unknown.json").string() + ":5:19: unknown name 'ty'", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(
      where_of(
          "listed.json",
          head + "[1, 2]}],\n \"Conditions\": [\n  {\"Expression\": \"a > 1\", \"Parameters\": [\"a\", \"aa\"]}]}}"),
      (dir / "listed.json").string() +
          ":5:47: ConfigurationSpace.Conditions[0].Parameters[1]: 'aa' is not a parameter of this space "
          "(parameters: a); did you mean 'a'?");

  // A misspelt key was ignored: "Condition" left the space unconstrained.
  EXPECT_EQ(where_of("misspelt.json", head + "[1, 2]}],\n \"Condition\": [\"a > 1\"]}}"),
            (dir / "misspelt.json").string() +
                ":4:2: unknown key \"Condition\" in ConfigurationSpace (known: TuningParameters, Conditions); did you "
                "mean \"Conditions\"?");
  EXPECT_EQ(where_of("valeus.json", head + "[1, 2], \"Valeus\": [3]}]}}"),
            (dir / "valeus.json").string() +
                ":3:35: unknown key \"Valeus\" in ConfigurationSpace.TuningParameters[0] (known: Name, Type, Values, "
                "Default, Description); did you mean \"Values\"?");
  // A value listed twice was counted twice; a type T1 does not have was taken.
  EXPECT_EQ(where_of("twice.json", head + "\"[16, 16]\"}]}}"),
            (dir / "twice.json").string() + ":3:3: ConfigurationSpace.TuningParameters[0]: tuning parameter 'a': duplicate "
                "value 16");
  EXPECT_EQ(where_of("type.json", head + "[1], \"Type\": \"integer\"}]}}"),
            (dir / "type.json").string() +
                ":3:3: ConfigurationSpace.TuningParameters[0]: Type \"integer\" is not a T1 type "
                "(int, uint, float, string, bool)");
  EXPECT_EQ(where_of("dup.json", head + "[1]}, {\"Name\": \"a\", \"Values\": [2]}]}}"),
            (dir / "dup.json").string() + ":3:33: ConfigurationSpace.TuningParameters[1]: duplicate parameter 'a'");

  // The neutral space format, the same way.
  auto neutral_error = [&](const std::string& name, const std::string& text) {
    return error_of(load_space_json, name, text);
  };
  EXPECT_EQ(neutral_error("n1.json", "{\"parameters\": [{\"name\": \"a\", \"values\": [1, 2]}],\n \"constraint\": [\"a > 1\"]}"),
            (dir / "n1.json").string() +
                ":2:2: unknown key \"constraint\" in the space file (known: name, parameters, constraints, expected, "
                "notes, source); did you mean \"constraints\"?");
  EXPECT_EQ(neutral_error("n2.json", "{\"parameters\": [\n {\"name\": \"a\", \"values\": [1, 1]}]}"),
            (dir / "n2.json").string() + ":2:2: parameters[0]: parameter 'a': duplicate value 1");
  EXPECT_EQ(neutral_error("n3.json", "{\"parameters\": [{\"name\": \"a\", \"values\": [1]}],\n \"constraints\": [\"a >\"]}"),
            (dir / "n3.json").string() + ":2:22: constraints[0]: expected an expression after '>'");
}

// Every loader refuses a value listed twice by one rule, Python's equality
// (the spec format's "a list of distinct values"): 1, 1.0 and true are one
// value, and so are 0.0 and -0.0; 2**53 + 1 is not the float 2**53, nor 1
// the string '1'.
TEST(T1Files, EveryLoaderRefusesTheSameDuplicates) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp", "extern \"C\" void k(float* a, int n) {}\n");
  struct Case {
    std::string json, python;
    bool duplicate;
  };
  for (const auto& c : std::vector<Case>{
           {"[1, 1.0, 2]", "[1, 1.0, 2]", true},
           {"[-0.0, 0.0]", "[-0.0, 0.0]", true},
           {"[1, true]", "[1, True]", true},
           {"[2.0, 2]", "[2.0, 2]", true},
           {"[1, \"1\"]", "[1, '1']", false},
           {"[9007199254740993, 9007199254740992.0]", "[9007199254740993, 9007199254740992.0]", false},
           {"[0.5, 1.5]", "[0.5, 1.5]", false},
           {"[9200000000000000000, 9.2e18]", "[9200000000000000000, 9.2e18]", true},
       }) {
    const fs::path t1_list = dir / "t1_list.json", t1_text = dir / "t1_text.json", neutral = dir / "neutral.json",
                   yaml = dir / "spec.yaml";
    tunekit::testing::write_file(
        t1_list, R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Values": )" + c.json + "}]}}");
    tunekit::testing::write_file(
        t1_text, R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Values": ")" + c.python + "\"}]}}");
    tunekit::testing::write_file(neutral, R"({"parameters": [{"name": "a", "values": )" + c.json + "}]}");
    tunekit::testing::write_file(yaml,
                                 "kernel: {source: k.cpp, entry: k}\narguments:\n"
                                 "  - {name: a, type: f32, size: 64, role: out}\n"
                                 "  - {name: n, type: i32, value: 64}\n"
                                 "parameters:\n  a: " +
                                     c.json + "\n");
    const auto refused = [&](const std::string& loader, const std::function<void()>& load) {
      try {
        load();
        return false;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("duplicate value"), std::string::npos) << loader << ": " << e.what();
        return true;
      }
    };
    EXPECT_EQ(refused("yaml", [&] { load_spec(yaml); }), c.duplicate) << c.json;
    EXPECT_EQ(refused("t1 list", [&] { load_t1(t1_list); }), c.duplicate) << c.json;
    EXPECT_EQ(refused("t1 text", [&] { load_t1(t1_text); }), c.duplicate) << c.python;
    EXPECT_EQ(refused("neutral", [&] { load_space_json(neutral); }), c.duplicate) << c.json;
  }
  tunekit::testing::write_file(dir / "n.json", R"({"parameters": [{"name": "x", "values": [1, 1.0, 2]}]})");
  try {
    load_space_json(dir / "n.json");
    ADD_FAILURE() << "[1, 1.0, 2] was loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "n.json").string() + ":1:17: parameters[0]: parameter 'x': duplicate value 1.0 (equal to 1)");
  }
}

// A hand-written T1 file's mistakes are refused where they are, not read
// on: a name no condition could write, a Type its values do not have, a
// misspelled section, a missing ConfigurationSpace.
TEST(T1Files, MistakesOfAHandWrittenFileAreLocated) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto error_of = [&](const std::string& text) -> std::string {
    const fs::path p = dir / "t.json";
    tunekit::testing::write_file(p, text);
    try {
      (void)load_space_definition(p);
    } catch (const InputError& e) {
      return e.where().line > 0 ? std::to_string(e.where().line) + ": " + e.message() : e.message();
    }
    return "(loaded)";
  };
  auto one = [](const std::string& parameter) {
    return "{\"ConfigurationSpace\": {\"TuningParameters\": [\n  " + parameter + "]}}";
  };
  EXPECT_EQ(error_of(one(R"({"Name": "use cmem", "Values": [0, 1]})")),
            "2: ConfigurationSpace.TuningParameters[0]: parameter name 'use cmem' is not a valid name (letters, digits "
            "and '_', not starting with a digit): no "
            "condition could name it");
  EXPECT_EQ(error_of(one(R"({"Name": "and", "Values": [0, 1]})")).substr(0, 83),
            "2: ConfigurationSpace.TuningParameters[0]: parameter name 'and' is a keyword of the");
  EXPECT_EQ(error_of(one(R"({"Name": "x", "Type": "int", "Values": "['a', 'b']"})")),
            "2: tuning parameter 'x': its Type is int, and 'a' is a string");
  EXPECT_EQ(error_of(one(R"({"Name": "x", "Type": "int", "Values": [1, 2.5]})")),
            "2: tuning parameter 'x': its Type is int, and 2.5 is not an integer");
  EXPECT_EQ(error_of(one(R"({"Name": "x", "Type": "uint", "Values": [1, -2]})")),
            "2: tuning parameter 'x': its Type is uint, and -2 is negative");
  EXPECT_EQ(error_of(one(R"({"Name": "x", "Type": "float", "Values": [1, 2.5]})")), "(loaded)");
  EXPECT_EQ(error_of(one(R"({"Name": "x", "Type": "string", "Values": ["a", 2.5]})")),
            "2: tuning parameter 'x': its Type is string, and 2.5 is a number");
  EXPECT_EQ(
      error_of(
          "{\"Serach\": {},\n \"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"x\", \"Values\": [1]}]}}"),
      "1: unknown key \"Serach\" in the T1 file (known: $schema, General, ConfigurationSpace, KernelSpecification, "
      "Search, Budget, BenchmarkConfig); did you mean \"Search\"?");
  EXPECT_EQ(
      error_of("{\"General\": {},\n \"ConfigurationSpce\": {}}"),
      "2: a T1 file with no \"ConfigurationSpace\"; did you mean \"ConfigurationSpace\" for \"ConfigurationSpce\"?");
  EXPECT_EQ(error_of("{\"General\": {},\n \"ConfigurationSpace\": {}}"),
            "2: ConfigurationSpace has no \"TuningParameters\"");
}
