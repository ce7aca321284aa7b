// The HTML report: the per-parameter analysis on constructed trials, the
// page's sections and plots, the escaping of everything users write, and
// the SVG helpers' ticks.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "report/detail/svg.hpp"
#include "tunekit/html_report.hpp"

using namespace tunekit;

namespace {

TrialRecord trial(Config config, Status status, double us, std::string kernel = "k",
                  Bindings size = {{"N", Value(64)}}) {
  TrialRecord t;
  t.kernel = std::move(kernel);
  t.device = "cpu";
  t.size = std::move(size);
  t.config = std::move(config);
  t.status = status;
  if (status == Status::ok) t.stats.median = t.stats.min = Microseconds(us);
  else t.error = "failed\nsecond line";
  return t;
}

Config ab(int a, std::string b) { return Config({{"A", Value(a)}, {"B", Value(std::move(b))}}); }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

}  // namespace

TEST(ParameterEffects, EachValuesBestAndMedianAndTheSpread) {
  std::vector<TrialRecord> trials = {
      trial(ab(1, "x"), Status::ok, 30),          trial(ab(2, "x"), Status::ok, 25),
      trial(ab(1, "x"), Status::ok, 10),          trial(ab(1, "x"), Status::ok, 20),
      trial(ab(2, "x"), Status::ok, 15),          trial(ab(3, "x"), Status::crash, 0),  // every trial failed
      trial(ab(2, "x"), Status::wrong_result, 0), trial(ab(2, "x"), Status::crash, 0),
  };
  trials[7].fault = Fault::environment;  // the machine's: says nothing of A = 2
  const auto effects = parameter_effects(trials);
  ASSERT_EQ(effects.size(), 2u);
  // A's levels: 1 -> {10, 20, 30}, 2 -> {15, 25}; spread 15 / 10.
  EXPECT_EQ(effects[0].parameter, "A");
  ASSERT_EQ(effects[0].levels.size(), 3u);
  EXPECT_EQ(effects[0].levels[0].value, Value(1));
  EXPECT_EQ(effects[0].levels[0].trials, 3u);
  EXPECT_DOUBLE_EQ(effects[0].levels[0].best.count(), 10);
  EXPECT_DOUBLE_EQ(effects[0].levels[0].median.count(), 20);
  EXPECT_EQ(effects[0].levels[1].value, Value(2));
  EXPECT_DOUBLE_EQ(effects[0].levels[1].best.count(), 15);
  EXPECT_DOUBLE_EQ(effects[0].levels[1].median.count(), 20);  // the mean of the middle two
  EXPECT_EQ(effects[0].levels[1].failed, 1u);
  // A value that never ran correctly is a level without times, outside the spread.
  EXPECT_EQ(effects[0].levels[2].value, Value(3));
  EXPECT_FALSE(effects[0].levels[2].timed());
  EXPECT_EQ(effects[0].levels[2].failed, 1u);
  EXPECT_DOUBLE_EQ(effects[0].spread, 1.5);
  // B has one value: spread 1, listed after A.
  EXPECT_EQ(effects[1].parameter, "B");
  ASSERT_EQ(effects[1].levels.size(), 1u);
  EXPECT_EQ(effects[1].levels[0].trials, 5u);
  EXPECT_EQ(effects[1].levels[0].failed, 2u);  // the machine's failure is not counted
  EXPECT_DOUBLE_EQ(effects[1].spread, 1.0);

  const std::string text = format_parameter_effects(effects);
  EXPECT_NE(
      text.find(
          "A            1.50x  1: 10.000 / 20.000 (3) 2: 15.000 / 20.000 (2, 1 failed) 3: every trial failed (1)"),
      std::string::npos)
      << text;
}

// A value that never works is the worst choice of all, whatever the spread
// of the values that do: its parameter comes first, and its strip says so.
TEST(ParameterEffects, AParameterWithAValueThatAlwaysFailsComesFirst) {
  const auto cb = [](int c, int bad) { return Config({{"C", Value(c)}, {"BAD", Value(bad)}}); };
  const std::vector<TrialRecord> trials = {
      trial(cb(1, 0), Status::ok, 10),
      trial(cb(2, 0), Status::ok, 30),
      trial(cb(1, 1), Status::crash, 0),
      trial(cb(2, 1), Status::crash, 0),
  };
  const auto effects = parameter_effects(trials);
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[0].parameter, "BAD");
  EXPECT_DOUBLE_EQ(effects[0].spread, 1.0);  // of the values that ran
  EXPECT_EQ(effects[1].parameter, "C");
  EXPECT_DOUBLE_EQ(effects[1].spread, 3.0);
  const std::string page = html_report(trials, {"t"});
  EXPECT_NE(page.find("1 (fails)"), std::string::npos) << page;
  EXPECT_NE(page.find("(ok trials, cut short, failed)"), std::string::npos);
}

// A level that is the string "64" is shown quoted, apart from the number 64.
TEST(ParameterEffects, AStringLevelThatReadsAsANumberIsQuoted) {
  ParameterEffect e;
  e.parameter = "A";
  e.levels.push_back({Value("64"), 1, Microseconds(10), Microseconds(10)});
  e.levels.push_back({Value(64), 1, Microseconds(20), Microseconds(20)});
  const std::string text = format_parameter_effects({e});
  EXPECT_NE(text.find(" '64': 10.000 / 10.000 (1) 64: 20.000 / 20.000 (1)"), std::string::npos) << text;
}

TEST(ParameterEffects, NoneWithoutAnOkTrial) {
  EXPECT_TRUE(parameter_effects({trial(ab(1, "x"), Status::timeout, 0)}).empty());
}

TEST(HtmlReport, EscapesWhatUsersWrite) {
  std::vector<TrialRecord> trials = {
      trial(Config({{"V", Value("<img src=x onerror=alert(1)>")}}), Status::ok, 5, "<kernel>"),
      trial(Config({{"V", Value("\"quoted\" & 'single'")}}), Status::ok, 6, "<kernel>"),
      trial(Config({{"V", Value("plain")}}), Status::compile_error, 0, "<kernel>"),
  };
  trials[2].error = "</td><script>alert(1)</script>";
  const std::string page = html_report(trials, {"title <b>"});
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<kernel>"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_NE(page.find("title &lt;b&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(page.find("&quot;quoted&quot; &amp; &#39;single&#39;"), std::string::npos);
  EXPECT_NE(page.find("&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(HtmlReport, ASectionPerKernelDeviceAndSizeWithItsPlots) {
  std::vector<TrialRecord> trials;
  // Section 0: A takes two values, B one: the ranked and convergence plots
  // and one strip plot (B's single value gets none).
  for (int i = 0; i < 6; ++i) trials.push_back(trial(ab(1 + i % 2, "x"), Status::ok, 10 + i));
  trials.push_back(trial(ab(1, "x"), Status::wrong_result, 0));
  // Section 1: another size, nothing ok.
  trials.push_back(trial(ab(1, "x"), Status::timeout, 0, "k", {{"N", Value(128)}}));
  // Section 2: another kernel at the first size.
  trials.push_back(trial(ab(2, "y"), Status::ok, 7, "other"));
  const std::string page = html_report(trials);
  EXPECT_EQ(count(page, "<h2 "), 3u);
  // Per section, then the overview's plot across the sizes.
  EXPECT_EQ(count(page, "<svg "), 3u + 0u + 2u + 1u);
  EXPECT_EQ(count(page, "No config ran correctly."), 1u);
  EXPECT_NE(page.find("6 ok, 1 wrong_result"), std::string::npos);
  EXPECT_NE(page.find("k &mdash; N = 128"), std::string::npos);
  EXPECT_NE(page.find("other &mdash; N = 64"), std::string::npos);
  EXPECT_NE(page.find("<td>timeout</td>"), std::string::npos);
  // The overview links each section and gives its best.
  EXPECT_NE(page.find("<a href=\"#s1\">k</a></td><td>N = 128</td><td>cpu</td><td class=\"num\">1</td>"
                      "<td class=\"num\">0</td><td class=\"num\">-</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<a href=\"#s2\">other</a></td><td>N = 64</td><td>cpu</td><td class=\"num\">1</td>"
                      "<td class=\"num\">1</td><td class=\"num\">7.000</td><td><code>{A: 2, B: y}</code>"),
            std::string::npos);
  // A failure's reason is its first line.
  EXPECT_NE(page.find("<td>failed</td>"), std::string::npos);
  EXPECT_EQ(page.find("second line"), std::string::npos);
}

// One kernel at one size built by two compilers (and tuned again with other
// flags) is three sections: each heading, overview row and console header
// names what tells it from the others, not three times "k - N = 64".
TEST(HtmlReport, SectionsOfOneKernelAndSizeNameTheirToolchainOrSpec) {
  auto built = [](double us, std::string toolchain, std::string spec_hash) {
    TrialRecord t = trial(ab(1, "x"), Status::ok, us);
    t.toolchain = std::move(toolchain);
    t.spec_hash = std::move(spec_hash);
    return t;
  };
  const std::vector<TrialRecord> trials = {
      built(10, "gcc 12.2.0", "aaaaaaaa11"), built(9, "clang 14.0.6", "bbbbbbbb22"),
      built(8, "clang 14.0.6", "cccccccc33"), trial(ab(1, "x"), Status::ok, 7, "other")};
  const std::string page = html_report(trials);
  EXPECT_NE(page.find("k &mdash; N = 64 (gcc 12.2.0)</h2>"), std::string::npos) << page;
  EXPECT_NE(page.find("k &mdash; N = 64 (clang 14.0.6, spec bbbbbbbb)</h2>"), std::string::npos);
  EXPECT_NE(page.find("k &mdash; N = 64 (clang 14.0.6, spec cccccccc)</h2>"), std::string::npos);
  EXPECT_NE(page.find("other &mdash; N = 64</h2>"), std::string::npos);  // alone: nothing to tell apart
  EXPECT_NE(page.find("<a href=\"#s0\">k</a></td><td>N = 64 (gcc 12.2.0)</td>"), std::string::npos);
  const std::string console = format_parameter_report(trials);
  EXPECT_NE(console.find("k on cpu, {N: 64} (gcc 12.2.0): 1 trials\n"), std::string::npos) << console;
  EXPECT_NE(console.find("k on cpu, {N: 64} (clang 14.0.6, spec bbbbbbbb): 1 trials\n"), std::string::npos);
  EXPECT_NE(console.find("other on cpu, {N: 64}: 1 trials\n"), std::string::npos);
}

// The plot across the sections draws a line per kernel (and per toolchain):
// one line from one kernel's sizes into another's compared nothing.
TEST(HtmlReport, ThePlotAcrossSizesHasALinePerKernel) {
  const std::vector<TrialRecord> trials = {
      trial(ab(1, "x"), Status::ok, 10), trial(ab(1, "x"), Status::ok, 20, "k", {{"N", Value(128)}}),
      trial(ab(1, "x"), Status::ok, 7, "other"), trial(ab(1, "x"), Status::ok, 9, "other", {{"N", Value(128)}})};
  const std::string page = html_report(trials);
  EXPECT_EQ(count(page, "<polyline class=\"sizes\""), 2u) << page;
  // Each size named with its kernel, as the sizes of two kernels may be alike.
  EXPECT_NE(page.find(">k: N = 64</text>"), std::string::npos) << page;
  EXPECT_NE(page.find(">other: N = 128</text>"), std::string::npos);
}

// One kernel's sizes built by two compilers are two lines: each tick names
// its line by a letter that the legend spells out, where two ticks read
// 'N = 64' before and a reader could not tell which was whose.
TEST(HtmlReport, ThePlotAcrossSizesNamesTheToolchainOfEachTick) {
  std::vector<TrialRecord> trials;
  for (const auto& [toolchain, hash] : {std::pair{"gcc 12.2.0", "aaaaaaaa11"}, std::pair{"clang 14.0.6", "bbbbbbbb22"}})
    for (int n : {64, 128}) {
      TrialRecord t = trial(ab(1, "x"), Status::ok, n / 8.0, "k", {{"N", Value(n)}});
      t.toolchain = toolchain;
      t.spec_hash = hash;
      trials.push_back(t);
    }
  const std::string page = html_report(trials);
  EXPECT_EQ(count(page, "<polyline class=\"sizes\""), 2u) << page;
  EXPECT_EQ(count(page, ">N = 64 (A)</text>"), 1u) << page;
  EXPECT_EQ(count(page, ">N = 128 (A)</text>"), 1u);
  EXPECT_EQ(count(page, ">N = 64 (B)</text>"), 1u);
  EXPECT_EQ(count(page, ">N = 128 (B)</text>"), 1u);
  EXPECT_NE(page.find("the letter after a size is its line's:<br>A: gcc 12.2.0<br>B: clang 14.0.6</p>"),
            std::string::npos);
  // Two devices of one toolchain are named by their device, two specs of one
  // toolchain and device by the spec's hash.
  trials[2].toolchain = trials[3].toolchain = "gcc 12.2.0";
  const std::string specs = html_report(trials);
  EXPECT_NE(specs.find("<br>A: spec aaaaaaaa<br>B: spec bbbbbbbb</p>"), std::string::npos) << specs;
  trials[2].spec_hash = trials[3].spec_hash = "aaaaaaaa11";
  trials[2].device = trials[3].device = "gpu";
  const std::string devices = html_report(trials);
  EXPECT_NE(devices.find("<br>A: cpu<br>B: gpu</p>"), std::string::npos) << devices;
  // One line per kernel: its ticks are the sizes alone, with no legend.
  trials[2].device = trials[3].device = "cpu";
  const std::string one = html_report(trials);
  EXPECT_EQ(count(one, ">N = 64</text>"), 1u) << one;
  EXPECT_EQ(one.find("its line's"), std::string::npos);
}

TEST(HtmlReport, ConvergenceStepsFollowTheTrialsOrderAndSkipInvalidOnes) {
  std::vector<TrialRecord> trials = {
      trial(ab(1, "x"), Status::ok, 30), trial(ab(2, "x"), Status::invalid, 0), trial(ab(3, "x"), Status::ok, 20),
      trial(ab(4, "x"), Status::ok, 25), trial(ab(5, "x"), Status::ok, 10),
  };
  const std::string page = html_report(trials);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, std::regex("class=\"best\" points=\"([^\"]*)\"")));
  // Evaluations 1..4 (the invalid trial costs none): best 30 from 1, 20 from
  // 2, 10 from 4, held to the end: (1,30) (2,30) (2,20) (4,20) (4,10) (4,10).
  EXPECT_EQ(count(m[1].str(), ","), 6u) << m[1];
}

TEST(HtmlReport, CapsTheDotsPerValueAndTheFailuresListed) {
  std::vector<TrialRecord> trials;
  for (int i = 0; i < 300; ++i) trials.push_back(trial(ab(1 + i % 2, "x"), Status::ok, 10 + i));
  for (int i = 0; i < 5; ++i) trials.push_back(trial(ab(9, "x"), Status::crash, 0));
  HtmlReportOptions options;
  options.points = 10;
  options.failures = 2;
  const std::string page = html_report(trials, options);
  // No dots on the ranked line past 200 configs, one per ok trial in the
  // convergence plot, 10 per value of A in its strip plot.
  EXPECT_EQ(count(page, "class=\"pt\""), 300u + 2u * 10u);
  EXPECT_EQ(count(page, "<td>crash</td>"), 2u);
  EXPECT_NE(page.find("and 3 more."), std::string::npos);
}

TEST(Svg, TicksAndAxes) {
  using detail::Axis;
  EXPECT_EQ(detail::nice_ticks(Axis{0.5, 10.5, false, ""}), (std::vector<double>{2, 4, 6, 8, 10}));
  // A rank or a number of evaluations: whole numbers only, from one config on.
  EXPECT_EQ(detail::nice_ticks(Axis{0.5, 3.5, false, "", true}), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(detail::nice_ticks(Axis{0.5, 1.5, false, "", true}), (std::vector<double>{1}));
  EXPECT_EQ(detail::nice_ticks(Axis{0.5, 3.5, false, ""}), (std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3, 3.5}));
  const std::string page = html_report(
      {trial(ab(1, "x"), Status::ok, 10), trial(ab(2, "x"), Status::ok, 11), trial(ab(3, "x"), Status::ok, 12)});
  // Neither the ranked plot nor the convergence plot has a tick between two counts.
  EXPECT_EQ(count(page, ">0.5</text>") + count(page, ">1.5</text>") + count(page, ">2.5</text>"), 0u) << page;
  EXPECT_EQ(detail::nice_ticks(Axis{0.9, 900, true, ""}), (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500}));
  EXPECT_EQ(detail::nice_ticks(Axis{0.9, 20000, true, ""}), (std::vector<double>{1, 10, 100, 1000, 10000}));
  // Log scale only past a ratio of 4, and never through zero.
  EXPECT_FALSE(detail::fit_axis(10, 40, "").log);
  EXPECT_TRUE(detail::fit_axis(10, 41, "").log);
  EXPECT_FALSE(detail::fit_axis(0, 100, "").log);
  const auto a = detail::fit_axis(10, 20, "t");
  EXPECT_DOUBLE_EQ(a.lo, 9.5);
  EXPECT_DOUBLE_EQ(a.hi, 20.5);
  EXPECT_EQ(detail::html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

// Two medians one rounding apart: the axis shows one value with a margin,
// and ticks come in a bounded number even where their step is below the
// values' precision (stepping there never reached the end: the tune's
// report grew its tick list until memory ran out).
TEST(Svg, ARangeLostInRoundingStillGetsAFewTicks) {
  using detail::Axis;
  const double x = 0.096, next = std::nextafter(x, 1.0);
  const Axis a = detail::fit_axis(x, next, "t");
  EXPECT_NEAR(a.lo, 0.95 * x, 1e-12);
  EXPECT_NEAR(a.hi, 1.05 * next, 1e-12);
  const auto ticks = detail::nice_ticks(a);
  ASSERT_GE(ticks.size(), 2u);
  EXPECT_LE(ticks.size(), 8u);
  for (double t : ticks) EXPECT_TRUE(t >= a.lo && t <= a.hi) << t;
  EXPECT_LE(detail::nice_ticks(Axis{x, next, false, ""}).size(), 16u);
  EXPECT_LE(detail::nice_ticks(Axis{1e300, std::nextafter(1e300, 2e300), false, ""}).size(), 16u);
  EXPECT_TRUE(detail::nice_ticks(Axis{std::nan(""), 1, false, ""}).empty());
  EXPECT_TRUE(detail::nice_ticks(Axis{0, INFINITY, true, ""}).empty());
  // The slower first, so that the convergence plot's best steps down too.
  std::vector<TrialRecord> trials = {trial(ab(1, "x"), Status::ok, next), trial(ab(2, "x"), Status::ok, x)};
  EXPECT_NE(html_report(trials).find("class=\"best\""), std::string::npos);
}

TEST(HtmlReport, MarksTheBaselineWarnsOnNoiseAndPlotsAcrossSizes) {
  std::vector<TrialRecord> trials;
  for (int i = 0; i < 4; ++i) trials.push_back(trial(ab(1 + i, "x"), Status::ok, 10 + i));
  for (int i = 0; i < 4; ++i) trials.push_back(trial(ab(1 + i, "x"), Status::ok, 40 - i, "k", {{"N", Value(128)}}));
  for (auto& t : trials) {
    t.stats.count = 20;
    t.stats.noise = 0.01;
  }
  trials[0].stats.noise = 0.08;  // the fastest at N = 64 missed a 2% target
  HtmlReportOptions o;
  o.baseline = ab(3, "x");
  o.target_noise = 0.02;
  o.metrics = {{"rate", Expression::parse("N / time_us")}};
  o.warnings = {"the default breaks `l1d_bytes >= 1`"};
  const std::string page = html_report(trials, o);
  EXPECT_NE(page.find("<p class=\"warn\">Warning: the default breaks `l1d_bytes &gt;= 1`</p>"), std::string::npos);
  EXPECT_EQ(count(page, "The best config's noise is 8.0%, over the 2% target"), 1u) << page;
  EXPECT_EQ(count(page, "1 of 4 ok configs missed the noise target"), 1u);
  EXPECT_EQ(count(page, "noisy\">8.0%"), 1u);
  // The default: ringed in each section's ranked plot, dashed in its
  // convergence plot, named in its table, and drawn across the sizes.
  EXPECT_EQ(count(page, "class=\"base\""), 2u);
  EXPECT_EQ(count(page, "class=\"baseline\""), 2u);
  EXPECT_EQ(count(page, "(default)</td>"), 2u);
  EXPECT_NE(page.find("Each size's best time, and the default's where it ran."), std::string::npos);
  EXPECT_EQ(count(page, "class=\"basesizes\""), 1u);
  EXPECT_EQ(count(page, "the default ringed in orange"), 2u);
  // A page that names no default (a report without its spec) promises no
  // mark of it.
  HtmlReportOptions without = o;
  without.baseline.reset();
  const std::string bare = html_report(trials, without);
  EXPECT_EQ(count(bare, "the default ringed in orange"), 0u);
  EXPECT_EQ(count(bare, "dashed orange the default"), 0u);
  EXPECT_EQ(count(bare, "in red the fastest so far"), 2u);
  // A metric column: N = 64 at 10 us is 6.4.
  EXPECT_NE(page.find("<th>rate</th>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"num\">6.4</td>"), std::string::npos);
}

// The polyline of `css_class` in a page (the first), or "" without one.
std::string polyline_of(const std::string& page, const std::string& css_class) {
  const auto at = page.find("<polyline class=\"" + css_class + "\"");
  return at == std::string::npos ? std::string() : page.substr(at, page.find("/>", at) - at);
}

// CCCL's base variant is the reference the configs are scored against, not
// one more config: a line of its own style in the plots (never a dot, nor
// an evaluation of the search), its table row unranked and named, its line
// across the sizes; its failure is named in the failures.
TEST(HtmlReport, CcclsBaseIsTheReferenceNotAnEvaluation) {
  std::vector<TrialRecord> without;
  for (int n : {64, 128})
    for (int i = 0; i < 4; ++i) without.push_back(trial(ab(1 + i, "x"), Status::ok, 10 + i, "k", {{"N", Value(n)}}));
  std::vector<TrialRecord> with = without;
  for (int n : {64, 128}) {
    // Within the configs' times, so that the plots' axes are the same.
    TrialRecord base = trial(Config({{"TUNE_BASE", Value(1)}}), Status::ok, 11.5, "k", {{"N", Value(n)}});
    base.origin = std::string(kOriginBase);
    with.push_back(base);
  }
  HtmlReportOptions o;
  o.baseline = ab(3, "x");
  const std::string page = html_report(with, o), plain = html_report(without, o);
  // A line in the ranked and the convergence plot of each size, and one
  // across the sizes, each in the base's own style.
  EXPECT_EQ(count(page, "<line class=\"cub\""), 4u) << page;
  EXPECT_EQ(count(page, "<polyline class=\"cubsizes\""), 1u);
  EXPECT_NE(page.find(".cub{"), std::string::npos);
  EXPECT_EQ(count(page, "dash-dotted: CUB&#39;s base policy&#39;s time"), 4u);
  EXPECT_EQ(count(page, "Dash-dotted purple in both: CUB's base policy's time"), 2u);
  EXPECT_NE(page.find("and CUB's base policy's (dash-dotted purple"), std::string::npos);
  // Its row: unranked, named.
  EXPECT_EQ(count(page, "<tr><td class=\"num\">-</td><td class=\"num\">11.500</td>"), 2u) << page;
  EXPECT_EQ(count(page, "<code>{TUNE_BASE: 1}</code> (CUB's base)</td>"), 2u) << page;
  // No dot, no evaluation: the configs' plots are as without it.
  EXPECT_EQ(count(page, "class=\"pt\""), count(plain, "class=\"pt\""));
  EXPECT_EQ(polyline_of(page, "best"), polyline_of(plain, "best"));
  EXPECT_FALSE(polyline_of(page, "best").empty());
  EXPECT_EQ(polyline_of(page, "line"), polyline_of(plain, "line"));
  // Without a base, nothing of it.
  EXPECT_EQ(plain.find("CUB"), std::string::npos);
  EXPECT_EQ(plain.find("class=\"cub"), std::string::npos);

  // A base that failed is named among the failures, and drawn nowhere.
  with[8].status = Status::launch_error;
  with[8].error = "no value of TUNE_THREADS";
  const std::string failed = html_report(with, o);
  EXPECT_EQ(count(failed, "<code>{TUNE_BASE: 1}</code> (CUB's base)</td><td>no value of TUNE_THREADS</td>"), 1u)
      << failed;
  EXPECT_EQ(count(failed, "<line class=\"cub\""), 2u);
}

// A store read without its spec may hold CUB's base under two sets of the
// spec's `base:` values: the page shows the one measured last, not the one
// stored last (a base measured again keeps its row), and says which it shows.
TEST(HtmlReport, OfSeveralStoredBasesThePageShowsTheOneMeasuredLastAndSaysSo) {
  std::vector<TrialRecord> trials;
  for (int i = 0; i < 3; ++i) trials.push_back(trial(ab(1 + i, "x"), Status::ok, 10 + i));
  auto base = [](int threads, double us, std::string created_at) {
    TrialRecord t = trial(Config({{"TUNE_BASE", Value(1)}, {"T", Value(threads)}}), Status::ok, us);
    t.origin = std::string(kOriginBase);
    t.created_at = std::move(created_at);
    return t;
  };
  trials.push_back(base(256, 11.25, "2026-12-02T10:00:00Z"));  // measured again last, in its first row
  trials.push_back(base(128, 11.75, "2026-12-01T10:00:00Z"));
  const std::string page = html_report(trials);
  EXPECT_EQ(count(page, "<code>{TUNE_BASE: 1, T: 256}</code> (CUB's base)</td>"), 1u) << page;
  EXPECT_EQ(page.find("<code>{TUNE_BASE: 1, T: 128}</code> (CUB's base)</td>"), std::string::npos);
  EXPECT_NE(page.find("CUB's base was measured here under 2 sets of the spec's <code>base:</code> values; the page "
                      "shows the one measured last, <code>{TUNE_BASE: 1, T: 256}</code> (2026-12-02T10:00:00Z), and "
                      "not <code>{TUNE_BASE: 1, T: 128}</code> (2026-12-01T10:00:00Z). Without the spec it cannot "
                      "tell which is the spec's now: <code>tunekit report SPEC</code> shows that one."),
            std::string::npos)
      << page;
  // One base: nothing to say.
  trials.pop_back();
  EXPECT_EQ(html_report(trials).find("sets of the spec's"), std::string::npos);
}

// A failure's reason is the console's: a compiler's first error line, not
// the context its log opens with.
TEST(HtmlReport, AFailuresReasonIsTheCompilersErrorLine) {
  std::vector<TrialRecord> trials{trial(ab(1, "x"), Status::ok, 10), trial(ab(2, "x"), Status::compile_error, 0)};
  trials[1].error = "s.cpp: In function 'void sx(float*, float*, int)':\ns.cpp:7:3: error: 'this' is not allowed\n";
  const std::string page = html_report(trials, {});
  EXPECT_NE(page.find("<td>s.cpp:7:3: error: &#39;this&#39; is not allowed</td>"), std::string::npos) << page;
  EXPECT_EQ(page.find("In function"), std::string::npos);
}

// A GPU build's registers and spills are columns of the fastest configs'
// table, where the compiler reported them; a host kernel's table has none.
TEST(HtmlReport, RegistersAndSpillsAreColumnsWhereBuildsReportedThem) {
  std::vector<TrialRecord> trials{trial(ab(1, "x"), Status::ok, 10), trial(ab(2, "x"), Status::ok, 12)};
  EXPECT_EQ(html_report(trials, {}).find("<th>registers</th>"), std::string::npos);
  trials[0].resources = {{"registers", 168}, {"spills", 0}};
  trials[1].resources = {{"registers", 255}, {"spills", 24}};
  const std::string page = html_report(trials, {});
  EXPECT_EQ(count(page, "<th>registers</th><th>spills</th>"), 1u) << page;
  EXPECT_EQ(count(page, "<td class=\"num\">168</td><td class=\"num\">0</td>"), 1u) << page;
  EXPECT_EQ(count(page, "<td class=\"num\">255</td><td class=\"num\">24</td>"), 1u) << page;
}

// The best is the one the objective names, as the tune and select name it,
// not the fastest: cost = time_us * (4 - W)^3 makes the slowest config the
// best. Its noise is the one warned about, and it is listed beyond the
// fastest `top`.
TEST(HtmlReport, TheBestIsNamedByTheObjective) {
  auto w = [](int v) { return Config({{"W", Value(v)}}); };
  std::vector<TrialRecord> trials = {trial(w(1), Status::ok, 100), trial(w(2), Status::ok, 200),
                                     trial(w(3), Status::ok, 300)};
  for (auto& t : trials) {
    t.stats.count = 20;
    t.stats.noise = 0.01;
  }
  trials[0].stats.noise = 0.08;  // the fastest missed the target; the best did not
  HtmlReportOptions o;
  o.top = 1;
  o.target_noise = 0.02;
  o.metrics = {{"cost", Expression::parse("time_us * (4 - W) ** 3")}};
  o.objective = Objective{"cost", false, {}};
  const std::string page = html_report(trials, o);
  EXPECT_EQ(count(page, " (best)"), 1u) << page;
  EXPECT_NE(page.find("<code>{W: 3}</code> (best)"), std::string::npos) << page;
  EXPECT_EQ(page.find("The best config's noise"), std::string::npos) << page;
  EXPECT_NE(page.find("<p>The best is chosen by cost (lower is better), not by time.</p>"), std::string::npos) << page;

  // By time, the default objective, the fastest.
  o.objective = {};
  const std::string by_time = html_report(trials, o);
  EXPECT_NE(by_time.find("<code>{W: 1}</code> (best)"), std::string::npos) << by_time;
  EXPECT_EQ(count(by_time, "The best config's noise is 8.0%"), 1u) << by_time;
}
