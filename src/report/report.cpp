// Handing results back: one console line per trial, a CSV table, a JSON
// document and the summary printed at the end of `tunekit tune`.
#include "report/detail/files.hpp"
#include "report/detail/text.hpp"
#include "tunekit/report.hpp"
#include "tunekit/rules.hpp"
#include "tunekit/seeds.hpp"
#include "tunekit/select.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "store/detail/json_value.hpp"

namespace tunekit {

namespace {

using detail::ojson;

constexpr std::size_t kReasonLimit = 100;

std::string first_line(std::string_view text) { return detail::first_line(text, kReasonLimit); }

std::string format_bindings(const Bindings& b) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : b) {
    if (!first) out += ", ";
    first = false;
    out += name + ": " + value.str();
  }
  return out + "}";
}

using detail::us;

std::string why_failed(const TrialRecord& t) {
  std::string reason = first_line(t.error);
  if (t.status != Status::wrong_result) return reason;
  const double diff = t.verification.max_abs_diff;
  if (reason.find("max abs diff") != std::string::npos) return reason;
  if (reason.empty()) return fmt::format("max abs diff {:.3g} > tolerance", diff);
  return first_line(fmt::format("max abs diff {:.3g}: {}", diff, reason));
}

const TrialRecord* pick(const SizeReport& s, const std::optional<std::size_t>& index) {
  if (!index || *index >= s.trials.size()) return nullptr;
  return &s.trials[*index];
}

std::optional<double> speedup(const TrialRecord* best, const TrialRecord* baseline) {
  if (!best || !baseline || best->status != Status::ok || baseline->status != Status::ok) return std::nullopt;
  double b = best->stats.median.count(), d = baseline->stats.median.count();
  if (!(b > 0) || !std::isfinite(d)) return std::nullopt;
  return d / b;
}

// Numbers JSON can hold; NaN and infinities become null.
ojson number(double d) { return std::isfinite(d) ? ojson(d) : ojson(nullptr); }



std::string csv_number(double d, const char* spec) {
  if (!std::isfinite(d)) return std::isnan(d) ? "" : (d > 0 ? "inf" : "-inf");
  return fmt::format(fmt::runtime(spec), d);
}

ojson trial_json(std::size_t number_, const TrialRecord& t) {
  const bool ok = t.status == Status::ok;
  const bool timed = t.stats.count > 0 || !t.samples.empty();
  ojson j = ojson::object();
  j["no"] = number_;
  j["config"] = detail::config_to_json(t.config);
  j["status"] = std::string(to_string(t.status));
  j["time_us"] = ok ? number(t.stats.median.count()) : ojson(nullptr);
  j["min_us"] = timed ? number(t.stats.min.count()) : ojson(nullptr);
  j["noise"] = timed ? number(t.stats.noise) : ojson(nullptr);
  ojson samples = ojson::array();
  for (const auto& s : t.samples) samples.push_back(number(s.count()));
  j["samples_us"] = std::move(samples);
  j["verified"] = t.verification.checked;
  j["max_abs_diff"] = t.verification.checked ? number(t.verification.max_abs_diff) : ojson(nullptr);
  j["max_rel_err"] = t.verification.checked ? number(t.verification.max_rel_err) : ojson(nullptr);
  j["error"] = t.error.empty() ? ojson(nullptr) : ojson(t.error);
  j["build_s"] = number(t.build_time.count());
  j["origin"] = t.origin;
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

ojson pick_json(const SizeReport& s, const std::optional<std::size_t>& index) {
  const TrialRecord* t = pick(s, index);
  if (!t) return nullptr;
  ojson j = ojson::object();
  j["no"] = *index + 1;
  j["config"] = detail::config_to_json(t->config);
  j["status"] = std::string(to_string(t->status));
  j["time_us"] = t->status == Status::ok ? number(t->stats.median.count()) : ojson(nullptr);
  return j;
}

std::string status_counts(const std::vector<const TrialRecord*>& trials) {
  constexpr std::array kOrder{Status::ok,          Status::invalid, Status::compile_error, Status::resource_limit,
                              Status::launch_error, Status::crash,   Status::timeout,       Status::wrong_result};
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

std::string resumed_note(std::size_t resumed) {
  return resumed ? fmt::format("; {} resumed from the store", resumed) : std::string{};
}

// CCCL's choice: the one config with the best geometric-mean speedup over
// the default across all sizes, with each size's speedup.
std::string universal_lines(const TuneReport& report) {
  std::optional<Config> baseline;
  std::vector<TrialRecord> all;
  for (const auto& s : report.sizes) {
    if (!s.baseline_is_spec_default || !s.baseline) return {};
    baseline = s.trials[*s.baseline].config;
    all.insert(all.end(), s.trials.begin(), s.trials.end());
  }
  if (!baseline) return {};
  auto choice = best_for_all_sizes(all, *baseline);
  if (!choice) return "one config for all sizes: none ran correctly at every size\n";
  std::string out = fmt::format("one config for all sizes: {} (geomean speedup over default {:.2f}x)\n",
                                choice->config.str(), choice->geomean_speedup);
  for (const auto& p : choice->per_size)
    out += fmt::format("  size {}: {} us, {:.2f}x\n", format_bindings(p.size), us(p.time), p.speedup);
  return out;
}

std::string verification_line(const TrialRecord& t, const std::vector<TrialRecord>& all) {
  const Verification& v = t.verification;
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
    return fmt::format("verification: the best config's outputs are the reference; {} of {} other configs matched "
                       "them (max abs diff {:.3g})",
                       passed, checked, worst);
  }
  return fmt::format("verification: max abs diff {:.3g}, max rel err {:.3g} ({})", v.max_abs_diff, v.max_rel_err,
                     v.passed ? "within tolerance" : "FAILED");
}

}  // namespace

std::string detail::us(Microseconds t) { return fmt::format("{:.3f}", t.count()); }

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
  if (line.size() <= limit) return std::string(line);
  std::size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // continuation byte
  std::string out(line.substr(0, cut));
  while (!out.empty() && blank(out.back())) out.pop_back();
  return out + "...";
}

std::string format_trial_line(std::size_t number, const TrialRecord& trial) {
  if (trial.status == Status::ok)
    return fmt::format("No.{}: {} us, {}", number, us(trial.stats.median), trial.config.str());
  std::string line = fmt::format("No.{}: {}, {}", number, to_string(trial.status), trial.config.str());
  if (std::string reason = why_failed(trial); !reason.empty()) line += " (" + reason + ")";
  return line;
}

std::string format_csv(const std::vector<TrialRecord>& trials) {
  std::string out = "No.,Config,Time(us),Status,MaxAbsDiff,MaxRelErr,Min(us),Noise,Samples,Size,Error\n";
  std::size_t no = 0;
  for (const auto& t : trials) {
    const bool ok = t.status == Status::ok;
    const bool timed = t.stats.count > 0 || !t.samples.empty();
    const std::size_t samples = t.stats.count ? t.stats.count : t.samples.size();
    std::array<std::string, 11> row{
        std::to_string(++no),
        t.config.str(),
        ok ? csv_number(t.stats.median.count(), "{:.3f}") : "",
        std::string(to_string(t.status)),
        t.verification.checked ? csv_number(t.verification.max_abs_diff, "{:.6g}") : "",
        t.verification.checked ? csv_number(t.verification.max_rel_err, "{:.6g}") : "",
        timed ? csv_number(t.stats.min.count(), "{:.3f}") : "",
        timed ? csv_number(t.stats.noise, "{:.4f}") : "",
        std::to_string(samples),
        format_bindings(t.size),
        t.error,
    };
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
  j["wall_s"] = number(report.wall.count());
  j["build_s"] = number(report.build.count());
  j["measure_s"] = number(report.measure.count());
  j["build_wait_s"] = number(report.build_wait.count());
  j["device_busy_s"] = number(report.device_busy.count());
  j["resumed"] = report.resumed;
  j["seeded_by"] = report.seeded_by;
  ojson sizes = ojson::array();
  for (const auto& s : report.sizes) {
    ojson sj = ojson::object();
    sj["size"] = detail::bindings_to_json(s.size);
    sj["best"] = pick_json(s, s.best);
    sj["baseline"] = pick_json(s, s.baseline);
    sj["baseline_is_spec_default"] = s.baseline_is_spec_default;
    auto sp = speedup(pick(s, s.best), pick(s, s.baseline));
    sj["speedup_over_baseline"] = sp ? number(*sp) : ojson(nullptr);
    sj["seeds"] = s.count_of(kOriginSpecSeeds);
    sj["transfer"] = s.count_of(kOriginTransfer);
    // How the rule config fared (search.rules); null when rules were off or
    // the size has no valid config.
    const auto rule = s.first_of(kOriginRules);
    sj["rules"] = rule ? rule_outcome_json(rule_outcome(s.trials, *rule)) : ojson(nullptr);
    ojson trials = ojson::array();
    for (std::size_t i = 0; i < s.trials.size(); ++i) trials.push_back(trial_json(i + 1, s.trials[i]));
    sj["trials"] = std::move(trials);
    sizes.push_back(std::move(sj));
  }
  j["sizes"] = std::move(sizes);
  return j.dump(2) + "\n";
}

std::string format_summary(const TuneReport& report) {
  std::string out;
  std::vector<const TrialRecord*> everything;
  const bool several = report.sizes.size() > 1;
  for (std::size_t si = 0; si < report.sizes.size(); ++si) {
    const SizeReport& s = report.sizes[si];
    if (si) out += '\n';
    if (several || !s.size.empty()) out += fmt::format("size {}\n", format_bindings(s.size));
    std::vector<const TrialRecord*> these;
    for (std::size_t i = 0; i < s.trials.size(); ++i) {
      out += format_trial_line(i + 1, s.trials[i]) + '\n';
      these.push_back(&s.trials[i]);
      everything.push_back(&s.trials[i]);
    }

    std::optional<std::size_t> best_index = s.best;
    if (!pick(s, best_index)) {  // not chosen by the caller: take the fastest ok trial
      const TrialRecord* fastest = nullptr;
      for (const auto& t : s.trials)
        if (t.status == Status::ok && (!fastest || t.stats.median < fastest->stats.median)) fastest = &t;
      best_index = fastest ? std::optional<std::size_t>(static_cast<std::size_t>(fastest - s.trials.data()))
                           : std::nullopt;
    }
    const TrialRecord* best = pick(s, best_index);
    const TrialRecord* baseline = pick(s, s.baseline);
    if (const std::size_t seeds = s.count_of(kOriginSpecSeeds)) {  // evaluated right after the rule config, if any
      const std::size_t first = *s.first_of(kOriginSpecSeeds) + 1, last = first + seeds - 1;
      out += first == last ? fmt::format("seed (search.seeds): No.{}\n", first)
                           : fmt::format("seeds (search.seeds): No.{} to No.{}\n", first, last);
    }
    if (const std::size_t moved = s.count_of(kOriginTransfer)) {  // right after search.seeds
      const std::size_t first = *s.first_of(kOriginTransfer) + 1, last = first + moved - 1;
      out += first == last
                 ? fmt::format("transferred from the nearest tuned sizes (search.transfer): No.{}\n", first)
                 : fmt::format("transferred from the nearest tuned sizes (search.transfer): No.{} to No.{}\n", first, last);
    }

    if (best && best->status == Status::ok) {
      out += fmt::format("best: No.{} {} us {}\n", *best_index + 1, us(best->stats.median), best->config.str());
      const char* label = s.baseline_is_spec_default ? "default" : "first valid config";
      if (baseline) {
        if (baseline->status == Status::ok)
          out += fmt::format("{}: No.{} {} us {}\n", label, *s.baseline + 1, us(baseline->stats.median),
                             baseline->config.str());
        else
          out += fmt::format("{}: No.{} {} {}\n", label, *s.baseline + 1, to_string(baseline->status),
                             baseline->config.str());
      }
      if (auto sp = speedup(best, baseline)) out += fmt::format("speedup over {}: {:.2f}x\n", label, *sp);
      out += verification_line(*best, s.trials) + '\n';
    } else if (s.trials.empty()) {
      out += "no trials were run\n";
    } else {
      out += fmt::format("no valid config: none of the {} trial{} ran correctly\n", s.trials.size(),
                         s.trials.size() == 1 ? "" : "s");
    }
    out += status_counts(these) + (several ? "" : resumed_note(report.resumed)) + '\n';
  }
  if (several) {
    out += fmt::format("\nall sizes: {}{}\n", status_counts(everything), resumed_note(report.resumed));
    out += universal_lines(report);
  }
  if (std::find(report.seeded_by.begin(), report.seeded_by.end(), kOriginRules) != report.seeded_by.end()) {
    std::vector<RuleOutcome> outcomes;
    std::string missing;
    for (const auto& s : report.sizes) {
      if (auto rule = s.first_of(kOriginRules)) outcomes.push_back(rule_outcome(s.trials, *rule));
      else missing += fmt::format("rules: no rule config for size {} (no valid config)\n", format_bindings(s.size));
    }
    out += '\n';
    if (!outcomes.empty()) out += format_rule_report(outcomes);
    out += missing;
  }

  if (report.wall.count() > 0) {
    // Builds may overlap measuring; only the wait for them adds to the wall.
    const double other = std::max(0.0, report.wall.count() - report.build_wait.count() - report.measure.count());
    out += fmt::format("time: {:.1f} s: build {:.1f} s ({:.1f} s of it waited for), measure {:.1f} s, other {:.1f} s; "
                       "kernels ran {:.0f}% of the time\n",
                       report.wall.count(), report.build.count(), report.build_wait.count(), report.measure.count(),
                       other, 100.0 * report.device_busy.count() / report.wall.count());
  }
  std::vector<std::string> files;
  if (!report.db.empty()) files.push_back(report.db.string());
  for (const auto& [writer, file] : report.files) files.push_back(file.string());
  if (!files.empty()) out += fmt::format("results: {}\n", fmt::join(files, ", "));
  return out;
}

}  // namespace tunekit
