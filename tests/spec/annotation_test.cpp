// msKPP "// tunable" substitution and CCCL %RANGE% annotations.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "tunekit/annotation.hpp"
#include "tunekit/error.hpp"

using namespace tunekit;
using ::testing::HasSubstr;

namespace {

Config cfg(std::vector<std::pair<std::string, Value>> e) { return Config(std::move(e)); }

// Expects an InputError at file:line:col with `fragment` in its message.
template <typename F>
void expect_error(F&& f, const std::string& file, int line, int col, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, file) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, col) << e.what();
    EXPECT_THAT(e.message(), HasSubstr(fragment));
    if (line > 0) {
      std::string prefix = file + ":" + std::to_string(line) + (col > 0 ? ":" + std::to_string(col) : "") + ": ";
      EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix);
    }
  }
}

}  // namespace

// ---- msKPP ------------------------------------------------------------------

TEST(Tunable, ValueLineKeepsPrefixAndIndentation) {
  std::string src =
      "template <int N>\n"
      "void k() {\n"
      "  constexpr int BM = 64; // tunable\n"
      "}\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"BM", 128}}), "k.cpp"),
            "template <int N>\n"
            "void k() {\n"
            "  constexpr int BM = 128;\n"
            "}\n");
}

TEST(Tunable, NameForms) {
  std::string src =
      "int BM=64; // tunable\n"
      "static constexpr uint32_t BN = 64;  // tunable\n"
      "BK = 64 // tunable   \n"
      "\tconst double ALPHA = 1.0;//tunable\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"BM", 8}, {"BN", 16}, {"BK", 32}, {"ALPHA", 2.5}}), "k.cpp"),
            "int BM= 8;\n"
            "static constexpr uint32_t BN = 16;\n"
            "BK = 32;\n"
            "\tconst double ALPHA = 2.5;\n");
}

TEST(Tunable, AliasLineReplacedWholeKeepingIndentation) {
  std::string src =
      "struct K {\n"
      "    using Tile = Shape<64, 64>; // tunable: TILE\n"
      "};\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"TILE", "using Tile = Shape<128, 64>;"}}), "k.cpp"),
            "struct K {\n"
            "    using Tile = Shape<128, 64>;\n"
            "};\n");
}

TEST(Tunable, AliasNameIsTheAliasNotTheAssignedName) {
  std::string src = "int X = 1; // tunable: XA\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"XA", "int X = 2;"}}), "k.cpp"), "int X = 2;\n");
  EXPECT_THROW(apply_tunable_lines(src, cfg({{"X", 2}}), "k.cpp"), InputError);
}

TEST(Tunable, ALineThatDeclaresTwoNamesIsRefused) {
  expect_error(
      [] {
        apply_tunable_lines("constexpr int UNROLL = 1, OTHER = 2; // tunable\n", cfg({{"UNROLL", 4}}), "k.cpp");
      },
      "k.cpp", 1, 27, "'OTHER' declared here too would be lost");
  // Commas inside the initializer are one declarator's.
  EXPECT_EQ(apply_tunable_lines("const int N = f(1, 2), g{3, x == 1}; // tunable\n", cfg({{"N", 4}}), "k.cpp"),
            "const int N = 4;\n");
}

TEST(Tunable, FirstMatchWins) {
  std::string src =
      "int BM = 1; // tunable\n"
      "int BM = 2; // tunable\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"BM", 9}}), "k.cpp"),
            "int BM = 9;\n"
            "int BM = 2; // tunable\n");
}

// msKPP never reads a name's later annotated lines, so one it could not
// replace (mskl's own test: the alias's use in a template argument list)
// is left as written; such a line naming no annotated name is still an error.
TEST(Tunable, ALaterLineOfAnAnnotatedNameIsLeftAsWritten) {
  const std::string src =
      "using LayoutA = int; // tunable\n"
      "using K = Kernel<\n"
      "    LayoutA, // tunable\n"
      "    float>;\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"LayoutA", Value(std::string("double"))}}), "k.cpp"),
            "using LayoutA = double;\n"
            "using K = Kernel<\n"
            "    LayoutA, // tunable\n"
            "    float>;\n");
  expect_error([] { apply_tunable_lines("    LayoutA, // tunable\nusing LayoutA = int; // tunable\n", {}, "k.cpp"); },
               "k.cpp", 1, 5, "must assign a name");
  // A later line that assigns a name of its own keeps its own error.
  expect_error(
      [] {
        apply_tunable_lines("constexpr int BM = 128; // tunable\nconstexpr int BK = BM / 2, BN = 64; // tunable\n", {},
                            "k.cpp");
      },
      "k.cpp", 2, 28, "'BN' declared here too would be lost");
}

TEST(Tunable, CommentOnlyLinesSkipped) {
  std::string src =
      "// int BM = 1; // tunable\n"
      "   // int BM = 2; // tunable\n"
      "/*\n"
      " * int BM = 3; // tunable\n"
      " int BM = 4; // tunable\n"
      " */\n"
      "int BM = 5; // tunable\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"BM", 7}}), "k.cpp"),
            "// int BM = 1; // tunable\n"
            "   // int BM = 2; // tunable\n"
            "/*\n"
            " * int BM = 3; // tunable\n"
            " int BM = 4; // tunable\n"
            " */\n"
            "int BM = 7;\n");
}

TEST(Tunable, NotTunableComments) {
  std::string src =
      "int A = 1; // tunable later\n"
      "int B = 2; // not tunable\n"
      "const char* s = \"// tunable\"; int C = 3;\n"
      "int D = 4; // tunable\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"D", 5}}), "k.cpp"),
            "int A = 1; // tunable later\n"
            "int B = 2; // not tunable\n"
            "const char* s = \"// tunable\"; int C = 3;\n"
            "int D = 5;\n");
  for (const char* key : {"A", "B", "C", "s"})
    EXPECT_THROW(apply_tunable_lines(src, cfg({{key, 1}}), "k.cpp"), InputError) << key;
}

TEST(Tunable, StringWithSlashesBeforeTheComment) {
  std::string src = "const char* URL = \"http://x\"; // tunable\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"URL", "\"https://y\""}}), "k.cpp"), "const char* URL = \"https://y\";\n");
}

TEST(Tunable, DigitSeparator) {
  std::string src = "constexpr int N = 1'024; // tunable\n";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"N", 2048}}), "k.cpp"), "constexpr int N = 2048;\n");
}

TEST(Tunable, MultipleKeysAndValueTypes) {
  std::string src =
      "constexpr int BM = 64; // tunable\n"
      "constexpr float ALPHA = 1.0f; // tunable\n"
      "constexpr auto NAME = \"x\"; // tunable\n"
      "  using T = A<1>; // tunable: TYPE\n"
      "int untouched = 0;\n";
  Config c = cfg({{"TYPE", "using T = B<2>;"}, {"NAME", "\"fast\""}, {"ALPHA", 0.5}, {"BM", std::int64_t{256}}});
  EXPECT_EQ(apply_tunable_lines(src, c, "k.cpp"),
            "constexpr int BM = 256;\n"
            "constexpr float ALPHA = 0.5;\n"
            "constexpr auto NAME = \"fast\";\n"
            "  using T = B<2>;\n"
            "int untouched = 0;\n");
}

TEST(Tunable, LineEndingsPreserved) {
  std::string src = "int A = 1; // tunable\r\nint B = 2;\r\nint C = 3; // tunable";
  EXPECT_EQ(apply_tunable_lines(src, cfg({{"A", 4}, {"C", 5}}), "k.cpp"), "int A = 4;\r\nint B = 2;\r\nint C = 5;");
}

TEST(Tunable, EmptyConfigLeavesSourceAlone) {
  std::string src = "int A = 1; // tunable\n\n";
  EXPECT_EQ(apply_tunable_lines(src, Config{}, "k.cpp"), src);
}

TEST(Tunable, UnmatchedKeyNamesKeyAndFile) {
  std::string src = "int BM = 1; // tunable\nint BN = 1; // tunable\n";
  try {
    apply_tunable_lines(src, cfg({{"BM", 2}, {"BX", 3}}), "kernel.cpp");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "kernel.cpp");
    EXPECT_THAT(e.message(), HasSubstr("config key 'BX' matches no '// tunable' line in kernel.cpp"));
    EXPECT_THAT(e.message(), HasSubstr("BM, BN"));
  }
}

TEST(Tunable, UnmatchedKeyInSourceWithoutTunables) {
  try {
    apply_tunable_lines("int x;\n", cfg({{"BM", 2}}), "plain.cpp");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("config key 'BM' matches no '// tunable' line in plain.cpp"));
  }
}

TEST(Tunable, LineWithoutAssignment) {
  expect_error(
      [] {
        apply_tunable_lines("int a;\n  foo(); // tunable\n", cfg({{"a", 1}}), "k.cpp");
      },
      "k.cpp", 2, 3, "must assign a name");
}

// "// tunable:" with its alias left out was taken for a plain comment, and
// the config's key then matched nothing (or fell back to -D defines).
TEST(Tunable, AnAliasLeftOutIsAnError) {
  expect_error(
      [] {
        apply_tunable_lines("int a;\nconstexpr int BM = 4; // tunable:\n", cfg({{"BM", 1}}), "k.cpp");
      },
      "k.cpp", 2, 33, "needs the line's alias after the colon");
  // ... and such a source is one with tunable lines (injection: auto then
  // applies them, and says where the alias is missing).
  EXPECT_TRUE(has_tunable_lines("constexpr int BM = 4; // tunable:\n"));
}

// Meant as annotations, and taken for prose the line would stay as written.
TEST(Tunable, NearMissesAreErrors) {
  expect_error(
      [] {
        apply_tunable_lines("constexpr int BM = 4; // Tunable\n", cfg({{"BM", 1}}), "k.cpp");
      },
      "k.cpp", 1, 23, "'Tunable' reads like a tunable annotation; write it '// tunable' (lower case)");
  expect_error(
      [] {
        apply_tunable_lines("using T = float; // tunable: ACC T\n", cfg({{"ACC", 1}}), "k.cpp");
      },
      "k.cpp", 1, 18, "the alias of '// tunable: ALIAS' is one name (letters, digits and '_'), not 'ACC T'");
}

// 'tuneable' (a spelling of its own) left the line as written: with the
// spec's parameters the error named the spec's key, and under injection:
// auto a source of such lines took -D defines that broke every build.
TEST(Tunable, AWordMisspeltByOneLetterIsAnErrorAtIt) {
  expect_error(
      [] {
        apply_tunable_lines("constexpr int BM = 4; // tuneable\n", cfg({{"BM", 1}}), "k.cpp");
      },
      "k.cpp", 1, 23, "'tuneable' reads like a misspelt tunable annotation; write it '// tunable'");
  expect_error(
      [] {
        apply_tunable_lines("using T = float; // tunabel: ACC\n", cfg({{"ACC", 1}}), "k.cpp");
      },
      "k.cpp", 1, 18, "'tunabel' reads like a misspelt tunable annotation");
  // Other words, and the word in prose, are comments.
  const std::string prose =
      "int a = 1; // mutable\nint b = 2; // tuneable later\nint d = 0; // Unable\nint e = 0; // tenable\n"
      "int c = 3; // tunable\n";
  EXPECT_EQ(apply_tunable_lines(prose, cfg({{"c", 4}}), "k.cpp"),
            "int a = 1; // mutable\nint b = 2; // tuneable later\nint d = 0; // Unable\nint e = 0; // tenable\n"
            "int c = 4;\n");
}

TEST(Tunable, HasTunableLines) {
  EXPECT_TRUE(has_tunable_lines("int a = 1; // tunable\n"));
  EXPECT_TRUE(has_tunable_lines("  using T = X; // tunable: T\n"));
  EXPECT_TRUE(has_tunable_lines("x\n\nint a = 1; //tunable"));
  EXPECT_FALSE(has_tunable_lines("// int a = 1; // tunable\n"));
  EXPECT_FALSE(has_tunable_lines(" * int a = 1; // tunable\n"));
  EXPECT_FALSE(has_tunable_lines("int a = 1; // tunables\n"));
  EXPECT_FALSE(has_tunable_lines("// %RANGE% X x 1:2:1\n"));
  EXPECT_FALSE(has_tunable_lines(""));
}

// ---- CCCL %RANGE% -------------------------------------------------------------

TEST(Range, Parses) {
  std::string src =
      "#include <cub/cub.cuh>\n"
      "// %RANGE% TUNE_ITEMS_PER_THREAD ipt 7:24:1\n"
      "//   %RANGE%   TUNE_THREADS   tpb   128:1024:32   \n"
      "// %RANGE% TUNE_DOWN d 8:2:-3\n";
  auto ranges = parse_range_annotations(src, "bench.cu");
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].name, "TUNE_ITEMS_PER_THREAD");
  EXPECT_EQ(ranges[0].label, "ipt");
  EXPECT_EQ(ranges[0].start, 7);
  EXPECT_EQ(ranges[0].end, 24);
  EXPECT_EQ(ranges[0].step, 1);
  EXPECT_EQ(ranges[0].line, 2);
  EXPECT_EQ(ranges[1].name, "TUNE_THREADS");
  EXPECT_EQ(ranges[1].label, "tpb");
  EXPECT_EQ(ranges[1].step, 32);
  EXPECT_EQ(ranges[1].line, 3);

  auto params = parameters_from_ranges(ranges, "bench.cu");
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name, "TUNE_ITEMS_PER_THREAD");
  ASSERT_EQ(params[0].values.size(), 18u);
  EXPECT_TRUE(params[0].values[0].is_int());
  EXPECT_EQ(params[0].values.front().as_int(), 7);
  EXPECT_EQ(params[0].values.back().as_int(), 24);
  EXPECT_EQ(params[1].values.size(), 29u);
  EXPECT_EQ(params[1].values.back().as_int(), 1024);
  ASSERT_EQ(params[2].values.size(), 3u);
  EXPECT_EQ(params[2].values[1].as_int(), 5);
  EXPECT_EQ(params[0].where.file, "bench.cu");
  EXPECT_EQ(params[0].where.line, 2);
}

TEST(Range, NoAnnotations) {
  EXPECT_TRUE(parse_range_annotations("int main() {}\n", "x.cu").empty());
  EXPECT_TRUE(parameters_from_ranges({}, "x.cu").empty());
}

TEST(Range, EndNotOnStepIsInclusiveUpToLastStep) {
  auto p = parameters_from_ranges(parse_range_annotations("// %RANGE% A a 1:10:4\n", "x.cu"), "x.cu");
  ASSERT_EQ(p[0].values.size(), 3u);
  EXPECT_EQ(p[0].values[2].as_int(), 9);
}

TEST(Range, MissingName) {
  expect_error([] { parse_range_annotations("int x;\n// %RANGE%\n", "b.cu"); }, "b.cu", 2, 11,
               "missing a parameter name");
}

// Meant as annotations, and ignored they would drop a parameter silently.
TEST(Range, NearMissesAreErrorsNotProse) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_A a 1:4:1\n// %RANGE TUNE_B b 1:4:1\n", "b.cu"); },
               "b.cu", 2, 4, "'%RANGE' reads like a %RANGE% annotation");
  expect_error([] { parse_range_annotations("  // %range% TUNE_C c 1:4:1\n", "b.cu"); }, "b.cu", 1, 6,
               "'%range%' reads like a %RANGE% annotation");
  expect_error([] { parse_range_annotations("/* %RANGE% TUNE_D d 1:4:1 */\n", "b.cu"); }, "b.cu", 1, 4,
               "a %RANGE% annotation is a // comment");
  // Prose that mentions the marker later in a comment is left alone.
  EXPECT_TRUE(parse_range_annotations("// see the %RANGE% lines below\nint x;\n", "b.cu").empty());
}

// A misspelt marker dropped its parameter silently: every build then failed
// on the undefined name, far from the line that caused it.
TEST(Range, AMisspeltMarkerIsAnErrorAtIt) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_A a 1:4:1\n// %RANEG% TUNE_B b 64:256:64\n", "b.cu"); },
               "b.cu", 2, 4,
               "'%RANEG%' reads like a misspelt %RANGE% annotation (a name, a label and a range after it); did you "
               "mean '%RANGE%'?");
  expect_error([] { parse_range_annotations("// %RAGNE% TUNE_B b 1:4:1\n", "b.cu"); }, "b.cu", 1, 4,
               "'%RAGNE%' reads like a misspelt %RANGE% annotation");
  // A word like it in a comment without a range is prose; a bare comment too.
  EXPECT_TRUE(parse_range_annotations("// %RANK% is the rank's number\n//\nint x;\n", "b.cu").empty());
  // So is one with a range that is not of an annotation's shape (a name, a
  // label, a range, nothing after).
  for (const char* prose : {"// %RANK% 0:3 of the job each own a slice\n", "// %AGE% 10:20\n", "// %RATE% 1:2\n",
                            "// %RANK% 0:3:1\n", "// %RANK% ranks 0:3\n", "// %RANK% ranks of 0:3 here\n"})
    EXPECT_TRUE(parse_range_annotations(prose, "b.cu").empty()) << prose;
  expect_error([] { parse_range_annotations("// %RANG% TUNE_C c 0:8:2\n", "b.cu"); }, "b.cu", 1, 4,
               "'%RANG%' reads like a misspelt %RANGE% annotation");
}

TEST(Range, AMissingLabelIsNamed) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_A 1:4:1\n", "b.cu"); }, "b.cu", 1, 19,
               "missing the label between the name and the range");
}

// CCCL's scripts match "// %RANGE%" anywhere in the file, so an annotation
// after code declares its range as one on a line of its own does; in a
// string literal or a block comment it is data, not an annotation.
TEST(Range, AnAnnotationAfterCodeCountsOneInAStringDoesNot) {
  auto after = parse_range_annotations("int dummy = 0; // %RANGE% TUNE_B block 256:512:256\n", "b.cu");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].name, "TUNE_B");
  EXPECT_EQ(after[0].column, 27);
  EXPECT_TRUE(parse_range_annotations("const char* s = \"// %RANGE% TUNE_Y y 1:4:1\";\n", "b.cu").empty());
  EXPECT_TRUE(parse_range_annotations("/* a block\n// %RANGE% TUNE_Y y 1:4:1\n*/ int x;\n", "b.cu").empty());
  auto later = parse_range_annotations("const char* s = \"//\"; // %RANGE% TUNE_Z z 1:2:1\n", "b.cu");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].name, "TUNE_Z");
}

// A UTF-8 byte order mark, which editors hide and compilers skip, is not
// code before the first line's annotation.
TEST(Range, AByteOrderMarkIsNoCodeBeforeTheFirstLine) {
  auto ranges = parse_range_annotations("\xEF\xBB\xBF// %RANGE% TUNE_A a 1:4:1\n", "b.cu");
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].name, "TUNE_A");
  // Nor in the variant: the defines go first, and the mark would be code after them.
  EXPECT_EQ(prepend_defines("\xEF\xBB\xBFint x;\n", cfg({{"TUNE_A", 2}}), "b.cu"),
            "#define TUNE_A 2\n#line 1 \"b.cu\"\nint x;\n");
}

// A %RANGE% parameter becomes a macro as a spec's does, so a reserved name
// is refused here too.
TEST(Range, AReservedNameIsRefused) {
  expect_error([] { parse_range_annotations("// %RANGE% __cplusplus x 1:4:1\n", "b.cu"); }, "b.cu", 1, 12,
               "parameter name '__cplusplus' is reserved");
}

// As a macro, a keyword would replace itself all over the source.
TEST(Range, ADocCommentAnnotationIsAnErrorNotProse) {
  expect_error([] { parse_range_annotations("//! %RANGE% TUNE_U u 1:2:1\n", "b.cu"); }, "b.cu", 1, 1,
               "a %RANGE% annotation is a plain // comment, not a doc comment");
  EXPECT_EQ(parse_range_annotations("/// %RANGE% TUNE_U u 1:2:1\n", "b.cu").size(), 1u);  // slashes alone: plain
}

TEST(Range, AKeywordIsRefused) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_U u 1:2:1\n// %RANGE% int i 1:4:1\n", "b.cu"); }, "b.cu",
               2, 12, "parameter name 'int' is a C or C++ keyword");
}

// The source's own #define of a parameter would replace every config's
// value (the compiler only warns): an error at the #define, unless guarded.
TEST(Range, AParameterTheSourceDefinesItselfIsRefusedUnlessGuarded) {
  const std::string head = "// %RANGE% TUNE_U u 1:3:1\n";
  expect_error([&] { parse_range_annotations(head + "#define TUNE_U 2\nint f() { return TUNE_U; }\n", "b.cu"); },
               "b.cu", 2, 9, "the source defines TUNE_U, a %RANGE% parameter (line 1)");
  expect_error([&] { parse_range_annotations(head + "  #  define  TUNE_U(x) x\n", "b.cu"); }, "b.cu", 2, 14,
               "#ifndef TUNE_U");
  for (const std::string guarded :
       {"#ifndef TUNE_U\n#define TUNE_U 2\n#endif\n", "#if !defined(TUNE_U)\n#define TUNE_U 2\n#endif\n",
        "#ifndef TUNE_U /* the default */\n#define TUNE_U 2\n#endif\n",
        "#if ! defined TUNE_U // the default\n#define TUNE_U 2\n#endif\n", "#define TUNE_UU 2\n",
        "#ifdef TUNE_U\n#else\n#define TUNE_U 2\n#endif\n",
        "#if defined(TUNE_U)\n#elif 1\n#else\n#define TUNE_U 2\n#endif\n",
        // CCCL's baseline branch, built without the config's values
        "#if !TUNE_BASE\nint g;\n#else\n#define TUNE_U 2\n#endif\n", "#if TUNE_BASE\n#define TUNE_U 2\n#endif\n",
        "/*\n#define TUNE_U 2\n*/\n"})
    EXPECT_EQ(parse_range_annotations(head + guarded + "int f() { return TUNE_U; }\n", "b.cu").size(), 1u) << guarded;
  // Where the #define sits decides, not a guard's word elsewhere: each of
  // these replaces every config's value.
  for (const auto& [unguarded, line] :
       std::vector<std::pair<std::string, int>>{{"// TUNE_U is defined by the tuner\n#define TUNE_U 4\n", 3},
                                                {"#ifndef TUNE_U\n#endif\n#define TUNE_U 4\n", 4},
                                                {"#ifdef TUNE_U\n#define TUNE_U 4\n#endif\n", 3},
                                                {"#if !defined(TUNE_U)\n#else\n#define TUNE_U 4\n#endif\n", 4},
                                                {"#if !TUNE_BASE\n#define TUNE_U 4\n#endif\n", 3},
                                                {"#if !defined TUNE_UX\n#define TUNE_U 4\n#endif\n", 3}})
    expect_error([&] { parse_range_annotations(head + unguarded, "b.cu"); }, "b.cu", line, 9,
                 "the source defines TUNE_U, a %RANGE% parameter (line 1)");
}

// CCCL's base variant is measured for a source whose preprocessor reads
// TUNE_BASE, in any conditional; prose, a commented-out branch, a longer
// name and a #define do not count.
TEST(Range, ATuneBaseBranchIsFoundInAConditional) {
  for (const std::string branch :
       {"#if TUNE_BASE\n#endif\n", "#if !TUNE_BASE\n#endif\n", "  #  if  TUNE_BASE == 1 // CUB's own\n#endif\n",
        "#ifdef TUNE_BASE\n#endif\n", "#ifndef TUNE_BASE\n#endif\n", "#if 0\n#elif TUNE_BASE\n#endif\n",
        "#if defined(TUNE_BASE) && TUNE_BASE\n#endif\n"})
    EXPECT_TRUE(has_tune_base_branch("// %RANGE% TUNE_U u 1:3:1\n" + branch)) << branch;
  for (const std::string none : {"// #if TUNE_BASE\n", "/*\n#if TUNE_BASE\n#endif\n*/\n", "#if TUNE_BASELINE\n#endif\n",
                                 "#define TUNE_BASE 1\n", "int TUNE_BASE = 1;\n", "#if X // TUNE_BASE\n#endif\n"})
    EXPECT_FALSE(has_tune_base_branch("// %RANGE% TUNE_U u 1:3:1\n" + none)) << none;
}

// A parameter the source names nowhere else builds the same code for every
// value; one a header of its own may name is left alone.
TEST(Range, ParametersTheSourceNeverNamesAreFound) {
  const std::string ranges = "// %RANGE% TUNE_U u 1:3:1\n// %RANGE% TUNE_NOPE n 1:3:1\n";
  EXPECT_EQ(unnamed_range_parameters(ranges + "int f() { return TUNE_U; }\n", "b.cu"),
            std::vector<std::string>{"TUNE_NOPE"});
  EXPECT_TRUE(unnamed_range_parameters(ranges + "#include \"policy.h\"\nint f() { return TUNE_U; }\n", "b.cu").empty());
  EXPECT_TRUE(unnamed_range_parameters(ranges + "int f() { return TUNE_U + TUNE_NOPE; }\n", "b.cu").empty());
}

TEST(Range, MissingLabel) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X\n", "b.cu"); }, "b.cu", 1, 18, "missing a label");
}

TEST(Range, MissingRange) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x  \n", "b.cu"); }, "b.cu", 1, 20,
               "missing a range start:end:step");
}

TEST(Range, MissingStep) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:8\n", "b.cu"); }, "b.cu", 1, 24, "missing the step");
}

TEST(Range, NonIntegerStart) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x a:8:1\n", "b.cu"); }, "b.cu", 1, 21,
               "the start 'a' is not an integer");
}

TEST(Range, NonIntegerEnd) {
  expect_error([] { parse_range_annotations("\n\n// %RANGE% TUNE_X x 1:8.5:1\n", "b.cu"); }, "b.cu", 3, 23,
               "the end '8.5' is not an integer");
}

TEST(Range, NonIntegerStep) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:8:two\n", "b.cu"); }, "b.cu", 1, 25,
               "the step 'two' is not an integer");
}

TEST(Range, EmptyField) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1::1\n", "b.cu"); }, "b.cu", 1, 23,
               "the end is missing");
}

TEST(Range, ZeroStep) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:8:0\n", "b.cu"); }, "b.cu", 1, 25,
               "the step must not be 0");
}

TEST(Range, StartAfterEnd) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 9:8:1\n", "b.cu"); }, "b.cu", 1, 21,
               "the range is empty");
}

TEST(Range, TooManyFields) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:8:1:2\n", "b.cu"); }, "b.cu", 1, 26,
               "too many ':' fields");
}

TEST(Range, TrailingField) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:8:1 extra\n", "b.cu"); }, "b.cu", 1, 27,
               "unexpected 'extra' after the range");
}

TEST(Range, SpacedRangeAndHugeNumbersSayWhatIsWrong) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1 : 8 : 1\n", "b.cu"); }, "b.cu", 1, 21,
               "a range is written without spaces (start:end:step)");
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:99999999999999999999:1\n", "b.cu"); }, "b.cu", 1, 23,
               "the end '99999999999999999999' is out of range (a 64-bit integer)");
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_X x 1:8:1 2\n", "b.cu"); }, "b.cu", 1, 27,
               "unexpected '2' after the range");
}

TEST(Range, BadName) {
  expect_error([] { parse_range_annotations("// %RANGE% 9X x 1:8:1\n", "b.cu"); }, "b.cu", 1, 12,
               "'9X' is not a valid macro name");
}

TEST(Range, DuplicateName) {
  expect_error([] { parse_range_annotations("// %RANGE% A a 1:2:1\n// %RANGE% A b 1:2:1\n", "b.cu"); }, "b.cu", 2, 12,
               "duplicate %RANGE% parameter 'A' (first declared on line 1)");
}

TEST(Range, ErrorMessageNamesTheParameter) {
  expect_error([] { parse_range_annotations("// %RANGE% TUNE_Q x 1:8:0\n", "b.cu"); }, "b.cu", 1, 25, "TUNE_Q");
}

TEST(Range, ParametersFromInvalidRange) {
  RangeAnnotation bad;
  bad.name = "A";
  bad.start = 5;
  bad.end = 1;
  bad.step = 1;
  bad.line = 4;
  expect_error([&] { parameters_from_ranges({bad}, "m.cu"); }, "m.cu", 4, 0, "empty");
}

// ---- #define injection ----------------------------------------------------------

TEST(PrependDefines, DefinesThenLineDirective) {
  Config c = cfg({{"TUNE_ITEMS", 7}, {"TUNE_KIND", "fast"}, {"TUNE_ALPHA", 0.5}});
  EXPECT_EQ(prepend_defines("int x;\n", c, "dir/bench.cu"),
            "#define TUNE_ITEMS 7\n"
            "#define TUNE_KIND fast\n"
            "#define TUNE_ALPHA 0.5\n"
            "#line 1 \"dir/bench.cu\"\n"
            "int x;\n");
}

// A define sits on its %RANGE% line, so that a value the code cannot take
// is reported there (it was the source's line 1, 2 ..., under the source's
// name).
TEST(PrependDefines, EachDefineIsOnItsRangeLine) {
  const std::string src =
      "// a comment\n\n// %RANGE% TUNE_A a 1:2:1\n// %RANGE% TUNE_B b 1:2:1\nint x[TUNE_A + TUNE_B];\n";
  EXPECT_EQ(prepend_defines(src, cfg({{"TUNE_A", 2}, {"TUNE_B", 1}}), "k.cu"),
            "#line 3 \"k.cu\"\n#define TUNE_A 2\n#line 4 \"k.cu\"\n#define TUNE_B 1\n#line 1 \"k.cu\"\n" + src);
}

TEST(PrependDefines, EscapesFileName) {
  EXPECT_EQ(prepend_defines("", Config{}, "a\"b\\c.cu"), "#line 1 \"a\\\"b\\\\c.cu\"\n");
}

TEST(Range, ProseMentioningTheMarkerIsNotAnAnnotation) {
  const std::string src =
      "// Tuned with %RANGE% annotations: no spec needed.\n"
      "int x = 1;  // see %RANGE% below\n"
      "//   %RANGE% TUNE_A a 1:3:1\n"
      "//%RANGE% TUNE_B b 2:4:2\n";
  auto ranges = parse_range_annotations(src, "k.cpp");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].name, "TUNE_A");
  EXPECT_EQ(ranges[1].name, "TUNE_B");
  EXPECT_EQ(ranges[1].line, 4);
}

// The whole int64 range by 1 has 2^64 values, one more than a count of
// uint64 holds: it was counted as 0, an empty space with no word.
TEST(Range, ARangeOfTwoToTheSixtyFourValuesIsTooLarge) {
  expect_error(
      [] { parse_range_annotations("// %RANGE% TUNE_U u -9223372036854775808:9223372036854775807:1\n", "b.cu"); },
      "b.cu", 1, 21, "the range has 2^64 values; at most 16777216");
}
