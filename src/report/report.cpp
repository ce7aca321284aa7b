// Handing results back: one console line per trial, a CSV table, a JSON
// document and the summary printed at the end of `tunekit tune`.
#include "report/detail/files.hpp"
#include "builder/detail/compiler.hpp"
#include "core/detail/text.hpp"
#include "report/detail/text.hpp"
#include "tunekit/report.hpp"
#include "tunekit/objective.hpp"
#include "tunekit/rules.hpp"
#include "tunekit/seeds.hpp"
#include "tunekit/select.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "store/detail/json_value.hpp"

namespace tunekit {

namespace {

using detail::ojson;

constexpr std::size_t kReasonLimit = 100;

// A compiler's log often opens with context ("k.cpp: In function ...");
// the first line that reports an error is what went wrong.
std::string compiler_reason(std::string_view log, Fault fault) {
  // tunekit's own first line for a compiler it stopped (run_compiler): a log
  // cut off by a timeout has errors in it too, and the one shown was a line
  // from its middle, with no word of the timeout.
  if (const std::string_view first = log.substr(0, log.find('\n'));
      first.find(" timed out after ") != std::string_view::npos || first.find(" killed by ") != std::string_view::npos)
    return std::string(first);
  // The machine's trouble, where it stopped the build: the line with
  // "error" in it is then often only its echo ("collect2: error: ld
  // returned 1 exit status" after "ld: final link failed: No space left on
  // device").
  if (fault == Fault::environment)
    if (std::string trouble = detail::machine_trouble_line(std::string(log)); !trouble.empty()) return trouble;
  for (std::size_t at = 0; at < log.size();) {
    const std::size_t end = std::min(log.find('\n', at), log.size());
    const std::string_view line = log.substr(at, end - at);
    if (line.find("error") != std::string_view::npos) return std::string(line);
    at = end + 1;
  }
  return std::string(log);
}

std::string why_failed(const TrialRecord& t) { return detail::failure_reason(t, kReasonLimit); }

const TrialRecord* pick(const SizeReport& s, const std::optional<std::size_t>& index) {
  if (!index || *index >= s.trials.size()) return nullptr;
  return &s.trials[*index];
}

// How CCCL's base variant (TUNE_BASE=1) is named in the summary.
constexpr std::string_view kBaseLabel = "base (CUB's own policy: the source built with TUNE_BASE=1)";

// How many times better the best is than the baseline, by the objective.
std::optional<double> speedup(const TrialRecord* best, const TrialRecord* baseline, const TuneReport& report) {
  if (!best || !baseline) return std::nullopt;
  auto b = objective_value(report.objective, report.metrics, *best);
  auto d = objective_value(report.objective, report.metrics, *baseline);
  if (!b || !d) return std::nullopt;
  return objective_gain(report.objective, *d, *b);
}

// When every trial is a wrong_result by finite differences, the tolerance
// may be what failed them: float sums taken in another order differ in their
// last bits, and the defaults (f32's atol 1e-6, rtol 1e-5) are tight for them.
std::string tolerance_hint(const std::vector<TrialRecord>& trials, const Tolerance& tol) {
  double largest = 0;
  for (const TrialRecord& t : trials) {
    const Verification& v = t.verification;
    if (t.status != Status::wrong_result || !v.checked || !std::isfinite(v.max_abs_diff)) return {};
    largest = std::max(largest, v.max_abs_diff);
  }
  if (trials.empty()) return {};
  return fmt::format(
      "  every one differs from the reference by at most {:.3g} (tolerance: atol {:g}, rtol {:g}); if that is "
      "rounding, loosen it: tolerance in the spec, or --atol/--rtol\n",
      largest, tol.atol, tol.rtol);
}

// Numbers JSON can hold; NaN and infinities become null.
ojson number(double d) { return std::isfinite(d) ? ojson(d) : ojson(nullptr); }

std::string csv_number(double d, const char* spec) {
  if (!std::isfinite(d)) return std::isnan(d) ? "" : (d > 0 ? "inf" : "-inf");
  return fmt::format(fmt::runtime(spec), d);
}

// Where the noise's interval is below 95% (under 6 samples, the samples'
// range): " (a 75% interval, of 3 samples)", else empty.
std::string interval_level_note(const TrialRecord& t) {
  const std::size_t n = t.stats.count ? t.stats.count : t.samples.size();
  const double level = median_interval_level(n);
  if (level >= 0.95) return {};
  return fmt::format(" (a {:g}% interval, of {} sample{})", 100 * level, n, n == 1 ? "" : "s");
}

bool missed_target(const TrialRecord& t, double target) {
  return target > 0 && t.status == Status::ok && t.stats.count > 1 && t.stats.noise > target;
}

std::string metric_text(double v) { return fmt::format("{:.6g}", v); }

ojson trial_json(std::size_t number_, const TrialRecord& t, const TrialColumns& columns) {
  const bool ok = t.status == Status::ok;
  const bool timed = t.stats.count > 0 || !t.samples.empty();
  ojson j = ojson::object();
  j["no"] = number_;
  j["config"] = detail::config_to_json(t.config);
  j["status"] = std::string(to_string(t.status));
  j["time_us"] = ok ? number(t.stats.median.count()) : ojson(nullptr);
  j["min_us"] = timed ? number(t.stats.min.count()) : ojson(nullptr);
  j["noise"] = timed ? number(t.stats.noise) : ojson(nullptr);
  // The noise's interval holds the median with less than 95% under 6
  // samples (the samples' range: 50% at 2).
  j["noise_level"] =
      timed ? number(median_interval_level(t.stats.count ? t.stats.count : t.samples.size())) : ojson(nullptr);
  j["spread"] = timed ? number(t.stats.spread) : ojson(nullptr);
  j["bimodal"] = t.stats.bimodal;
  j["missed_noise_target"] = missed_target(t, columns.target_noise);
  if (!columns.metrics.empty()) {
    ojson m = ojson::object();
    for (const auto& [name, value] : metric_values(columns.metrics, t))
      m[name] = value ? number(*value) : ojson(nullptr);
    j["metrics"] = std::move(m);
  }
  ojson samples = ojson::array();
  for (const auto& s : t.samples) samples.push_back(number(s.count()));
  j["samples_us"] = std::move(samples);
  // Whether the outputs matched the reference's: a wrong_result's were
  // compared, and did not. `compared` says whether they were compared at all.
  j["verified"] = t.verification.checked && t.verification.passed && t.status != Status::wrong_result;
  j["compared"] = t.verification.checked;
  j["max_abs_diff"] = t.verification.checked ? number(t.verification.max_abs_diff) : ojson(nullptr);
  j["max_rel_err"] = t.verification.checked ? number(t.verification.max_rel_err) : ojson(nullptr);
  j["error"] = t.error.empty() ? ojson(nullptr) : ojson(t.error);
  j["build_s"] = number(t.build_time.count());
  // Not recorded (0) in stores before schema 6: null, not a time of 0.
  j["eval_s"] = t.eval_time.count() > 0 ? number(t.eval_time.count()) : ojson(nullptr);
  j["verify_s"] = t.eval_time.count() > 0 ? number(t.verify_time.count()) : ojson(nullptr);
  j["origin"] = t.origin;
  if (!t.resources.empty()) j["resources"] = t.resources;                               // as the compiler reported them
  if (!ok && t.status != Status::slower) j["fault"] = std::string(to_string(t.fault));  // whose fault the failure is
  if (t.status == Status::slower && t.slower_than) {
    // time_us stays null: a few samples are no full measurement.
    j["slower_than"] = {{"factor", number(t.slower_than->factor)},
                        {"best_us", number(t.slower_than->best.count())},
                        {"partial_median_us", number(t.stats.median.count())}};
    j["error"] = detail::slower_reason(t);
  }
  return j;
}

ojson rule_outcome_json(const RuleOutcome& o) {
  ojson j = ojson::object();
  j["no"] = o.seed + 1;
  j["config"] = detail::config_to_json(o.config);
  j["status"] = std::string(to_string(o.status));
  j["time_us"] = o.time ? number(o.time->count()) : ojson(nullptr);
  j["best_us"] = o.best ? number(o.best->count()) : ojson(nullptr);
  j["ratio_to_best"] = o.ratio ? number(*o.ratio) : ojson(nullptr);
  j["rank"] = o.rank ? ojson(*o.rank) : ojson(nullptr);
  j["ok_trials"] = o.ok;
  j["evaluations"] = o.evaluations;
  j["faster"] = o.faster;
  j["beaten_by_no"] = o.beaten_by ? ojson(*o.beaten_by + 1) : ojson(nullptr);
  j["evaluations_to_beat"] = o.evaluations_to_beat ? ojson(*o.evaluations_to_beat) : ojson(nullptr);
  j["expected_random_evaluations"] =
      o.expected_random_evaluations ? number(*o.expected_random_evaluations) : ojson(nullptr);
  return j;
}

ojson pick_json(const SizeReport& s, const std::optional<std::size_t>& index, const TuneReport& report) {
  const TrialRecord* t = pick(s, index);
  if (!t) return nullptr;
  ojson j = ojson::object();
  j["no"] = *index + 1;
  j["config"] = detail::config_to_json(t->config);
  j["status"] = std::string(to_string(t->status));
  j["time_us"] = t->status == Status::ok ? number(t->stats.median.count()) : ojson(nullptr);
  if (!report.objective.is_time()) {
    auto v = objective_value(report.objective, report.metrics, *t);
    j[report.objective.name] = v ? number(*v) : ojson(nullptr);
  }
  return j;
}

std::string status_counts(const std::vector<const TrialRecord*>& trials) {
  constexpr std::array kOrder{
      Status::ok,           Status::slower, Status::invalid, Status::compile_error, Status::resource_limit,
      Status::launch_error, Status::crash,  Status::timeout, Status::wrong_result};
  std::string out = fmt::format("{} trial{}", trials.size(), trials.size() == 1 ? "" : "s");
  std::string parts;
  for (Status s : kOrder) {
    std::size_t n = 0;
    for (const auto* t : trials) n += t->status == s;
    if (n == 0) continue;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", n, to_string(s));
  }
  if (!parts.empty()) out += ": " + parts;
  return out;
}

// How many trials the early stop cut short, and what that means for them.
// Under an objective it cannot serve, the tune turns it off even where the
// spec left it at its default: said here, once a run.
std::string early_stop_line(const std::vector<const TrialRecord*>& trials, const Objective& objective) {
  std::size_t cut = 0;
  std::optional<double> factor;
  bool one_factor = true;
  for (const auto* t : trials) {
    if (t->status != Status::slower) continue;
    ++cut;
    if (!t->slower_than) continue;
    if (factor && *factor != t->slower_than->factor) one_factor = false;
    factor = t->slower_than->factor;
  }
  if (!cut) {
    if (auto why = early_stop_conflict(objective))
      return "early stop: off, every config measured in full: " + *why + "\n";
    return {};
  }
  const std::string bar = factor && one_factor ? fmt::format("{:g} x", *factor) : std::string("a multiple of");
  return fmt::format(
      "early stop: {} trial{} cut short, slower than {} the best so far (their few samples are kept; "
      "never chosen; --early-stop off measures every config in full)\n",
      cut, cut == 1 ? "" : "s", bar);
}

std::string resumed_note(const TuneReport& report) {
  const std::size_t resumed = report.resumed, retried = report.retried, killed = report.measured_again_after_kill;
  std::string out = resumed ? fmt::format("; {} resumed from the store", resumed) : std::string{};
  // Failures measured again: the environment's, other settings, --retry-failed.
  if (retried) out += fmt::format("; {} stored failure{} measured again", retried, retried == 1 ? "" : "s");
  // Each of those trials' lines says so; the count keeps it in the summary.
  // A command kernel runs the user's program, a process a run, in no worker.
  if (killed && report.application)
    out += killed == 1 ? std::string("; 1 trial's program run killed from outside, run again")
                       : fmt::format("; {} trials' program runs killed from outside, run again", killed);
  else if (killed)
    out += killed == 1 ? std::string("; 1 trial's worker killed from outside, measured again on a fresh one")
                       : fmt::format("; {} trials' workers killed from outside, measured again on fresh ones", killed);
  return out;
}

// The choice over CCCL's base variant; the speedup over the default beside
// it at each size where the default is the spec's and ran, and its geomean
// where it did at every size.
std::string universal_over_base_lines(const TuneReport& report, const UniversalChoice& choice) {
  std::vector<std::string> per_size;
  double log_sum = 0;
  std::size_t over_default = 0;
  for (const auto& p : choice.per_size) {
    std::string line = fmt::format("  size {}: {} us, {:.2f}x over CUB's base", detail::shown_bindings(p.size),
                                   format_us(p.time), p.speedup);
    const auto s = std::find_if(report.sizes.begin(), report.sizes.end(),
                                [&](const SizeReport& r) { return size_key(r.size) == size_key(p.size); });
    if (s != report.sizes.end() && s->baseline_is_spec_default) {
      const auto chosen = std::find_if(s->trials.begin(), s->trials.end(), [&](const TrialRecord& t) {
        return t.config == choice.config && t.status == Status::ok && !is_base_trial(t);
      });
      if (const auto sp = chosen == s->trials.end() ? std::nullopt : speedup(&*chosen, pick(*s, s->baseline), report)) {
        line += fmt::format(", {:.2f}x over default", *sp);
        log_sum += std::log(*sp);
        ++over_default;
      }
    }
    per_size.push_back(line + "\n");
  }
  const std::string default_geomean =
      over_default == choice.per_size.size() && over_default > 0
          ? fmt::format(", over default {:.2f}x", std::exp(log_sum / static_cast<double>(over_default)))
          : std::string();
  std::string out = fmt::format("one config for all sizes: {} (geomean speedup over CUB's base policy {:.2f}x{})\n",
                                choice.config.str(), choice.geomean_speedup, default_geomean);
  for (const auto& line : per_size) out += line;
  return out + format_unsettled(choice);
}

// CCCL's choice: the one config with the best geometric-mean speedup across
// all sizes, with each size's speedup. Over CCCL's base variant where it ran
// correctly at every size, as CCCL's scripts score, with the default's
// speedups beside it as the per-size lines give both; else over the default.
std::string universal_lines(const TuneReport& report) {
  const Goal goal{report.objective, report.metrics};
  std::optional<Config> baseline;
  bool default_everywhere = !report.sizes.empty(), base_everywhere = !report.sizes.empty();
  std::vector<TrialRecord> all;
  for (const auto& s : report.sizes) {
    if (!s.baseline_is_spec_default || !s.baseline) default_everywhere = false;
    else baseline = s.trials[*s.baseline].config;
    const TrialRecord* base = pick(s, s.base);
    base_everywhere = base_everywhere && base && base->status == Status::ok;
    all.insert(all.end(), s.trials.begin(), s.trials.end());
  }
  if (base_everywhere) {
    if (auto choice = best_for_all_sizes_over_base(all, goal)) return universal_over_base_lines(report, *choice);
    // A base whose objective has no value (a metric that reads a parameter)
    // leaves the default's comparison.
    if (!default_everywhere)
      return "one config for all sizes: none against CUB's base policy (" + why_no_universal(all, std::nullopt) + ")\n";
  }
  if (!default_everywhere || !baseline) return {};
  auto choice = best_for_all_sizes(all, *baseline, goal);
  if (!choice) return "one config for all sizes: none against the default (" + why_no_universal(all, baseline) + ")\n";
  std::string out = fmt::format("one config for all sizes: {} (geomean speedup over default {:.2f}x)\n",
                                choice->config.str(), choice->geomean_speedup);
  for (const auto& p : choice->per_size)
    out += fmt::format("  size {}: {} us, {:.2f}x\n", detail::shown_bindings(p.size), format_us(p.time), p.speedup);
  out += format_unsettled(*choice);
  return out;
}

// ", gflops 125.3" when the objective is a metric.
std::string objective_note(const TuneReport& report, const TrialRecord& t) {
  if (report.objective.is_time()) return {};
  auto v = objective_value(report.objective, report.metrics, t);
  return ", " + report.objective.name + " " + (v ? metric_text(*v) : std::string("n/a"));
}

// The best config's differences from the reference, each beside its
// tolerance, and which tolerance admitted them: an element passes within
// atol + rtol x |ref|, so a large relative difference passes where the
// reference is near 0 and the absolute one is within atol ("max rel diff
// 35 (within tolerance)" read as if 35 were within rtol).
std::string differences_text(const Verification& v, const Tolerance& tol) {
  const bool within_atol = v.max_abs_diff <= tol.atol, within_rtol = v.max_rel_err <= tol.rtol;
  std::string out =
      fmt::format("max abs diff {:.3g} (atol {:.3g}), max rel diff {:.3g}", v.max_abs_diff, tol.atol, v.max_rel_err);
  if (!v.passed) return out + fmt::format(" (rtol {:.3g}): FAILED", tol.rtol);
  if (within_atol && !within_rtol) return out + " where |ref| is tiny: within atol";
  out += fmt::format(" (rtol {:.3g})", tol.rtol);
  if (within_atol) return out + ": within atol and rtol";
  if (within_rtol) return out + ": within rtol";
  return out + ": within atol + rtol x |ref| element by element";
}

std::string verification_line(const TrialRecord& t, const std::vector<TrialRecord>& all, const TuneReport& report) {
  const Verification& v = t.verification;
  // An application has no arguments to give a role: the program is its own
  // check, and the role advice would ask for what its spec refuses.
  if (report.application)
    return "verification: by the program itself (language: command; a run that exits non-zero is a crash)";
  if (!v.checked && !report.outputs_compared) return "verification: not checked (no argument has role out or inout)";
  if (!v.checked) {
    // When the reference is the default config's outputs, the default is
    // not checked against itself; say what the others showed.
    std::size_t checked = 0, passed = 0;
    double worst = 0;
    for (const auto& o : all)
      if (o.verification.checked) {
        ++checked;
        if (o.verification.passed) {
          ++passed;
          worst = std::max(worst, o.verification.max_abs_diff);
        }
      }
    if (!checked) return "verification: not checked (no reference)";
    return fmt::format(
        "verification: the best config's outputs are the reference; {} of {} other configs matched "
        "them (max abs diff {:.3g})",
        passed, checked, worst);
  }
  return "verification: " + differences_text(v, report.tolerance);
}

// Why a size ran nothing, for the console: the reason's first line and,
// where it goes on (a compiler's log), its next lines indented, up to a
// screenful; the JSON keeps all of it.
std::string stopped_lines(const std::string& error) {
  constexpr std::size_t kShown = 12;
  std::vector<std::string_view> lines;
  std::string_view rest = error;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    if (std::string_view line = rest.substr(0, end); !line.empty()) lines.push_back(line);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  if (lines.empty()) return "\n";
  std::string out = std::string(lines[0]) + "\n";
  for (std::size_t i = 1; i < lines.size() && i <= kShown; ++i) out += "  " + std::string(lines[i]) + "\n";
  if (lines.size() > kShown + 1)
    out += fmt::format("  ... {} more lines (the JSON report has them all)\n", lines.size() - kShown - 1);
  return out;
}

// The trials measured while other processes held the cores, in one line:
// their times may be inflated though their noise looks low.
std::string busy_line(const SizeReport& s) {
  const std::vector<std::size_t> busy = s.measured_on_a_busy_machine();
  if (busy.empty()) return {};
  std::vector<std::string> numbers;
  double most = 0;
  for (const std::size_t i : busy) {
    if (numbers.size() < 8) numbers.push_back(fmt::format("No.{}", i + 1));
    most = std::max(most, s.trials[i].cpu_wait_share);
  }
  if (busy.size() > numbers.size()) numbers.push_back("...");
  return fmt::format(
      "busy machine: {} trial{} ({}) waited for a CPU for {:.0f}% or more of {} time (up to {:.0f}%), as other "
      "processes held the cores: {} times may be inflated; tune again with --fresh on a quiet machine\n",
      busy.size(), busy.size() == 1 ? "" : "s", fmt::join(numbers, ", "), kBusyCpuWait * 100,
      busy.size() == 1 ? "its" : "their", most * 100, busy.size() == 1 ? "its" : "their");
}

// The trials measured again side by side, in this run or the earlier one
// that stored them (a resumed run confirms nothing anew, yet its best is
// still named on the pooled samples), as the HTML report marks them.
std::vector<std::size_t> confirmed_trials(const SizeReport& s) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < s.trials.size(); ++i)
    if (s.trials[i].confirmed) out.push_back(i);
  return out;
}

// The numbers of a size's trials with `origin`, as runs: "No.2 to No.4,
// No.7"; empty when it has none. A provider's seeds run one after another,
// but a seed already stored from an earlier run can sit elsewhere.
std::string trial_numbers(const SizeReport& s, std::string_view origin) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < s.trials.size(); ++i) {
    if (s.trials[i].origin != origin) continue;
    std::size_t last = i;
    while (last + 1 < s.trials.size() && s.trials[last + 1].origin == origin) ++last;
    runs.push_back(last == i ? fmt::format("No.{}", i + 1) : fmt::format("No.{} to No.{}", i + 1, last + 1));
    i = last;
  }
  return fmt::format("{}", fmt::join(runs, ", "));
}

}  // namespace

std::string stopped_part_way_text(const StoppedPartWay& part) {
  // Trials a resume served are of the configs the best is chosen from, but
  // were not measured by the run that was stopped: said apart.
  const std::string resumed = part.resumed == 0 ? ""
                              : part.resumed == part.measured
                                  ? fmt::format(", {} by an earlier run", part.measured == 1 ? "it" : "all")
                                  : fmt::format(", {} of them by an earlier run", part.resumed);
  return fmt::format(
      "the {} config{} measured before {}{} ({})", part.measured, part.measured == 1 ? "" : "s",
      part.cause == StoppedPartWay::Cause::time_budget ? "the time budget ran out" : "the run was stopped", resumed,
      part.valid ? fmt::format("of {} valid at this size", *part.valid) : std::string("part of the valid configs"));
}

std::string format_us(Microseconds t) {
  const double v = t.count();
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  return std::abs(v) >= 1 || v == 0 ? fmt::format("{:.3f}", v) : fmt::format("{:.4g}", v);
}

std::string detail::percent_beside(double share, double other) {
  int decimals = 1;
  while (decimals < 4 && fmt::format("{:.{}f}", 100 * share, decimals) == fmt::format("{:.{}f}", 100 * other, decimals))
    ++decimals;
  return fmt::format("{:.{}f}", 100 * share, decimals);
}

std::string detail::slower_reason(const TrialRecord& t) {
  const std::size_t n = t.stats.count ? t.stats.count : t.samples.size();
  std::string out = fmt::format("cut short after {} sample{}", n, n == 1 ? "" : "s");
  if (t.slower_than)
    out +=
        fmt::format(", all over {:g} x {} us, the best so far", t.slower_than->factor, format_us(t.slower_than->best));
  if (n) out += fmt::format("; min {} us", format_us(t.stats.min));
  // A note on how it was measured (its worker killed from outside), as an
  // ok trial's line has it.
  if (!t.error.empty()) out += "; " + t.error;
  return out;
}

std::string detail::failure_reason(const TrialRecord& t, std::size_t limit) {
  if (t.status == Status::slower) return slower_reason(t);
  // Cut once, at the end: a reason cut before its prefix is added loses its tail.
  std::string reason =
      first_line(t.status == Status::compile_error ? compiler_reason(t.error, t.fault) : t.error, std::string::npos);
  // A failure of the machine's reads like the config's own otherwise (a
  // killed compiler is a compile_error too): said here for every one, so no
  // backend's message needs to.
  if (t.fault == Fault::environment)
    reason = "the machine's fault, tried again on the next run" + (reason.empty() ? "" : ": " + reason);
  // A wrong result's reason is tunekit's own, a line of bounded length whose
  // end says what was wrong (the element, what it got, what was expected):
  // cut in the middle, it lost that.
  if (t.status == Status::wrong_result) limit = std::string::npos;
  // Only a comparison with the reference has a difference to show.
  if (t.status != Status::wrong_result || !t.verification.checked) return first_line(reason, limit);
  const double diff = t.verification.max_abs_diff;
  if (reason.find("max abs diff") != std::string::npos) return first_line(reason, limit);
  if (reason.empty()) return fmt::format("max abs diff {:.3g} > tolerance", diff);
  return first_line(fmt::format("max abs diff {:.3g}: {}", diff, reason), limit);
}

std::string detail::first_line(std::string_view text, std::size_t limit) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  std::string_view line;
  while (!text.empty()) {
    auto nl = text.find('\n');
    line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    while (!line.empty() && blank(line.front())) line.remove_prefix(1);
    while (!line.empty() && blank(line.back())) line.remove_suffix(1);
    if (!line.empty()) break;
  }
  // A program's output reaches the console through a reason: its control
  // characters are shown (^[ for ESC), not obeyed (a clear screen, a title).
  const std::string shown = detail::shown_controls(line, false);
  line = shown;
  if (line.size() <= limit) return std::string(line);
  constexpr std::string_view kGap = " ... ";
  const auto continuation = [&](std::size_t i) { return (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80; };
  const std::size_t room = limit > kGap.size() ? limit - kGap.size() : 0;
  std::size_t tail = line.size() - room / 3;
  while (tail < line.size() && continuation(tail)) ++tail;
  const std::size_t head = utf8_floor(line, room - room / 3);
  std::string_view front = line.substr(0, head), back = line.substr(tail);
  while (!front.empty() && blank(front.back())) front.remove_suffix(1);
  while (!back.empty() && blank(back.front())) back.remove_prefix(1);
  return fmt::format("{}{}{}", front, kGap, back);
}

std::string format_unsettled(const UniversalChoice& choice) {
  const auto& by = choice.unsettled_by;
  if (by.empty()) return {};
  return fmt::format(
      "  not settled: {} config{} cut short by the early stop at some size might beat it ({}{}); "
      "tune with --early-stop off to measure {} in full\n",
      by.size(), by.size() == 1 ? "" : "s", by.front().str(), by.size() > 1 ? ", ..." : "",
      by.size() == 1 ? "it" : "them");
}

TrialColumns columns_of(const TuneReport& report) { return TrialColumns{report.metrics, report.target_noise}; }

std::string format_trial_line(std::size_t number, const TrialRecord& trial, const TrialColumns& columns) {
  if (trial.status == Status::ok) {
    std::string line = fmt::format("No.{}: {} us, {}", number, format_us(trial.stats.median), trial.config.str());
    for (const auto& [name, value] : metric_values(columns.metrics, trial))
      line += ", " + name + " " + (value ? metric_text(*value) : std::string("n/a"));
    if (missed_target(trial, columns.target_noise))
      line += fmt::format(", noise {}% over the {:g}% target{}, min {} us",
                          detail::percent_beside(trial.stats.noise, columns.target_noise), 100 * columns.target_noise,
                          interval_level_note(trial), format_us(trial.stats.min));
    if (trial.stats.bimodal) line += ", two groups of times";
    // An ok trial's error is a note on its measurement (sampling stopped by
    // the trial's deadline).
    if (!trial.error.empty()) line += ", " + trial.error;
    if (auto spills = trial.resources.find("spills"); spills != trial.resources.end() && spills->second > 0)
      line += fmt::format(", {} registers spilled", spills->second);
    return line;
  }
  std::string line = fmt::format("No.{}: {}, {}", number, to_string(trial.status), trial.config.str());
  if (std::string reason = why_failed(trial); !reason.empty()) line += " (" + reason + ")";
  return line;
}

std::string format_csv(const std::vector<TrialRecord>& trials, const TrialColumns& columns) {
  // One column per size name and per parameter, in order of first
  // appearance, after the fixed ones.
  std::vector<std::string> size_names, param_names, resource_names;
  auto add = [](std::vector<std::string>& names, const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& t : trials) {
    for (const auto& [k, v] : t.size) add(size_names, k);
    for (const auto& [k, v] : t.config) add(param_names, k);
    for (const auto& [k, v] : t.resources) add(resource_names, k);
  }
  std::vector<std::string> header{
      "No.",     "Config", "Time(us)", "Status", "MaxAbsDiff", "MaxRelErr",         "Min(us)", "Noise",
      "Samples", "Size",   "Error",    "Spread", "Bimodal",    "MissedNoiseTarget", "Fault"};
  // CCCL's base variant is no config of the search, but its row reads like
  // one ({TUNE_BASE: 1}, parameter columns empty): where it is among the
  // trials, each row says why it ran, `base` for the base. After the rest,
  // as the resources are.
  const bool with_base =
      std::any_of(trials.begin(), trials.end(), [](const TrialRecord& t) { return is_base_trial(t); });
  constexpr std::string_view kOriginColumn = "Origin";
  // A metric, size, parameter or resource named like a column of this file
  // (a size `Noise`, a parameter `Status`, or `Origin` where that column is
  // there) says which it is: a reader by column name would otherwise get
  // the first of the two, and pandas would rename the second `Origin.1`.
  auto column_for = [&](const std::string& name, const char* kind) {
    const bool taken =
        std::find(header.begin(), header.end(), name) != header.end() || (with_base && name == kOriginColumn);
    return taken ? name + " (" + kind + ")" : name;
  };
  for (const auto& m : columns.metrics) header.push_back(column_for(m.name, "metric"));
  for (const auto& n : size_names) header.push_back(column_for(n, "size"));
  for (const auto& n : param_names) header.push_back(column_for(n, "parameter"));
  // Last, so that a reader by position finds the columns above where they
  // were before builds reported resources.
  for (const auto& n : resource_names) header.push_back(column_for(n, "resource"));
  if (with_base) header.emplace_back(kOriginColumn);
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + detail::csv_field(header[i]);
  out += '\n';
  // Numbered within each size, as the console and the JSON number them.
  std::map<std::string, std::size_t> numbered;
  for (const auto& t : trials) {
    const bool ok = t.status == Status::ok;
    const bool timed = t.stats.count > 0 || !t.samples.empty();
    const std::size_t samples = t.stats.count ? t.stats.count : t.samples.size();
    std::vector<std::string> row{
        std::to_string(++numbered[detail::shown_bindings(t.size)]),
        t.config.str(),
        ok ? format_us(t.stats.median) : "",
        std::string(to_string(t.status)),
        t.verification.checked ? csv_number(t.verification.max_abs_diff, "{:.6g}") : "",
        t.verification.checked ? csv_number(t.verification.max_rel_err, "{:.6g}") : "",
        timed ? format_us(t.stats.min) : "",
        timed ? csv_number(t.stats.noise, "{:.4f}") : "",
        std::to_string(samples),
        detail::shown_bindings(t.size),
        t.status == Status::slower ? detail::slower_reason(t) : t.error,
        timed ? csv_number(t.stats.spread, "{:.4f}") : "",
        timed ? (t.stats.bimodal ? "true" : "false") : "",
        ok && columns.target_noise > 0 ? (missed_target(t, columns.target_noise) ? "true" : "false") : "",
        // As in the JSON: a failure says whose it is, so that a reader can drop
        // the machine's failures, which a rerun measures again.
        ok || t.status == Status::slower ? "" : std::string(to_string(t.fault)),
    };
    const auto metrics = metric_values(columns.metrics, t);
    for (std::size_t m = 0; m < columns.metrics.size(); ++m)
      row.push_back(m < metrics.size() && metrics[m].second ? csv_number(*metrics[m].second, "{:.6g}") : "");
    for (const auto& n : size_names) row.push_back(t.size.count(n) ? t.size.at(n).str() : "");
    for (const auto& n : param_names) row.push_back(t.config.find(n) ? t.config.at(n).str() : "");
    for (const auto& n : resource_names) row.push_back(t.resources.count(n) ? std::to_string(t.resources.at(n)) : "");
    if (with_base) row.push_back(t.origin);
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) out += ',';
      out += detail::csv_field(row[i]);
    }
    out += '\n';
  }
  return out;
}

std::string format_json(const TuneReport& report) {
  ojson j = ojson::object();
  j["spec_hash"] = report.spec_hash;
  j["device"] = report.device;
  j["kernel"] = report.kernel.empty() ? ojson(nullptr) : ojson(report.kernel);
  j["db"] = report.db.string();
  for (const auto& [writer, file] : report.files) j[writer] = file.string();
  j["ranks"] = report.ranks;
  j["wall_s"] = number(report.wall.count());
  j["build_s"] = number(report.build.count());
  j["measure_s"] = number(report.measure.count());
  j["build_wait_s"] = number(report.build_wait.count());
  j["device_busy_s"] = number(report.device_busy.count());
  j["flush_s"] = number(report.flush.count());
  j["verify_s"] = number(report.verify.count());
  j["resumed"] = report.resumed;
  j["objective"] = {{"name", report.objective.name}, {"maximize", report.objective.maximize}};
  if (!report.metrics.empty()) {
    ojson m = ojson::object();
    for (const auto& metric : report.metrics) m[metric.name] = metric.expression.text();
    j["metrics"] = std::move(m);
  }
  j["target_noise"] = number(report.target_noise);
  j["retried"] = report.retried;
  j["measured_again_after_kill"] = report.measured_again_after_kill;
  if (report.interrupted) j["interrupted"] = true;
  if (!report.warnings.empty()) j["warnings"] = report.warnings;
  j["seeded_by"] = report.seeded_by;
  ojson sizes = ojson::array();
  for (const auto& s : report.sizes) {
    ojson sj = ojson::object();
    sj["size"] = detail::bindings_to_json(s.size);
    sj["best"] = pick_json(s, s.best, report);
    sj["baseline"] = pick_json(s, s.baseline, report);
    sj["baseline_is_spec_default"] = s.baseline_is_spec_default;
    sj["strategy"] = s.strategy.empty() ? ojson(nullptr) : ojson(s.strategy);
    auto sp = speedup(pick(s, s.best), pick(s, s.baseline), report);
    sj["speedup_over_baseline"] = sp ? number(*sp) : ojson(nullptr);
    // CCCL's base variant (TUNE_BASE=1), null without one; its speedup is
    // null too when it did not run correctly.
    sj["base"] = pick_json(s, s.base, report);
    const auto over_base = speedup(pick(s, s.best), pick(s, s.base), report);
    sj["speedup_over_base"] = over_base ? number(*over_base) : ojson(nullptr);
    sj["seeds"] = s.count_of(kOriginSpecSeeds);
    sj["transfer"] = s.count_of(kOriginTransfer);
    // Every seed provider's count, a program's own too (by its origin).
    ojson seeded = ojson::object();
    for (const auto& origin : report.seeded_by) seeded[origin] = s.count_of(origin);
    sj["seeded"] = std::move(seeded);
    // How the rule config fared (search.rules); null when rules were off or
    // the size has no valid config.
    const auto rule = s.first_of(kOriginRules);
    sj["rules"] = rule ? rule_outcome_json(rule_outcome(s.trials, *rule)) : ojson(nullptr);
    ojson trials = ojson::array();
    for (std::size_t i = 0; i < s.trials.size(); ++i)
      trials.push_back(trial_json(i + 1, s.trials[i], columns_of(report)));
    sj["trials"] = std::move(trials);
    ojson confirmed = ojson::array();  // trial numbers, as in "trials"
    for (std::size_t i : confirmed_trials(s)) confirmed.push_back(i + 1);
    sj["confirmed"] = std::move(confirmed);
    ojson waited = ojson::array();  // trials measured on a busy machine, by number, with the share
    for (const std::size_t i : s.measured_on_a_busy_machine())
      waited.push_back({{"trial", i + 1}, {"cpu_wait_share", s.trials[i].cpu_wait_share}});
    sj["waited_for_cpu"] = std::move(waited);
    // Why the size ran nothing (no valid config, a reference that does not
    // build), as the console's "stopped:" line says.
    sj["stopped"] = s.error.empty() ? ojson(nullptr) : ojson(s.error);
    // Where the run stopped part way through the size (a stop, the time
    // budget), its best is of the configs measured before: null otherwise.
    if (const auto& part = s.stopped_part_way)
      sj["stopped_part_way"] = {
          {"cause", part->cause == StoppedPartWay::Cause::time_budget ? "time_budget" : "stop_requested"},
          {"configs_measured", part->measured},
          {"configs_resumed", part->resumed},
          {"valid_configs", part->valid ? ojson(*part->valid) : ojson(nullptr)},
          {"text", stopped_part_way_text(*part)}};
    else sj["stopped_part_way"] = nullptr;
    sizes.push_back(std::move(sj));
  }
  j["sizes"] = std::move(sizes);
  // A compiler's or a kernel's words may be any bytes: invalid UTF-8 becomes U+FFFD.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string format_summary(const TuneReport& report) {
  std::string out;
  std::vector<const TrialRecord*> everything;
  const bool several = report.sizes.size() > 1;
  for (std::size_t si = 0; si < report.sizes.size(); ++si) {
    const SizeReport& s = report.sizes[si];
    if (si) out += '\n';
    if (several || !s.size.empty()) out += fmt::format("size {}\n", detail::shown_bindings(s.size));
    std::vector<const TrialRecord*> these;
    for (std::size_t i = 0; i < s.trials.size(); ++i) {
      out += format_trial_line(i + 1, s.trials[i], columns_of(report)) + '\n';
      these.push_back(&s.trials[i]);
      everything.push_back(&s.trials[i]);
    }

    std::optional<std::size_t> best_index = s.best;
    // Not chosen by the caller: named as the tune names it.
    if (!pick(s, best_index)) best_index = best_of_size(s.trials, Goal{report.objective, report.metrics});
    const TrialRecord* best = pick(s, best_index);
    const TrialRecord* baseline = pick(s, s.baseline);
    // Each seed provider's trials, in the providers' order (the rule
    // config has its own line below).
    for (const auto& origin : report.seeded_by) {
      if (origin == kOriginRules) continue;
      const std::string numbers = trial_numbers(s, origin);
      if (numbers.empty()) continue;
      const bool one = s.count_of(origin) == 1;
      if (origin == kOriginSpecSeeds) out += fmt::format("{} (search.seeds): {}\n", one ? "seed" : "seeds", numbers);
      else if (origin == kOriginTransfer)
        out += fmt::format("transferred from the nearest tuned sizes (search.transfer): {}\n", numbers);
      else out += fmt::format("{} from the seed provider '{}': {}\n", one ? "seed" : "seeds", origin, numbers);
    }

    if (!s.strategy.empty() && !s.trials.empty()) out += "search: " + s.strategy + "\n";
    if (best && best->status == Status::ok) {
      // A size the run stopped part way names its best as the best of part
      // of its space, where the eye reads the result.
      const std::string best_of =
          s.stopped_part_way ? "best of " + stopped_part_way_text(*s.stopped_part_way) : std::string("best");
      out += fmt::format("{}: No.{} {} us {}{}\n", best_of, *best_index + 1, format_us(best->stats.median),
                         best->config.str(), objective_note(report, *best));
      const char* label = s.baseline_is_spec_default ? "default" : "first valid config";
      // "default: No.1 12.345 us {...}", or the status of one that failed.
      const auto baseline_line = [&](std::string_view name, std::size_t index, const TrialRecord& t) {
        out += t.status == Status::ok
                   ? fmt::format("{}: No.{} {} us {}{}\n", name, index + 1, format_us(t.stats.median), t.config.str(),
                                 objective_note(report, t))
                   : fmt::format("{}: No.{} {} {}\n", name, index + 1, to_string(t.status), t.config.str());
      };
      const TrialRecord* base = pick(s, s.base);
      if (base) baseline_line(kBaseLabel, *s.base, *base);
      if (baseline) {
        baseline_line(label, *s.baseline, *baseline);
      } else {
        // A budget spent on what comes first (rule config, seeds, transfer).
        out +=
            "default: not measured within the budget (the rule config, seeds and transferred configs come "
            "first), so the best is not compared with it; a larger --max-evals measures it\n";
      }
      // The speedup over `reference`, the baseline called `name`.
      const auto speedup_line = [&](const TrialRecord* reference, std::string_view name) {
        const auto sp = speedup(best, reference, report);
        if (!sp) return;
        out += fmt::format("speedup over {}{}: {:.2f}x", name,
                           report.objective.is_time() ? "" : " by " + report.objective.name, *sp);
        // The best is named among the configs measured again side by side:
        // a baseline measured once may have run faster, and a speedup below
        // 1 with no word would read as a tuner that picked a loser.
        if (*sp < 1 && best->confirmed && !reference->confirmed)
          out += fmt::format(
              " (the {} ran faster in its one measurement; the best is named among the configs "
              "measured again side by side, measure.confirm)",
              name);
        out += '\n';
      };
      // CCCL's base variant, where the source has one, is the first
      // baseline, as CCCL's scripts score every variant against it; a base
      // that failed leaves the default's (the tuner warned).
      if (base && base->status == Status::ok) speedup_line(base, "CUB's base policy");
      speedup_line(baseline, label);
      out += verification_line(*best, s.trials, report) + '\n';
      if (const auto confirmed = confirmed_trials(s); !confirmed.empty()) {
        std::vector<std::string> numbers;
        for (std::size_t i : confirmed) numbers.push_back(fmt::format("No.{}", i + 1));
        // A resumed size whose confirmation was stored measured nothing now.
        out += fmt::format("confirmed: {} measured again side by side{}; the best is named on all their samples\n",
                           fmt::join(numbers, ", "), s.confirmed.empty() ? " in an earlier run" : "");
      }
    } else if (!s.error.empty()) {
      out += "stopped: " + stopped_lines(s.error);
    } else if (s.trials.empty()) {
      out += "no trials were run\n";
    } else if (const auto ran = static_cast<std::size_t>(std::count_if(
                   s.trials.begin(), s.trials.end(), [](const TrialRecord& t) { return t.status == Status::ok; }));
               ran > 0) {
      // Trials ran correctly, and the objective's metric failed at each.
      out += fmt::format(
          "no config named: the objective {} has no value at any of the {} trial{} that ran "
          "correctly (see the warning about its metric)\n",
          report.objective.name, ran, ran == 1 ? "" : "s");
    } else {
      out += fmt::format("no valid config: none of the {} trial{} ran correctly{}\n", s.trials.size(),
                         s.trials.size() == 1 ? "" : "s",
                         s.stopped_part_way ? ", of " + stopped_part_way_text(*s.stopped_part_way) : "");
      out += tolerance_hint(s.trials, report.tolerance);
    }
    out += status_counts(these) + (several ? "" : resumed_note(report)) + '\n';
    out += busy_line(s);
  }
  if (several) {
    out += fmt::format("\nall sizes: {}{}\n", status_counts(everything), resumed_note(report));
    out += universal_lines(report);
  }
  out += early_stop_line(everything, report.objective);
  if (std::find(report.seeded_by.begin(), report.seeded_by.end(), kOriginRules) != report.seeded_by.end()) {
    std::vector<RuleOutcome> outcomes;
    std::string missing;
    for (const auto& s : report.sizes) {
      if (auto rule = s.first_of(kOriginRules)) outcomes.push_back(rule_outcome(s.trials, *rule));
      else
        missing += fmt::format("rules: no rule config for size {} (no valid config)\n", detail::shown_bindings(s.size));
    }
    out += '\n';
    if (!outcomes.empty()) out += format_rule_report(outcomes);
    out += missing;
  }

  if (report.wall.count() > 0) {
    // Builds may overlap measuring; only the wait for them adds to the wall.
    // The ranks of a distributed tune each spend the wall.
    const double ranks = static_cast<double>(std::max<std::size_t>(report.ranks, 1));
    const double other =
        std::max(0.0, ranks * report.wall.count() - report.build_wait.count() - report.measure.count());
    std::vector<std::string> parts;
    if (report.flush.count() > 0) parts.push_back(fmt::format("{:.1f} s flushing caches", report.flush.count()));
    // Verifying small outputs takes microseconds: not worth a "0.0 s".
    if (report.verify.count() >= 0.05)
      parts.push_back(fmt::format("{:.1f} s verifying outputs", report.verify.count()));
    const std::string of_measure = parts.empty() ? "" : fmt::format(" (of it {})", fmt::join(parts, ", "));
    const std::string summed = report.ranks > 1 ? fmt::format(" on {} ranks, summed over them", report.ranks) : "";
    // A program reports its own time, which it may count otherwise (over
    // its threads, say): said as its own, it may pass 100%.
    out += fmt::format(
        "time: {:.1f} s{}: build {:.1f} s ({:.1f} s of it waited for), measure {:.1f} s{}, other {:.1f} s; "
        "{} {:.0f}% of the time\n",
        report.wall.count(), summed, report.build.count(), report.build_wait.count(), report.measure.count(),
        of_measure, other, report.application ? "the times the program reported sum to" : "kernels ran",
        100.0 * report.device_busy.count() / (ranks * report.wall.count()));
  }
  for (const auto& w : report.warnings) out += "warning: " + w + "\n";
  std::vector<std::string> files;
  if (!report.db.empty()) files.push_back(report.db.string());
  for (const auto& [writer, file] : report.files) files.push_back(file.string());
  if (!files.empty()) out += fmt::format("results: {}\n", fmt::join(files, ", "));
  return out;
}

}  // namespace tunekit
