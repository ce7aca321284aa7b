// The HTML report and the per-parameter analysis behind it.
#include "tunekit/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/detail/text.hpp"
#include "report/detail/svg.hpp"
#include "report/detail/text.hpp"
#include "tunekit/report.hpp"
#include "tunekit/output.hpp"

namespace tunekit {

namespace {

using detail::html_escape;

Microseconds median_of(std::vector<Microseconds> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// CCCL's base variant is no config of the search: it is never ranked among
// them (Section::base).
std::vector<const TrialRecord*> ok_by_time(const std::vector<const TrialRecord*>& trials) {
  std::vector<const TrialRecord*> ok;
  for (const auto* t : trials)
    if (t->status == Status::ok && !is_base_trial(*t)) ok.push_back(t);
  std::stable_sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->stats.median < b->stats.median; });
  return ok;
}

std::vector<ParameterEffect> effects_of(const std::vector<const TrialRecord*>& trials) {
  // parameter -> value -> the ok trials' medians, and those of the trials
  // cut short (partial); parameters in first-seen order
  struct Times {
    std::vector<Microseconds> ok, slower;
    std::size_t failed = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, std::map<Value, Times>> times;
  bool any_ok = false;
  for (const auto* t : trials) {
    // CCCL's base variant sets no parameter: its TUNE_BASE is none. A
    // failure of the machine's says nothing of the config's values.
    if (is_base_trial(*t) || t->fault == Fault::environment) continue;
    const bool timed = t->status == Status::ok || t->status == Status::slower;
    if (!timed && t->status == Status::invalid) continue;
    any_ok |= t->status == Status::ok;
    for (const auto& [name, value] : t->config) {
      auto [it, fresh] = times.try_emplace(name);
      if (fresh) order.push_back(name);
      Times& at = it->second[value];
      if (!timed) ++at.failed;
      else (t->status == Status::ok ? at.ok : at.slower).push_back(t->stats.median);
    }
  }
  std::vector<ParameterEffect> effects;
  if (!any_ok) return effects;
  for (const auto& name : order) {
    ParameterEffect e;
    e.parameter = name;
    Microseconds fastest = Microseconds::max(), slowest_best{0};
    bool slowest_is_bound = false;
    for (const auto& [value, ts] : times[name]) {
      if (ts.ok.empty() && ts.slower.empty()) {  // every trial failed: no times, no part in the spread
        ParameterLevel level{value};
        level.failed = ts.failed;
        e.levels.push_back(std::move(level));
        continue;
      }
      // A value whose every trial was cut short still counts, at the times
      // of its few samples: a lower bound, but leaving it out would hide
      // the worst choice.
      const bool bound = ts.ok.empty();
      const auto& own = bound ? ts.slower : ts.ok;
      ParameterLevel level{value, ts.ok.size(), *std::min_element(own.begin(), own.end()), median_of(own)};
      level.slower = ts.slower.size();
      level.bound = bound;
      level.failed = ts.failed;
      fastest = std::min(fastest, level.best);
      if (level.best > slowest_best || (level.best == slowest_best && bound)) {
        slowest_best = level.best;
        slowest_is_bound = bound;
      }
      e.levels.push_back(std::move(level));
    }
    e.spread = fastest.count() > 0 ? slowest_best / fastest : 1.0;
    e.spread_is_bound = slowest_is_bound;
    effects.push_back(std::move(e));
  }
  // A parameter with a value that never works costs most when chosen badly,
  // whatever the spread of the values that do: it comes first.
  const auto has_failing_value = [](const ParameterEffect& e) {
    return std::any_of(e.levels.begin(), e.levels.end(), [](const ParameterLevel& l) { return !l.timed(); });
  };
  std::stable_sort(effects.begin(), effects.end(), [&](const ParameterEffect& a, const ParameterEffect& b) {
    if (has_failing_value(a) != has_failing_value(b)) return has_failing_value(a);
    return a.spread != b.spread ? a.spread > b.spread : a.parameter < b.parameter;
  });
  return effects;
}

// A level's times as the tables print them: ">=" before a lower bound.
std::string level_text(const ParameterLevel& l) {
  if (!l.timed()) return fmt::format("every trial failed ({})", l.failed);
  const char* at_least = l.bound ? ">=" : "";
  std::string out =
      fmt::format("{}{} / {}{} ({}", at_least, format_us(l.best), at_least, format_us(l.median), l.trials);
  if (l.slower) out += fmt::format(", {} cut short", l.slower);
  if (l.failed) out += fmt::format(", {} failed", l.failed);
  return out + ")";
}

std::string spread_text(const ParameterEffect& e) {
  return fmt::format("{}{:.2f}x", e.spread_is_bound ? ">=" : "", e.spread);
}

std::string size_str(const Bindings& size) {
  std::string out;
  for (const auto& [k, v] : size) out += (out.empty() ? "" : ", ") + k + " = " + v.str();
  return out.empty() ? "(no sizes)" : out;
}

// A section of the page: one kernel on one device at one size.
struct Section {
  std::string kernel, device;
  Bindings size;
  std::vector<const TrialRecord*> trials;  // in the order given
  std::vector<const TrialRecord*> ok;      // the ok ones, fastest first; never the base
  const TrialRecord* best = nullptr;       // best_of_size(); null when none is ok (or has the objective's value)
  // CCCL's base variant (TUNE_BASE=1), whatever its status: the reference
  // the configs are scored against, drawn as a line, not as a config.
  const TrialRecord* base = nullptr;
  // The section's other base variants: a store read without its spec may
  // hold the base under several sets of the spec's `base:` values, of
  // which the page shows the one measured last and names these.
  std::vector<const TrialRecord*> other_bases;
  std::string toolchain, spec_hash;  // of its first trial
  // What tells it from the other sections of its kernel, device and size
  // (their toolchain, else their spec's hash): empty where there are none.
  std::string variant;
};

// Sections that share a kernel, device and size differ in their spec's hash:
// a store of one kernel built by two compilers, or tuned with other flags,
// holds one section each. Named by the toolchain where that tells them
// apart, else by the hash too, so that two headings never read the same.
void name_variants(std::vector<Section>& sections) {
  std::map<std::string, std::vector<Section*>> alike;
  for (auto& s : sections) alike[s.kernel + '\n' + s.device + '\n' + size_key(s.size)].push_back(&s);
  for (auto& [key, group] : alike) {
    if (group.size() < 2) continue;
    std::map<std::string, std::size_t> per_toolchain;
    for (const Section* s : group) ++per_toolchain[s->toolchain];
    for (Section* s : group) {
      const bool toolchain_tells = !s->toolchain.empty() && per_toolchain[s->toolchain] == 1;
      s->variant = toolchain_tells        ? s->toolchain
                   : s->toolchain.empty() ? "spec " + s->spec_hash.substr(0, 8)
                                          : s->toolchain + ", spec " + s->spec_hash.substr(0, 8);
    }
  }
}

// A section's size, with its variant where it has one.
std::string size_and_variant(const Section& s) {
  return s.variant.empty() ? size_str(s.size) : size_str(s.size) + " (" + s.variant + ")";
}

// The base's time where it ran correctly.
std::optional<double> base_time(const Section& s) {
  if (!s.base || s.base->status != Status::ok) return std::nullopt;
  return s.base->stats.median.count();
}

std::vector<Section> sections_of(const std::vector<TrialRecord>& trials, const Goal& goal) {
  std::vector<Section> sections;
  std::map<std::string, std::size_t> index;
  for (const auto& t : trials) {
    // By the spec's hash, not its name: specs that differ only in name (or
    // metrics, or objective) share their trials, and a trial stored again
    // takes the name of the spec that stored it last, so grouping by name
    // would split one size's trials in two, each with its own best.
    const std::string kernel_key = t.spec_hash.empty() ? "name " + t.kernel : t.spec_hash;
    const std::string key = kernel_key + '\n' + t.device + '\n' + size_key(t.size);
    auto [it, fresh] = index.try_emplace(key, sections.size());
    if (fresh)
      sections.push_back({t.kernel, t.device, t.size, {}, {}, nullptr, nullptr, {}, t.toolchain, t.spec_hash, {}});
    Section& s = sections[it->second];
    if (s.kernel.empty()) s.kernel = t.kernel;
    else if (!t.kernel.empty() && (" / " + s.kernel + " / ").find(" / " + t.kernel + " / ") == std::string::npos)
      s.kernel += " / " + t.kernel;
    s.trials.push_back(&t);
    if (!is_base_trial(t)) continue;
    // The spec's `base:` values are no part of its hash, so the section
    // holds each set's base a tune measured. The one measured last (not the
    // one stored last: a trial measured again keeps its row) is what the
    // latest tune that measured a base saw; `report SPEC` reads the spec's.
    if (!s.base || t.created_at >= s.base->created_at) {
      if (s.base) s.other_bases.push_back(s.base);
      s.base = &t;
    } else {
      s.other_bases.push_back(&t);
    }
  }
  for (auto& s : sections) {
    s.ok = ok_by_time(s.trials);
    if (const auto b = best_of_size(s.trials, goal)) s.best = s.trials[*b];
  }
  name_variants(sections);
  return sections;
}

constexpr int kWide = 560, kTall = 300, kStripWidth = 90;

// The shared y axis of a section's plots: its ok trials' median times, and
// the base's where it is drawn beside them.
detail::Axis time_axis(const std::vector<const TrialRecord*>& ok, std::optional<double> base = std::nullopt) {
  double lo = ok.front()->stats.median.count(), hi = ok.back()->stats.median.count();
  if (base) {
    lo = std::min(lo, *base);
    hi = std::max(hi, *base);
  }
  return detail::fit_axis(lo, hi, "median time (us)");
}

// CCCL's base, where it ran, as a line across a plot of the configs' times.
constexpr std::string_view kBaseTitle = "; dash-dotted: CUB's base policy's time";

bool is_baseline(const TrialRecord& t, const HtmlReportOptions& o) { return o.baseline && t.config == *o.baseline; }

bool missed_target(const TrialRecord& t, const HtmlReportOptions& o) {
  return o.target_noise > 0 && t.status == Status::ok && t.stats.count > 1 && t.stats.noise > o.target_noise;
}

std::string ranked_plot(const std::vector<const TrialRecord*>& ok, std::optional<double> base,
                        const HtmlReportOptions& o) {
  detail::SvgChart chart(kWide, kTall, detail::Axis{0.5, ok.size() + 0.5, false, "rank", true}, time_axis(ok, base));
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = 0; i < ok.size(); ++i) points.emplace_back(i + 1, ok[i]->stats.median.count());
  chart.polyline(points, "line");
  if (ok.size() <= 200)
    for (const auto& [x, y] : points) chart.circle(x, y, 2.5, "pt");
  for (std::size_t i = 0; i < ok.size(); ++i)
    if (is_baseline(*ok[i], o)) chart.circle(points[i].first, points[i].second, 5, "base");
  if (base) chart.segment(0.5, ok.size() + 0.5, *base, "cub");
  return chart.str(std::string("every ok config's median time, fastest first; the default ringed") +
                   (base ? std::string(kBaseTitle) : ""));
}

// The best time so far against evaluations (trials that were built or run:
// `invalid` ones cost nothing), every ok trial a dot. CCCL's base is
// measured after the search, outside its budget: no evaluation of it, but a
// line at its time.
std::string convergence_plot(const std::vector<const TrialRecord*>& trials, const std::vector<const TrialRecord*>& ok,
                             std::optional<double> base, const HtmlReportOptions& o) {
  std::vector<std::pair<double, double>> dots, best;
  std::size_t evaluation = 0;
  double so_far = 0;
  for (const auto* t : trials) {
    if (t->status == Status::invalid || is_base_trial(*t)) continue;
    ++evaluation;
    if (t->status != Status::ok) continue;
    const double v = t->stats.median.count();
    dots.emplace_back(evaluation, v);
    if (best.empty() || v < so_far) {
      if (!best.empty()) best.emplace_back(evaluation, so_far);  // a step: the old best holds until here
      so_far = v;
      best.emplace_back(evaluation, v);
    }
  }
  best.emplace_back(evaluation, so_far);
  detail::SvgChart chart(kWide, kTall, detail::Axis{0.5, evaluation + 0.5, false, "evaluations", true},
                         time_axis(ok, base));
  for (const auto& [x, y] : dots) chart.circle(x, y, 2, "pt");
  chart.polyline(best, "best");
  for (const auto* t : ok)
    if (is_baseline(*t, o)) chart.segment(0.5, evaluation + 0.5, t->stats.median.count(), "baseline");
  if (base) chart.segment(0.5, evaluation + 0.5, *base, "cub");
  return chart.str(std::string("the fastest time found against the number of evaluations; dashed: the default's time") +
                   (base ? std::string(kBaseTitle) : ""));
}

// A strip per value of the parameter: its ok trials' times as dots (at most
// `points`, spread evenly over the sorted times), the best as a dark
// stroke, the median as a grey one.
std::string strip_plot(const ParameterEffect& e, const std::vector<const TrialRecord*>& ok, std::size_t points) {
  std::map<Value, std::vector<double>> times;
  for (const auto* t : ok)
    if (const Value* v = t->config.find(e.parameter)) times[*v].push_back(t->stats.median.count());
  const int width = std::max(220, 70 + kStripWidth * static_cast<int>(e.levels.size()));
  detail::SvgChart chart(width, kTall, detail::Axis{-0.5, e.levels.size() - 0.5, false, e.parameter}, time_axis(ok));
  std::vector<std::pair<double, std::string>> ticks;
  for (std::size_t i = 0; i < e.levels.size(); ++i) {
    const auto& level = e.levels[i];
    ticks.emplace_back(i, level.timed() ? level.value.str() : level.value.str() + " (fails)");
    auto& ts = times[level.value];
    std::sort(ts.begin(), ts.end());
    const std::size_t shown = std::min(points, ts.size());
    for (std::size_t j = 0; j < shown; ++j) {
      const std::size_t k = shown == 1 ? 0 : j * (ts.size() - 1) / (shown - 1);
      // A fixed jitter (the golden ratio's fractional multiples) keeps the
      // page the same for the same trials.
      const double jitter = (std::fmod(j * 0.6180339887, 1.0) - 0.5) * 0.5;
      chart.circle(i + jitter, ts[k], 2, "pt");
    }
    if (!level.timed()) continue;  // its tick stands alone: no ok trial to draw
    chart.segment(i - 0.35, i + 0.35, level.median.count(), "median");
    chart.segment(i - 0.35, i + 0.35, level.best.count(), "bestmark");
  }
  chart.x_categories(ticks);
  return chart.str(e.parameter + ": each value's ok trials");
}

std::string status_counts(const std::vector<const TrialRecord*>& trials) {
  std::map<Status, std::size_t> counts;  // in Status order: ok first
  for (const auto* t : trials) ++counts[t->status];
  std::string out;
  for (const auto& [status, n] : counts) out += (out.empty() ? "" : ", ") + fmt::format("{} {}", n, to_string(status));
  return out;
}

const char* kStyle = R"(<style>
body{font-family:system-ui,sans-serif;margin:24px;max-width:1200px;color:#222}
h2{margin-top:36px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px}
.plots{display:flex;flex-wrap:wrap;gap:12px}
svg{background:#fff}
.frame{fill:none;stroke:#999}
.grid{stroke:#eee}
.tick{font-size:10px;fill:#555}
.label{font-size:11px;fill:#333}
.pt{fill:#3b75af;fill-opacity:.35}
.line{fill:none;stroke:#3b75af;stroke-width:1.5}
.best{fill:none;stroke:#c0392b;stroke-width:2}
.median{stroke:#888;stroke-width:2}
.bestmark{stroke:#111;stroke-width:2.5}
.base{fill:none;stroke:#e67e22;stroke-width:2}
.baseline{stroke:#e67e22;stroke-width:1.5;stroke-dasharray:5 4}
.sizes{fill:none;stroke:#c0392b;stroke-width:2}
.basesizes{fill:none;stroke:#e67e22;stroke-width:1.5;stroke-dasharray:5 4}
.cub{stroke:#8e44ad;stroke-width:1.5;stroke-dasharray:9 3 2 3}
.cubsizes{fill:none;stroke:#8e44ad;stroke-width:1.5;stroke-dasharray:9 3 2 3}
.warn{background:#fff3cd;border:1px solid #e0c36b;padding:6px 10px}
td.noisy{background:#fde2e1}
</style>)";

std::string metric_cells(const TrialRecord& t, const HtmlReportOptions& o) {
  std::string cells;
  for (const auto& [name, value] : metric_values(o.metrics, t))
    cells += "<td class=\"num\">" + (value ? fmt::format("{:.6g}", *value) : std::string("-")) + "</td>";
  return cells;
}

std::string section_html(const Section& s, std::size_t number, const HtmlReportOptions& options) {
  std::string h = fmt::format("<h2 id=\"s{}\">{} &mdash; {}</h2>\n<p>{} &middot; {} trials: {}</p>\n", number,
                              html_escape(s.kernel), html_escape(size_and_variant(s)), html_escape(s.device),
                              s.trials.size(), html_escape(status_counts(s.trials)));
  if (s.base && !s.other_bases.empty()) {
    std::string others;
    for (const TrialRecord* t : s.other_bases)
      others += fmt::format("{}<code>{}</code> ({})", others.empty() ? "" : ", ", html_escape(t->config.str()),
                            html_escape(t->created_at));
    h += fmt::format(
        "<p class=\"warn\">CUB's base was measured here under {} sets of the spec's <code>base:</code> values; the "
        "page shows the one measured last, <code>{}</code> ({}), and not {}. Without the spec it cannot tell which "
        "is the spec's now: <code>tunekit report SPEC</code> shows that one.</p>\n",
        s.other_bases.size() + 1, html_escape(s.base->config.str()), html_escape(s.base->created_at), others);
  }
  const auto& ok = s.ok;
  if (ok.empty()) {
    h += "<p><strong>No config ran correctly.</strong></p>\n";
  } else {
    // Noise: a winner whose median is less sure than the target may not be
    // the winner; say so before the table.
    std::size_t missed = 0;
    for (const auto* t : ok) missed += missed_target(*t, options);
    if (s.best && missed_target(*s.best, options))
      h += fmt::format(
          "<p class=\"warn\">The best config's noise is {}%, over the {:g}% target: configs "
          "within that of it may be faster. Rerun on a quieter machine or with more samples "
          "(measure.max_time).</p>\n",
          detail::percent_beside(s.best->stats.noise, options.target_noise), 100 * options.target_noise);
    if (options.target_noise > 0 && missed)
      h += fmt::format("<p>{} of {} ok configs missed the noise target ({:g}%): their noise is marked.</p>\n", missed,
                       ok.size(), 100 * options.target_noise);
    std::vector<const TrialRecord*> rows(ok.begin(), ok.begin() + std::min(options.top, ok.size()));
    // The best is listed too, wherever it ranks by time (an objective other
    // than time may name a slow config), and the default, for comparison.
    for (const auto* t : ok)
      if ((t == s.best || is_baseline(*t, options)) && std::find(rows.begin(), rows.end(), t) == rows.end())
        rows.push_back(t);
    // CCCL's base last, unranked: the reference, no config of the search.
    const std::optional<double> base = base_time(s);
    if (base) rows.push_back(s.base);
    // What a GPU build uses explains a time: registers and spills, where the
    // compiler reported them.
    const bool resources = std::any_of(rows.begin(), rows.end(), [](const TrialRecord* t) {
      return t->resources.count("registers") || t->resources.count("spills");
    });
    const auto resource_cell = [](const TrialRecord& t, const char* name) {
      const auto it = t.resources.find(name);
      return fmt::format("<td class=\"num\">{}</td>", it == t.resources.end() ? "-" : std::to_string(it->second));
    };
    std::string metric_heads;
    for (const auto& m : options.metrics) metric_heads += "<th>" + html_escape(m.name) + "</th>";
    const bool confirmed = s.best && s.best->confirmed;
    const std::string side_by_side = "each was measured again side by side with the others";
    std::string chosen;
    if (s.best && !options.objective.is_time())
      chosen = "<p>The best is chosen by " + html_escape(options.objective.describe()) + ", not by time" +
               (confirmed ? ", among the confirmed configs: " + side_by_side : std::string()) + ".</p>\n";
    else if (confirmed) chosen = "<p>The best is the fastest of the confirmed configs: " + side_by_side + ".</p>\n";
    h += "<h3>Fastest configs</h3>\n" + chosen +
         "<table><tr><th>rank</th><th>median us</th><th>min us</th><th>noise</th>" + metric_heads +
         "<th>max abs diff</th>" + (resources ? "<th>registers</th><th>spills</th>" : "") + "<th>config</th></tr>\n";
    for (const auto* row : rows) {
      const auto& t = *row;
      const bool is_base = row == s.base;
      const std::size_t rank = static_cast<std::size_t>(std::find(ok.begin(), ok.end(), row) - ok.begin()) + 1;
      h += fmt::format(
          "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num{}\">{:.1f}%{}</td>"
          "{}<td class=\"num\">{}</td>{}<td><code>{}</code>{}</td></tr>\n",
          is_base ? std::string("-") : std::to_string(rank), format_us(t.stats.median), format_us(t.stats.min),
          missed_target(t, options) ? " noisy" : "", 100 * t.stats.noise, t.stats.bimodal ? " (two groups)" : "",
          metric_cells(t, options),
          t.verification.checked ? fmt::format("{:.3g}", t.verification.max_abs_diff) : std::string("-"),
          resources ? resource_cell(t, "registers") + resource_cell(t, "spills") : std::string(),
          html_escape(t.config.str()),
          std::string(row == s.best ? " (best)" : "") + (is_baseline(t, options) ? " (default)" : "") +
              (is_base ? " (CUB's base)" : "") + (t.confirmed ? " (confirmed)" : ""));
    }
    h += "</table>\n<div class=\"plots\">" + ranked_plot(ok, base, options) +
         convergence_plot(s.trials, ok, base, options) + "</div>\n";
    // Without a default among them (a report with no spec names none) the
    // caption does not promise its marks.
    const bool default_drawn =
        std::any_of(ok.begin(), ok.end(), [&](const TrialRecord* t) { return is_baseline(*t, options); });
    h += fmt::format(
        "<p>Left: the ok configs by time{}. Right: each ok trial in evaluation order, in red the fastest so far{}. ",
        default_drawn ? ", the default ringed in orange" : "",
        default_drawn ? ", dashed orange the default's time" : "");
    if (base)
      h += "Dash-dotted purple in both: CUB's base policy's time (the source built with TUNE_BASE=1), measured after "
           "the search, the reference the configs are scored against; no config of the search, so neither ranked "
           "nor an evaluation. ";
    h += "Noise is the half-width of the median's 95% confidence interval, relative to the median; under 6 "
         "samples, of the samples' range, which holds the median less surely (50% at 2 samples, 93.75% at 5).</p>\n";

    const auto effects = effects_of(s.trials);
    h += "<h3>Parameters</h3>\n<p>Per value: the best and the median time of the ok trials that set it (a value "
         "whose every trial was cut short by the early stop: of their few samples, marked &ge;, a lower bound), "
         "and how many of its trials failed for a reason of the config's; a value whose every trial failed has no "
         "times. Spread: the slowest value's best over the fastest value's best, among the values that ran; "
         "largest first, after the parameters with a value that always fails.</p>\n"
         "<table><tr><th>parameter</th><th>spread</th><th>value: best us / median us (ok trials, cut short, "
         "failed)</th></tr>\n";
    for (const auto& e : effects) {
      std::string levels;
      for (const auto& l : e.levels)
        levels += fmt::format("{}<code>{}</code>: {}", levels.empty() ? "" : " &nbsp; ", html_escape(l.value.str()),
                              html_escape(level_text(l)));
      h += fmt::format("<tr><td><code>{}</code></td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                       html_escape(e.parameter), html_escape(spread_text(e)), levels);
    }
    h += "</table>\n<div class=\"plots\">";
    for (const auto& e : effects)
      if (e.levels.size() > 1) h += strip_plot(e, ok, options.points);
    h += "</div>\n<p>Dots: the trials of each value (at most " + std::to_string(options.points) +
         " per value, spread over its times); black: its best; grey: its median.</p>\n";
  }

  std::vector<const TrialRecord*> slower;
  for (const auto* t : s.trials)
    if (t->status == Status::slower) slower.push_back(t);
  if (!slower.empty()) {
    // Not failures: they ran correctly, and were seen to be losers early.
    h += "<h3>Cut short by the early stop</h3>\n<p>Their first samples were all slower than the bar (a multiple of "
         "the best time so far), so sampling stopped there: the times are of those few samples, never a full "
         "measurement, and no choice takes them.</p>\n"
         "<table><tr><th>config</th><th>samples</th><th>min us</th><th>median us</th><th>bar</th></tr>\n";
    for (std::size_t i = 0; i < std::min(options.failures, slower.size()); ++i) {
      const auto& t = *slower[i];
      const std::string bar = t.slower_than
                                  ? fmt::format("{:g} x {} us", t.slower_than->factor, format_us(t.slower_than->best))
                                  : std::string("-");
      h += fmt::format(
          "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
          html_escape(t.config.str()), t.stats.count, format_us(t.stats.min), format_us(t.stats.median), bar);
    }
    h += "</table>\n";
    if (slower.size() > options.failures) h += fmt::format("<p>and {} more.</p>\n", slower.size() - options.failures);
  }

  std::vector<const TrialRecord*> failed;
  for (const auto* t : s.trials)
    if (t->status != Status::ok && t->status != Status::slower) failed.push_back(t);
  if (!failed.empty()) {
    h += "<h3>Failures</h3>\n<table><tr><th>status</th><th>config</th><th>reason</th></tr>\n";
    for (std::size_t i = 0; i < std::min(options.failures, failed.size()); ++i)
      h += fmt::format("<tr><td>{}</td><td><code>{}</code>{}</td><td>{}</td></tr>\n", to_string(failed[i]->status),
                       html_escape(failed[i]->config.str()), failed[i] == s.base ? " (CUB's base)" : "",
                       html_escape(detail::failure_reason(*failed[i], 300)));
    h += "</table>\n";
    if (failed.size() > options.failures) h += fmt::format("<p>and {} more.</p>\n", failed.size() - options.failures);
  }
  return h;
}

}  // namespace

std::vector<ParameterEffect> parameter_effects(const std::vector<TrialRecord>& trials) {
  std::vector<const TrialRecord*> all;
  for (const auto& t : trials) all.push_back(&t);
  return effects_of(all);
}

std::string format_parameter_effects(const std::vector<ParameterEffect>& effects) {
  std::size_t width = 9;
  for (const auto& e : effects) width = std::max(width, e.parameter.size());
  std::string out = fmt::format("{:<{}}  {:>7}  value: best us / median us (ok trials, cut short, failed)\n",
                                "parameter", width, "spread");
  for (const auto& e : effects) {
    out += fmt::format("{:<{}}  {:>7} ", e.parameter, width, spread_text(e));
    for (const auto& l : e.levels) out += fmt::format(" {}: {}", detail::shown_value(l.value), level_text(l));
    out += '\n';
  }
  return out;
}

std::string format_parameter_report(const std::vector<TrialRecord>& trials) {
  std::string out;
  for (const auto& s : sections_of(trials, {})) {  // names no best: the effects alone
    const auto effects = effects_of(s.trials);
    out += fmt::format("{} on {}, {}{}: {} trials\n{}", s.kernel, s.device, detail::shown_bindings(s.size),
                       s.variant.empty() ? "" : " (" + s.variant + ")", s.trials.size(),
                       effects.empty() ? "  no config ran correctly\n" : format_parameter_effects(effects));
  }
  return out;
}

// What tells one line of the plot across sizes from the others of its
// kernel: the device, the toolchain, else the spec's hash, each only where
// the kernel's lines differ in it.
struct SeriesNames {
  std::map<std::string, std::string> tag;  // series key -> "A", "B", ...; none where a kernel has one line
  std::vector<std::string> legend;         // "A: clang++ 18.1.3", in the order of the tags
};

std::string series_key(const Section& s) {
  return s.spec_hash + '\n' + s.kernel + '\n' + s.device + '\n' + s.toolchain;
}

SeriesNames name_series(const std::vector<Section>& sections) {
  std::map<std::string, std::vector<const Section*>> lines_of;  // kernel -> a section of each of its lines
  std::set<std::string> seen;
  for (const auto& s : sections)
    if (seen.insert(series_key(s)).second) lines_of[s.kernel].push_back(&s);
  SeriesNames names;
  for (const auto& s : sections) {
    const auto& lines = lines_of[s.kernel];
    if (lines.size() < 2 || names.tag.count(series_key(s))) continue;
    std::set<std::string> devices, toolchains, device_and_toolchain;
    for (const Section* l : lines) {
      devices.insert(l->device);
      toolchains.insert(l->toolchain);
      device_and_toolchain.insert(l->device + '\n' + l->toolchain);
    }
    std::vector<std::string> parts;
    if (devices.size() > 1) parts.push_back(s.device);
    if (toolchains.size() > 1) parts.push_back(s.toolchain.empty() ? "toolchain not recorded" : s.toolchain);
    if (device_and_toolchain.size() < lines.size()) parts.push_back("spec " + s.spec_hash.substr(0, 8));
    std::string tag;  // A to Z, then AA
    for (std::size_t n = names.legend.size() + 1; n > 0; n = (n - 1) / 26)
      tag.insert(tag.begin(), static_cast<char>('A' + (n - 1) % 26));
    names.tag[series_key(s)] = tag;
    std::string name;
    for (const auto& part : parts) name += (name.empty() ? "" : ", ") + part;
    names.legend.push_back(tag + ": " + (lines_of.size() > 1 ? s.kernel + ", " : "") + name);
  }
  return names;
}

struct SizesPlot {
  std::string svg;
  std::vector<std::string> legend;  // what each tick's letter stands for; empty where no tick has one
};

// Each size's best time, the default's and CCCL's base's, across the sizes
// (in order of first appearance): how the tuned gain changes with the problem.
SizesPlot sizes_plot(const std::vector<Section>& sections, const HtmlReportOptions& options) {
  // A line per kernel, device and spec (a series): a store of two kernels,
  // or of one built by two compilers, has a line each, not one line that
  // runs from one's last size to the other's first. Where a kernel has
  // several, each tick names its line by a letter that the legend spells
  // out: two ticks 'n = 100000' told the reader nothing of which was whose.
  struct Series {
    std::vector<std::pair<double, double>> best, base, cub;
  };
  std::map<std::string, Series> series;
  std::set<std::string> kernels;
  for (const auto& s : sections) kernels.insert(s.kernel);
  const SeriesNames names = name_series(sections);
  std::vector<std::pair<double, std::string>> ticks;
  double lo = 0, hi = 0;
  auto extend = [&](double v) {
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    std::string tick = kernels.size() > 1 ? s.kernel + ": " + size_str(s.size) : size_str(s.size);
    if (const auto tag = names.tag.find(series_key(s)); tag != names.tag.end()) tick += " (" + tag->second + ")";
    ticks.emplace_back(i, tick);
    if (!s.best) continue;
    Series& line = series[series_key(s)];
    line.best.emplace_back(i, s.best->stats.median.count());
    extend(line.best.back().second);
    for (const auto* t : s.ok)
      if (is_baseline(*t, options)) {
        line.base.emplace_back(i, t->stats.median.count());
        extend(line.base.back().second);
      }
    if (const auto at = base_time(s)) {
      line.cub.emplace_back(i, *at);
      extend(*at);
    }
  }
  if (series.empty()) return {};
  const int width = std::max(kWide, 80 + 70 * static_cast<int>(sections.size()));
  detail::SvgChart chart(width, kTall, detail::Axis{-0.5, sections.size() - 0.5, false, "size"},
                         detail::fit_axis(lo, hi, "median time (us)"));
  bool any_cub = false;
  for (const auto& [key, line] : series) {
    chart.polyline(line.best, "sizes");
    for (const auto& [x, y] : line.best) chart.circle(x, y, 3, "pt");
    chart.polyline(line.base, "basesizes");  // nothing for an empty line
    chart.polyline(line.cub, "cubsizes");
    any_cub |= !line.cub.empty();
  }
  chart.x_categories(ticks);
  std::string legend;
  for (const auto& entry : names.legend) legend += "; " + entry;
  return {chart.str(std::string("each size's best time (red) and the default's (dashed orange)") +
                    (any_cub ? "; dash-dotted purple: CUB's base policy's" : "") + legend),
          names.legend};
}

std::string html_report(const std::vector<TrialRecord>& trials, const HtmlReportOptions& options) {
  const auto sections = sections_of(trials, Goal{options.objective, options.metrics});
  std::string first, last;
  for (const auto& t : trials) {
    if (t.created_at.empty()) continue;
    if (first.empty() || t.created_at < first) first = t.created_at;
    if (last.empty() || t.created_at > last) last = t.created_at;
  }
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  html_escape(options.title) + "</title>\n" + kStyle + "\n</head>\n<body>\n<h1>" +
                  html_escape(options.title) + "</h1>\n";
  h += fmt::format("<p>{} trials in {} section{}", trials.size(), sections.size(), sections.size() == 1 ? "" : "s");
  if (!first.empty()) h += fmt::format(", measured {} to {}", html_escape(first), html_escape(last));
  h += ". Times are medians of each trial's samples.</p>\n";
  for (const auto& w : options.warnings) h += "<p class=\"warn\">Warning: " + html_escape(w) + "</p>\n";
  for (const auto& [size, why] : options.stopped)
    h += fmt::format("<p class=\"warn\">Size {} ran nothing:</p>\n<pre>{}</pre>\n", html_escape(size_str(size)),
                     html_escape(why));
  for (const auto& [size, of_what] : options.best_of_part)
    h += fmt::format("<p class=\"warn\">Size {}: its best is the best of {}.</p>\n", html_escape(size_str(size)),
                     html_escape(of_what));
  if (sections.size() > 1) {
    // The overview: each section's best, linked to the section.
    h += "<table><tr><th>kernel</th><th>size</th><th>device</th><th>trials</th><th>ok</th><th>best us</th>"
         "<th>best config</th></tr>\n";
    for (std::size_t i = 0; i < sections.size(); ++i) {
      const auto& ok = sections[i].ok;
      const TrialRecord* best = sections[i].best;
      h += fmt::format(
          "<tr><td><a href=\"#s{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>\n",
          i, html_escape(sections[i].kernel), html_escape(size_and_variant(sections[i])),
          html_escape(sections[i].device), sections[i].trials.size(), ok.size(),
          best ? format_us(best->stats.median) : std::string("-"),
          best ? html_escape(best->config.str()) : std::string());
    }
    h += "</table>\n";
    if (const auto plot = sizes_plot(sections, options); !plot.svg.empty()) {
      std::string legend;
      for (const auto& entry : plot.legend) legend += "<br>" + html_escape(entry);
      h += "<div class=\"plots\">" + plot.svg + "</div>\n<p>Each size's best time, and the default's where it ran" +
           (std::any_of(sections.begin(), sections.end(), [](const Section& s) { return base_time(s).has_value(); })
                ? ", and CUB's base policy's (dash-dotted purple, the source built with TUNE_BASE=1) where it ran"
                : "") +
           (legend.empty() ? "." : ". A line per toolchain, device or spec; the letter after a size is its line's:") +
           legend + "</p>\n";
    }
  }
  for (std::size_t i = 0; i < sections.size(); ++i) h += section_html(sections[i], i, options);
  return h + "</body>\n</html>\n";
}

void write_html_report(const std::filesystem::path& file, const std::vector<TrialRecord>& trials,
                       const HtmlReportOptions& options) {
  write_file_atomically(file, html_report(trials, options));
}

}  // namespace tunekit
