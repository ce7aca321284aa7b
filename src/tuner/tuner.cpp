#include "tunekit/tuner.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "builder/detail/compiler.hpp"
#include "builder/detail/headers.hpp"
#include "core/detail/cores.hpp"
#include "core/detail/hash.hpp"
#include "core/detail/plugin_call.hpp"
#include "core/detail/process.hpp"
#include "core/detail/text.hpp"
#include "store/detail/kernel_claim.hpp"
#include "store/detail/write_ahead_log.hpp"
#include "tuner/detail/failure_reuse.hpp"
#include "tunekit/annotation.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/evaluator.hpp"
#include "tunekit/objective.hpp"
#include "tunekit/report.hpp"
#include "tunekit/seeds.hpp"
#include "tunekit/select.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// " at size {n: 64}" within a message about one size; nothing for a spec
// without sizes, whose one size has no name.
std::string at_size(const Bindings& size) { return size.empty() ? "" : " at size " + size_key(size); }

// The same at a message's start: "at size {n: 64}, ...", or the message alone.
std::string at_size(const Bindings& size, std::string_view then) {
  return size.empty() ? "" : "at size " + size_key(size) + std::string(then);
}

// The digest of the kernel's own headers (builder/detail/headers.hpp), its
// source's text as read: part of the spec's identity, and what a run checks
// each variant's build against.
std::string kernel_headers_digest(const Spec& spec, const std::string& source) {
  return detail::headers_digest_for(spec.kernel.source, source,
                                    detail::include_flags_from(spec.kernel.flags, spec.file.parent_path()));
}

std::string read_file(const fs::path& p, const SourceLocation& where) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw InputError(where, "cannot read '" + p.string() + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Messages can be long; the store keeps the head.
std::string clip(std::string text, std::size_t limit = 8000) {
  if (text.size() > limit) text = text.substr(0, detail::utf8_floor(text, limit)) + "\n[... truncated]";
  return text;
}

// A compiler's log can be megabytes of warnings before the error that
// failed the build (or a wrapper's noise before the compiler's): the store
// keeps the log's head, its first line that names an error with what
// follows, and its tail, about `limit` characters in all.
std::string clip_log(const std::string& text, std::size_t limit = 8000) {
  if (text.size() <= limit) return text;
  const std::size_t part = limit / 4;
  // Every cut falls between whole UTF-8 characters (gcc quotes names in ‘ ’).
  const auto at = [&](std::size_t i) { return detail::utf8_floor(text, i); };
  std::size_t kept = at(2 * part);
  std::string out = text.substr(0, kept);
  auto skip_to = [&](std::size_t to) {
    to = at(to);
    if (to > kept) out += fmt::format("\n[... {} bytes ...]\n", to - kept);
    kept = std::max(kept, to);
  };
  if (const std::size_t e = text.find("error", kept); e != std::string::npos && e + part < text.size()) {
    const std::size_t line = text.rfind('\n', e);
    skip_to(line == std::string::npos ? e : line + 1);
    const std::size_t end = at(kept + part);
    out += text.substr(kept, end - kept);
    kept = end;
  }
  skip_to(std::max(kept, text.size() - part));
  out += text.substr(kept);
  return out;
}

fs::path or_default(const fs::path& given, const fs::path& fallback) { return given.empty() ? fallback : given; }

// The spec's reference function as messages name it: a torch reference has
// an expression and no entry.
std::string reference_function_name(const ReferenceSpec& r) {
  return r.torch_expression.empty() ? fmt::format("the reference function '{}'", r.entry)
                                    : fmt::format("the reference torch expression '{}'", r.torch_expression);
}

// Everything one size's search needs, decided before the first build so the
// progress bar knows the total.
struct SizePlan {
  Bindings size;
  std::unique_ptr<Space> space;
  std::unique_ptr<Strategy> strategy;  // the seeds first, then the search
  std::optional<Config> baseline;
  bool baseline_is_spec_default = false;
  // CCCL's base variant, {TUNE_BASE: 1}, for a %RANGE% source with a
  // TUNE_BASE branch (Run::measures_base_).
  std::optional<Config> base;
  // The seed providers' configs valid here, in the order they are tried,
  // each with its provider (for the origin it records).
  std::vector<std::pair<Config, const SeedProvider*>> seeds;
  std::size_t planned = 0;
  std::optional<std::size_t> budget;  // evaluations (search.max_evals, or search.max_fraction of this space)
  Bindings constants;                 // the size and the machine's properties

  // Why `c` runs in this size's search.
  std::string origin_of(const Config& c) const {
    if (base && *base == c) return std::string(kOriginBase);
    for (const auto& [seed, provider] : seeds)
      if (seed == c) return std::string(provider->origin());
    if (baseline && *baseline == c) return std::string(kOriginBaseline);
    return std::string(kOriginSearch);
  }

  // The baselines of the speedups are measured in full, never cut short by
  // the early stop: every speedup is a ratio to their time.
  bool measured_in_full(const Config& c) const { return (baseline && *baseline == c) || (base && *base == c); }
};

// What a strategy learns from a trial: its status and, when it ran
// correctly, its cost by the spec's objective (search_cost: positive, lower
// is better); of a trial cut short, the cost at the median of its few
// samples: a real time, and a bad one. `value` is the objective's value the
// cost came from, when there is one.
struct Observed {
  Outcome outcome;
  std::optional<double> value;
};

Observed observed(const Spec& spec, const TrialRecord& t) {
  Observed o;
  o.outcome.status = t.status;
  if (t.status == Status::ok) {
    o.value = objective_value(spec.objective, spec.metrics, t);
  } else if (t.status == Status::slower) {
    TrialRecord as_timed = t;
    as_timed.status = Status::ok;
    o.value = objective_value(spec.objective, spec.metrics, as_timed);
  }
  if (o.value) o.outcome.cost = search_cost(spec.objective, *o.value);
  return o;
}

}  // namespace

std::optional<std::string> noise_warning(const TuneReport& r) {
  if (!(r.target_noise > 0)) return std::nullopt;
  std::vector<double> noise;
  std::size_t missed = 0, bimodal = 0;
  for (const auto& s : r.sizes)
    for (const auto& t : s.trials) {
      if (t.status != Status::ok || t.stats.count < 2) continue;
      noise.push_back(t.stats.noise);
      missed += t.stats.noise > r.target_noise;
      bimodal += t.stats.bimodal;
    }
  if (noise.empty() || 2 * missed <= noise.size()) return std::nullopt;
  std::nth_element(noise.begin(), noise.begin() + noise.size() / 2, noise.end());
  std::string out = fmt::format(
      "{} of {} configs missed the noise target ({:.1f}%; median noise {:.1f}%): configs closer than that may be "
      "ranked by chance. Something else is using the cores, or the kernel's time varies from call to call",
      missed, noise.size(), 100 * r.target_noise, 100 * noise[noise.size() / 2]);
  if (bimodal) out += fmt::format(" ({} showed two groups of times)", bimodal);
  return out + "; see docs/measurement.md";
}

namespace {

// What load_spec() and the command line refuse, for a caller that builds
// or edits a Spec in C++ (docs/api.md): each of these would otherwise fail
// every config alike, or name a reason that is not the cause.
void check_tune_inputs(const Spec& spec, const TuneOptions& options) {
  auto refuse = [](const std::string& why) { throw std::invalid_argument("tune(): " + why); };
  if (options.out_dir.empty()) refuse("TuneOptions::out_dir is empty; name a folder for the store and the builds");
  const KernelTraits& traits = backend_for_language(spec.kernel.language).kernel;
  if (traits.entry && spec.kernel.entry.empty() && options.replay.empty())
    refuse("Spec::kernel.entry is empty; name the function to call");
  if (spec.sizes.empty()) refuse("Spec::sizes is empty; a spec without sizes has one empty size, Bindings{}");
  const MeasureSettings& m = spec.measure;
  if (m.min_samples < 1) refuse("Spec::measure.min_samples is 0; expected 1 or more");
  if (m.min_samples > m.max_samples)
    refuse(
        fmt::format("Spec::measure.min_samples ({}) exceeds measure.max_samples ({})", m.min_samples, m.max_samples));
  if (!(m.timeout.count() > 0)) refuse("Spec::measure.timeout is not above 0");
  if (!(m.max_time.count() > 0)) refuse("Spec::measure.max_time is not above 0");
  if (!(m.target_noise >= 0 && m.target_noise < 1))
    refuse(fmt::format("Spec::measure.target_noise is {}; expected a share in [0, 1)", m.target_noise));
  for (const auto& [name, value] : {std::pair{"atol", spec.tolerance.atol}, std::pair{"rtol", spec.tolerance.rtol}})
    if (value && (!(*value >= 0) || !std::isfinite(*value)))
      refuse(fmt::format("Spec::tolerance.{} is {}; expected a number >= 0", name, *value));
  if (spec.search.max_evaluations && *spec.search.max_evaluations == 0)
    refuse("Spec::search.max_evaluations is 0; expected 1 or more (none: no limit)");
  if (spec.search.max_fraction && !(*spec.search.max_fraction > 0 && *spec.search.max_fraction <= 1))
    refuse(fmt::format("Spec::search.max_fraction is {}; expected a share in (0, 1]", *spec.search.max_fraction));
  if (spec.search.max_time && !(spec.search.max_time->count() > 0)) refuse("Spec::search.max_time is not above 0");
}

// The backend that serves the spec's kernel language, or the replay backend
// for recorded results.
std::unique_ptr<Backend> make_tuning_backend(const Spec& spec, const TuneOptions& options) {
  check_tune_inputs(spec, options);
  BackendOptions backend_options;
  // Absolute: a kernel that changes the worker's directory must not move
  // where the tuner's files are.
  backend_options.work_dir = fs::absolute(options.out_dir) / "cache";
  if (!options.build_dir.empty()) backend_options.build_dir = fs::absolute(options.build_dir);
  backend_options.rebuild = options.fresh || options.rebuild;
  backend_options.device = options.device;
  backend_options.application = spec.application;
  backend_options.spec = &spec;
  backend_options.jobs = options.jobs;
  if (options.replay.empty()) return make_backend(spec.kernel.language, backend_options);
  backend_options.recording = options.replay;
  backend_options.recording_kernel = spec.name.empty() ? spec.kernel.entry : spec.name;
  for (const auto& p : spec.parameters) backend_options.parameters.push_back(p.name);
  return backends().get("replay").make(backend_options);
}

MachineInfo with_properties(MachineInfo machine, const TuneOptions& options) {
  for (const auto& [k, v] : options.properties) machine.properties[k] = v;
  return machine;
}

// A backend's builder and evaluator as the tuner calls them: what they
// throw names the backend and the call (and the config, for a build), as a
// strategy's failures do. A reference that cannot be computed is the
// evaluator's report, not its failure, and passes as it is.
class NamedBuilder final : public Builder {
 public:
  NamedBuilder(std::unique_ptr<Builder> inner, std::string backend)
      : inner_(std::move(inner)), backend_(std::move(backend)) {}
  BuildResult build(const BuildInput& input) override {
    return detail::call_plugin(
        "backend", backend_, "build", [&] { return inner_->build(input); }, input.config.str());
  }

 private:
  std::unique_ptr<Builder> inner_;
  std::string backend_;
};

class NamedEvaluator final : public Evaluator {
 public:
  NamedEvaluator(std::unique_ptr<Evaluator> inner, std::string backend)
      : inner_(std::move(inner)), backend_(std::move(backend)) {}
  TrialResult evaluate(const TrialRequest& request) override {
    try {
      return inner_->evaluate(request);
    } catch (const ReferenceError&) {
      throw;
    } catch (...) {
      detail::rethrow_named("backend", backend_, "evaluate");
    }
  }

 private:
  std::unique_ptr<Evaluator> inner_;
  std::string backend_;
};

}  // namespace

struct TuningRig::Parts {
  std::unique_ptr<Backend> backend;
  TuningTarget target;
  std::string spec_hash;  // of the spec it was made for: a tune() of another kernel is refused

  // Made when the first tune() asks, as tune() made them before it had a rig.
  Builder& builder() {
    if (!builder_) builder_ = std::make_unique<NamedBuilder>(made("make_builder", backend->make_builder()), name());
    return *builder_;
  }
  Evaluator& evaluator() {
    if (!evaluator_)
      evaluator_ = std::make_unique<NamedEvaluator>(made("make_evaluator", backend->make_evaluator()), name());
    return *evaluator_;
  }
  std::string name() const { return std::string(backend->name()); }
  // A plugin's make_builder or make_evaluator that gives nothing is its
  // failure, named, not a null dereference.
  template <typename T>
  std::unique_ptr<T> made(const char* call, std::unique_ptr<T> part) const {
    if (!part) throw std::runtime_error(fmt::format("the backend '{}' failed in {}(): it returned none", name(), call));
    return part;
  }

 private:
  std::unique_ptr<Builder> builder_;
  std::unique_ptr<Evaluator> evaluator_;
};

TuningRig::TuningRig(const Spec& spec, const TuneOptions& options) : parts_(std::make_unique<Parts>()) {
  parts_->backend = make_tuning_backend(spec, options);
  // Builds that would disturb the timings mean timings on the host cores,
  // unless the backend only simulates them (replay).
  parts_->target = {with_properties(parts_->backend->machine(), options),
                    !parts_->backend->measures_while_building() && !parts_->backend->clock()};
  parts_->spec_hash = spec_hash(spec, options.device);
}

TuningRig::~TuningRig() = default;

const TuningTarget& TuningRig::target() const { return parts_->target; }

namespace {

// Whether `device`, the backend's name for the device a tune runs on
// ("cuda: NVIDIA A100-SXM4-80GB (sm_80, ...)"), is the one a file names
// ("A100", "NVIDIA A100-SXM4-80GB"): the name's words (runs of letters and
// digits, case aside) follow one another among the device's. Whole words, so
// that a file written for an A10 does not take an A100 for its device.
bool names_the_device(std::string_view name, std::string_view device) {
  const auto words = [](std::string_view text) {
    std::vector<std::string> out(1);
    for (const unsigned char c : text)
      if (std::isalnum(c)) out.back() += static_cast<char>(std::tolower(c));
      else if (!out.back().empty()) out.emplace_back();
    if (out.back().empty()) out.pop_back();
    return out;
  };
  const std::vector<std::string> wanted = words(name), there = words(device);
  return wanted.empty() || std::search(there.begin(), there.end(), wanted.begin(), wanted.end()) != there.end();
}

class Run {
 public:
  Run(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress)
      : spec_(spec),
        options_(options),
        progress_(progress),
        start_(Clock::now()),
        settings_(settings_key(spec)),
        early_stop_(early_stop_conflict(spec.objective) ? 0 : spec.measure.early_stop) {}

  TuneReport execute() {
    TuningRig& rig = options_.rig ? *options_.rig : own_rig_.emplace(spec_, options_);
    backend_ = rig.parts().backend.get();
    clock_start_ = backend_->clock();
    const MachineInfo machine = rig.target().machine;
    if (options_.check_machine) options_.check_machine(machine);
    report_ = untuned_report(spec_, options_);
    if (report_.spec_hash != rig.parts().spec_hash)
      throw std::invalid_argument("tune(): TuneOptions::rig was made for another kernel (its spec_hash differs)");
    hash_without_toolchain_ = spec_hash_without_toolchain(spec_);
    toolchain_ = detail::kernel_compiler_identity(spec_, options_.device);
    for (const auto& w : spec_.warnings) warn(w);
    for (const auto& w : backend_->warnings()) warn(w);
    report_.device = machine.device;
    if (!spec_.intended_device.empty() && !names_the_device(spec_.intended_device, machine.device))
      warn(
          fmt::format("{}: the file was written for the device '{}', and this tune runs on another ({}): its "
                      "results are that device's",
                      spec_.intended_device_where.str(), spec_.intended_device, machine.device));
    machine_json_ = machine_to_json(machine);
    std::error_code same_error;
    const bool checked =
        !options_.store_checked.empty() && std::filesystem::equivalent(options_.store_checked, report_.db, same_error);
    store_ = std::make_unique<Store>(report_.db, Store::Access::read_write,
                                     checked ? Store::WholeFileCheck::done_before : Store::WholeFileCheck::run);
    if (auto w = claim_.emplace(report_.db, report_.spec_hash, spec_.sizes).announce()) warn(*w);
    warn_of_other_versions();
    warn_of_other_bindings();
    source_ = read_file(spec_.kernel.source, {spec_.file.string()});
    headers_ = kernel_headers_digest(spec_, source_);
    const bool range_defines =
        resolve_injection(spec_.kernel.injection, source_, spec_.kernel.source.string()) == Injection::range_defines;
    // CCCL's scripts also build a %RANGE% source with TUNE_BASE=1 and none
    // of its defines, CUB's own policy, and score every variant against it.
    // Here that base is a trial like any other, under the config
    // {TUNE_BASE: 1}: the store keys trials by config and no config of the
    // space has that key, so it is measured, verified, stored and resumed by
    // the same code as the others, and its origin says what it is. (A
    // parameter named TUNE_BASE would share its key: no base then. A replay
    // has no recording of it.)
    measures_base_ = range_defines && options_.replay.empty() && has_tune_base_branch(source_) &&
                     std::none_of(spec_.parameters.begin(), spec_.parameters.end(),
                                  [](const Parameter& p) { return p.name == kTuneBase; });
    if (range_defines)
      for (const std::string& name : unnamed_range_parameters(source_, spec_.kernel.source.string()))
        if (spec_.parameters.end() != std::find_if(spec_.parameters.begin(), spec_.parameters.end(),
                                                   [&](const Parameter& p) { return p.name == name; }))
          warn(
              fmt::format("{} names the %RANGE% parameter {} nowhere but on its %RANGE% line: every value of it "
                          "builds the same code",
                          spec_.kernel.source.string(), name));
    warn_of_parameters_nothing_reads();
    warn_of_tunable_lines_no_parameter_names();
    builder_ = &rig.parts().builder();
    evaluator_ = &rig.parts().evaluator();

    providers_ = providers_for(spec_);
    for (const auto& p : providers_) report_.seeded_by.emplace_back(p->origin());
    if (!options_.fresh) remember_stored_sizes();
    std::vector<SizePlan> plans;
    for (const auto& size : spec_.sizes) plans.push_back(plan(size, machine));
    if (options_.fresh) mark_stale(plans);
    check_entry(plans);
    {
      std::vector<SizeToServe> servable;  // a size with no valid config runs nothing
      for (const auto& p : plans)
        if (p.space->any_valid()) servable.push_back({p.size, [&](const auto& visit) { configs_of(p, visit); }});
      backend_->check_sizes(servable);
    }
    // A spec's reference with nothing to compare is refused where it is
    // written; the reference a spec (or a T1 file) leaves implicit, the
    // default config's outputs, can have none too, and then no trial may
    // say it was verified.
    compares_outputs_ = has_compared_output(spec_);
    if (spec_.reference.kind != ReferenceSpec::Kind::none && !compares_outputs_)
      warn(
          "nothing was verified: no argument has role out or inout, so the reference (the default config's "
          "outputs) has nothing to compare; give the buffer the kernel writes 'role: out' (in a T1 file, "
          "'AccessType: WriteOnly' or 'ReadWrite')");
    if (spec_.reference.kind == ReferenceSpec::Kind::function && compares_outputs_) build_reference_function(plans);
    for (const auto& p : plans) total_ += p.planned;

    for (auto& p : plans) {
      if (stop_requested()) break;
      report_.sizes.push_back(tune_size(p, machine));
    }
    report_.interrupted = stop_requested();
    if (auto w = noise_warning(report_)) report_.warnings.push_back(*w);
    if (auto w = detail::fold_write_ahead_log(report_.db)) warn(*w);
    report_.wall = Clock::now() - start_;
    return report_;
  }

 private:
  SizePlan plan(const Bindings& size, const MachineInfo& machine) {
    check_parameter_names(spec_, machine.properties);
    SizePlan p;
    p.size = size;
    Bindings constants = machine.properties;
    for (const auto& [k, v] : size) constants[k] = v;  // a size named like a property wins
    check_expression_names(spec_, constants);
    check_size_arguments(size, constants);
    p.space = std::make_unique<Space>(spec_.parameters, spec_.constraints, constants);
    for (const auto& e : p.space->constraint_errors()) warn(e);
    p.budget = spec_.search.max_evaluations;
    // A live tune of a space smaller than the budget simply runs it all; a
    // replay refuses such a budget, as `tunekit replay` does, since a
    // replayed search is a benchmark of the strategy at that budget (a size
    // with no valid config runs nothing either way).
    if (!options_.replay.empty() && p.budget && p.space->indexable() && p.space->size() > 0 &&
        *p.budget > p.space->size() && !spec_.search.budget_is_strategys_stop)
      throw InputError(spec_.search.max_evaluations_where.file.empty() ? SourceLocation{spec_.file.string()}
                                                                       : spec_.search.max_evaluations_where,
                       fmt::format("a budget of {} evaluations: expected 1 to {} (the valid configs of the replayed "
                                   "space{})",
                                   *p.budget, p.space->size(), at_size(size)));
    if (spec_.search.max_fraction) {
      // A share needs the count of the valid configs, which a space too
      // large to index has only by a search of the whole space.
      if (!p.space->indexable())
        throw InputError(
            {spec_.file.string()},
            fmt::format("a budget as a share of the space (search.max_fraction, --max-fraction) needs its count of "
                        "valid configs, and the space{} is too large to index (docs/space-index.md): give a "
                        "budget of evaluations (search.max_evals, --max-evals) or of time (--max-time)",
                        at_size(size)));
      // Each size's own share: constraints over the sizes prune each space
      // differently.
      const auto share = static_cast<std::size_t>(
          std::min<std::uint64_t>(evaluations_for_fraction(*spec_.search.max_fraction, p.space->size()), SIZE_MAX));
      p.budget = std::min(share, p.budget.value_or(share));
    }
    if (spec_.configs.empty()) {
      std::optional<std::uint64_t> budget;
      if (p.budget) budget = *p.budget;
      p.strategy = make_strategy(spec_.search.strategy, *p.space, spec_.search.seed, budget, spec_.search.options,
                                 spec_.search.strategy_where, spec_.search.max_time.has_value());
    } else {
      p.strategy = make_list(spec_.configs);
    }
    p.constants = constants;
    // Seeds that depend on the sizes tuned before (transfer) are asked for
    // when the size's turn comes (seed()); the others now.
    const SeedContext context{*p.space, constants, size, {}};
    for (const auto& provider : providers_) {
      if (provider->learns()) continue;
      for (auto& c : provider->seeds(context))
        if (std::none_of(p.seeds.begin(), p.seeds.end(), [&](const auto& s) { return s.first == c; }))
          p.seeds.emplace_back(std::move(c), provider.get());
    }
    std::size_t extra = 0;  // seeds the strategy would not propose
    for (const auto& seed : p.seeds) extra += proposed_anyway(seed.first) ? 0 : 1;
    if (spec_.default_config && p.space->contains(*spec_.default_config)) {
      p.baseline = spec_.default_config;
      p.baseline_is_spec_default = true;
    } else {
      if (!spec_.configs.empty()) {
        for (const auto& c : spec_.configs)
          if (p.space->contains(c)) {
            p.baseline = c;
            break;
          }
      } else if (auto first = p.space->enumerate(1); !first.empty()) {
        p.baseline = first.front();
      }
      // The baseline falls back to the first valid config: say why, since
      // every speedup is then over another config than the spec's. (A size
      // with none runs nothing, and says so itself.)
      if (spec_.default_config && p.baseline) {
        auto why = default_config_problem(spec_, size, machine.properties);
        if (!why)  // valid on its own, but a list or --where leaves it out
          why = fmt::format("the default {} is not in the space{} ({})", spec_.default_config->str(), at_size(size),
                            p.space->why_invalid(*spec_.default_config).value_or("not listed"));
        warn(*why + "; speedups are over the first valid config instead");
      }
    }
    // A strategy that cannot say without counting a space too large to index
    // plans the budget.
    p.planned = static_cast<std::size_t>(
                    std::min<std::uint64_t>(p.strategy->planned().value_or(p.budget.value_or(0)), SIZE_MAX - extra)) +
                extra;
    if (p.baseline && spec_.default_config && p.baseline_is_spec_default && !spec_.configs.empty()) {
      // the seeded strategy counts it already
      bool listed = std::any_of(p.seeds.begin(), p.seeds.end(), [&](const auto& s) { return s.first == *p.baseline; });
      for (const auto& c : spec_.configs) listed = listed || c == *p.baseline;
      if (!listed) ++p.planned;
    }
    if (p.budget) p.planned = std::min(p.planned, *p.budget);
    if (measures_base_) {
      p.base = base_variant_config(spec_);
      ++p.planned;  // outside the budget: no strategy proposes it, and it is no config of the space
    }
    return p;
  }

  // Every config a size's tune may run: its baseline, then the spec's list
  // (those valid here) or else the whole space, which holds every seed.
  void configs_of(const SizePlan& p, const std::function<bool(const Config&)>& visit) const {
    if (p.baseline && !visit(*p.baseline)) return;
    if (spec_.configs.empty()) {
      p.space->for_each([&](std::span<const std::uint32_t> ix) { return visit(p.space->config_at(ix)); });
      return;
    }
    for (const auto& c : spec_.configs)
      if (p.space->contains(c) && !visit(c)) return;
  }

  // An argument made from the size alone (no parameter in its expressions)
  // that cannot be made at this size (a negative element count, a scalar
  // its type cannot hold) is the size's error, before anything is built:
  // else every config would be stored as its own launch_error.
  void check_size_arguments(const Bindings& size, const Bindings& constants) const {
    std::set<std::string> parameters;
    for (const auto& param : spec_.parameters) parameters.insert(param.name);
    auto of_size_alone = [&](const ArgumentSpec& a) {
      std::vector<const Expression*> made_from;
      if (a.size) made_from.push_back(&*a.size);
      if (a.value) made_from.push_back(&*a.value);
      for (const auto& e : a.shape) made_from.push_back(&e);
      for (const Expression* e : made_from)
        for (const auto& name : e->variables())
          if (parameters.count(name)) return false;
      return true;
    };
    for (const auto& a : spec_.arguments) {
      if (a.role == Role::tensor_map || !of_size_alone(a)) continue;  // a tensor map reads another argument
      try {
        (void)resolve_arguments({a}, constants);
      } catch (const InputError& e) {
        throw InputError(e.where(), fmt::format("{}{}", at_size(size, ": "), e.message()));
      }
    }
  }

  // Built with the first size's baseline injected (a valid config; the
  // spec's default when it is one). A failure is the input's: the reference's
  // source, or the compiler or flags the user gave, which the message names.
  void build_reference_function(const std::vector<SizePlan>& plans) {
    // At that size: kernel.defines may read it.
    const SizePlan* plan = plans.empty() ? nullptr : &plans.front();
    for (const auto& p : plans)
      if (p.baseline) {
        plan = &p;
        break;
      }
    const Config* values = plan && plan->baseline ? &*plan->baseline : nullptr;
    const Bindings no_size;
    const Bindings& size = plan ? plan->size : no_size;
    const BuildInput first = make_reference_input(spec_, values, size);
    BuildResult r = build_now(first);
    std::string built_hash = first.hash();
    std::optional<Config> built_with = values ? std::optional<Config>(*values) : std::nullopt;
    // The baseline may be a config that does not compile (with no default,
    // it is the first valid one): that is its trial's failure, not the
    // reference's. The reference is tried without the parameters, then with
    // a few other valid configs' values, before it is blamed; an input built
    // already (a separate reference source takes no values) is not built again.
    if (r.status != Status::ok && values && r.fault == Fault::config) {
      std::vector<std::optional<Config>> others{std::nullopt};
      for (const auto& p : plans) {
        if (!p.baseline) continue;
        for (auto& c : p.space->enumerate(4))
          if (c != *values && others.size() < 4) others.emplace_back(std::move(c));
        break;
      }
      std::set<std::string> built{first.hash()};
      for (const auto& other : others) {
        const BuildInput input = make_reference_input(spec_, other ? &*other : nullptr, size);
        if (!built.insert(input.hash()).second) continue;
        BuildResult retry = build_now(input);
        if (retry.status == Status::ok) {
          r = std::move(retry);
          built_with = other;
          built_hash = input.hash();
          break;
        }
      }
    }
    if (r.status == Status::ok) {
      reference_function_ = r.artifact;
      reference_takes_values_ = built_with.has_value();
      reference_hash_ = std::move(built_hash);
      return;
    }
    const std::string which = reference_function_name(spec_.reference);
    blame_given_compiler(r, which);
    // A full disk or a missing tool is the machine's failure, not the spec's.
    if (r.fault == Fault::environment)
      throw std::runtime_error(fmt::format("{} cannot be built here{}:\n{}", which, given_build_settings(), r.log));
    blame_refused_flag(r, which);
    const SourceLocation at =
        spec_.reference.where.file.empty() ? SourceLocation{spec_.file.string()} : spec_.reference.where;
    if (const std::string name = function_name(spec_.reference.entry);
        !name.empty() && spec_.reference.torch_expression.empty()) {
      const fs::path file = spec_.reference.source.empty() ? spec_.kernel.source : spec_.reference.source;
      const std::string text = spec_.reference.source.empty() ? source_ : read_file(file, at);
      if (!detail::has_word(text, name))
        throw InputError(at, fmt::format("reference '{}' does not appear in {}{}, and {} does not build{}:\n{}",
                                         spec_.reference.entry, file.filename().string(), did_you_mean(text, name),
                                         which, given_build_settings(), clip_log(r.log, 2000)));
    }
    throw InputError(at, fmt::format("{} does not build{}:\n{}", which, given_build_settings(), r.log));
  }

  // An error in the call tunekit writes of a plain entry (the CPU backend's
  // "<tunekit: the call of f>") is the spec's arguments disagreeing with the
  // entry's parameters: every config fails the same way, so it is the
  // input's error, located at the entry, whether or not a reference function
  // was built first to say so.
  void blame_the_call(const BuildResult& r) const {
    const std::string& entry = spec_.kernel.entry;
    if (r.status != Status::compile_error || entry.find('{') != std::string::npos) return;
    std::istringstream log(r.log);
    for (std::string line; std::getline(log, line);)
      if (line.find("<tunekit: the call of ") != std::string::npos && line.find("error") != std::string::npos)
        throw InputError(
            spec_.kernel.entry_where.file.empty() ? SourceLocation{spec_.file.string()} : spec_.kernel.entry_where,
            fmt::format("the call of '{}' with the spec's arguments does not compile: the arguments do not match its "
                        "parameters{}:\n{}",
                        entry, given_build_settings(), clip_log(r.log, 2000)));
  }

  // A compiler the user named that cannot run here (not installed, say) is
  // their input's error, located where they named it, not a failure of the
  // first build (`what`) or of every config after it.
  void blame_given_compiler(const BuildResult& r, const std::string& what) const {
    const KernelSpec& k = spec_.kernel;
    if (r.fault == Fault::environment && !k.compiler_where.file.empty())
      throw InputError(k.compiler_where,
                       fmt::format("the compiler '{}' cannot build here ({} was the first build):\n{}", k.compiler,
                                   what, clip_log(r.log, 2000)));
  }

  // A flag the compiler refuses ("unrecognized command-line option",
  // OpenCL's "Invalid build option") fails every build: the user's input's
  // error, located at the flags, not at the first build that met it.
  void blame_refused_flag(const BuildResult& r, const std::string& what) const {
    const KernelSpec& k = spec_.kernel;
    if (k.flags_where.file.empty()) return;
    std::istringstream log(r.log);
    for (std::string line; std::getline(log, line);) {
      if (line.find("option") == std::string::npos) continue;
      for (const auto& flag : k.flags) {
        const auto word = flag.find_first_not_of('-');
        if (word == std::string::npos) continue;  // "-" or "--": nothing to find
        if (detail::has_word(line, std::string_view(flag).substr(word)) && line.find(flag) != std::string::npos)
          throw InputError(k.flags_where, fmt::format("the flag '{}' is refused by the compiler ({} was the first "
                                                      "build):\n{}",
                                                      flag, what, line));
      }
    }
  }

  // " (with the flags '-O2 -x' of --flags)": the compiler and flags given
  // on the command line, for a failed build's message (the spec's are in
  // the file the message names); empty when there are none.
  std::string given_build_settings() const {
    const KernelSpec& k = spec_.kernel;
    const auto flag = [](const SourceLocation& where) { return !where.file.empty() && where.line == 0; };
    std::vector<std::string> given;
    if (flag(k.compiler_where))
      given.push_back(fmt::format("the compiler '{}' of {}", k.compiler, k.compiler_where.str()));
    if (flag(k.flags_where))
      given.push_back(fmt::format("the flags '{}' of {}", fmt::join(k.flags, " "), k.flags_where.str()));
    return given.empty() ? "" : fmt::format(" (with {})", fmt::join(given, " and "));
  }

  // A search over the space proposes every valid config, a seed among them;
  // a list, only what it lists.
  bool proposed_anyway(const Config& seed) const {
    return spec_.configs.empty() || std::find(spec_.configs.begin(), spec_.configs.end(), seed) != spec_.configs.end();
  }

  // The seeds of providers that learn from the sizes tuned before, then every
  // seed wrapped around the strategy, in provider order.
  void seed(SizePlan& p) {
    if (spec_.configs.empty()) {
      std::vector<std::pair<Config, const SeedProvider*>> all;
      std::vector<Config> taken;
      for (const auto& s : p.seeds) taken.push_back(s.first);
      const std::vector<TunedSize> before = tuned_before(p.size);
      const SeedContext context{*p.space, p.constants, p.size, before, taken};
      for (const auto& provider : providers_) {
        if (!provider->learns()) {
          for (const auto& s : p.seeds)
            if (s.second == provider.get()) all.push_back(s);
          continue;
        }
        for (auto& c : provider->seeds(context))
          if (std::none_of(all.begin(), all.end(), [&](const auto& s) { return s.first == c; }) &&
              std::none_of(p.seeds.begin(), p.seeds.end(), [&](const auto& s) { return s.first == c; }))
            all.emplace_back(std::move(c), provider.get());
      }
      p.seeds = std::move(all);
    }
    // Each wrapper proposes its seed ahead of the strategy it wraps, so the
    // last wrapped goes first: wrap in reverse.
    for (auto s = p.seeds.rbegin(); s != p.seeds.rend(); ++s)
      p.strategy = make_seeded(std::move(p.strategy), s->first, proposed_anyway(s->first));
  }

  // The sizes a size learns from: those tuned before it in this run, and
  // stored ones, but not a stored size this run tunes after it. The run that
  // first tuned the size had not seen that one (it tunes them in this
  // order), so a rerun proposes what that run did, resumes it, and measures
  // nothing anew.
  std::vector<TunedSize> tuned_before(const Bindings& size) const {
    const auto position = [&](const Bindings& s) {
      const std::string key = size_key(s);
      const auto at = std::find_if(spec_.sizes.begin(), spec_.sizes.end(),
                                   [&](const Bindings& planned) { return size_key(planned) == key; });
      return static_cast<std::size_t>(at - spec_.sizes.begin());  // spec_.sizes.size(): not this run's
    };
    const std::size_t here = position(size);
    std::vector<TunedSize> out;
    for (const TunedSize& t : tuned_)
      if (const std::size_t at = position(t.size); at < here || at == spec_.sizes.size()) out.push_back(t);
    return out;
  }

  // A --fresh run's stored trials of the configs it would measure, at every
  // size at once before any is measured, are stale until it measures them
  // anew (Store::mark_stale): a run stopped at its first size leaves the
  // later sizes' old trials stale too, and trials outside its space (a
  // --where) are left as they are.
  void mark_stale(const std::vector<SizePlan>& plans) {
    for (const SizePlan& p : plans) {
      std::vector<Config> in_space;
      for (const TrialRecord& t : store_->trials(report_.spec_hash, report_.device, p.size))
        if ((p.space->contains(t.config) &&
             (spec_.configs.empty() ||
              std::find(spec_.configs.begin(), spec_.configs.end(), t.config) != spec_.configs.end())) ||
            (p.base && t.config == *p.base))
          in_space.push_back(t.config);
      store_->mark_stale(report_.spec_hash, report_.device, p.size, in_space);
    }
  }

  // The fastest configs of each size this spec was tuned at on this device,
  // from the store: what transfer seeds the first sizes of a rerun with.
  void remember_stored_sizes() {
    std::map<std::string, std::vector<const TrialRecord*>> by_size;
    const std::vector<TrialRecord> stored = store_->trials(report_.spec_hash);
    for (const auto& t : stored)
      if (t.device == report_.device && t.status == Status::ok && !is_base_trial(t))
        by_size[size_key(t.size)].push_back(&t);
    for (auto& [key, trials] : by_size) remember(trials.front()->size, trials);
  }

  // What `select` and `emit` name at a size: the best of every trial the
  // store holds there, by the rule the run names its own best with.
  std::optional<SizeBest> stored_choice(const Bindings& size) const {
    auto best =
        best_per_size(store_->trials(report_.spec_hash, report_.device, size), Goal{spec_.objective, spec_.metrics});
    if (best.empty()) return std::nullopt;
    return std::move(best.front());
  }

  // `select` and `emit` read the whole store, which may hold trials this run
  // did not measure (an earlier, larger run; one before --fresh). Say when
  // they will name another config than this run's best, and when this run
  // made them name a config measured slower than the one they named before
  // (a --where run's confirmation outranks a best measured once, outside its
  // space). A config this run's space leaves out is not named: a narrower
  // run looks at part of the space, and the full run's answer stands.
  void note_stored_choice(const SizePlan& p, const SizeReport& sr, const std::optional<SizeBest>& before) {
    if (!sr.best) return;
    const auto after = stored_choice(p.size);
    if (!after) return;
    const TrialRecord& ours = sr.trials[*sr.best];
    const auto measured_here = [&](const Config& c) {
      return std::any_of(sr.trials.begin(), sr.trials.end(), [&](const TrialRecord& t) { return t.config == c; });
    };
    if (after->config != ours.config && p.space->contains(after->config) && !measured_here(after->config)) {
      // Named though slower: only a confirmation outranks a faster time.
      const bool slower =
          objective_better(spec_.objective, *objective_value(spec_.objective, spec_.metrics, ours), after->value);
      warn(!slower ? fmt::format("{}an earlier run stored a faster config than this run found: {} at {} "
                                 "us (this run's best: {} us, {}); `tunekit select` and `tunekit emit` choose "
                                 "from every stored trial",
                                 at_size(p.size, ", "), after->config.str(), format_us(after->time),
                                 format_us(ours.stats.median), ours.config.str())
                   : fmt::format("{}`tunekit select` and `tunekit emit` name {} at {} us, which an "
                                 "earlier run confirmed (measured again side by side), not this run's best, {} at "
                                 "{} us, measured once: where a size has confirmed configs, only they are named; a "
                                 "run that measures both (without --max-evals) confirms one of them",
                                 at_size(p.size, ", "), after->config.str(), format_us(after->time), ours.config.str(),
                                 format_us(ours.stats.median)));
      return;
    }
    if (before && after->config != before->config && !measured_here(before->config) &&
        objective_better(spec_.objective, before->value, after->value))
      warn(
          fmt::format("{}`tunekit select` and `tunekit emit` now name {} at {} us, confirmed by this "
                      "run, instead of {} at {} us, which an earlier run measured once: where a size has "
                      "confirmed configs, only they are named; a run whose space holds both confirms one of them",
                      at_size(p.size, ", "), after->config.str(), format_us(after->time), before->config.str(),
                      format_us(before->time)));
  }

  void remember(const Bindings& size, std::vector<const TrialRecord*> trials) {
    // By the spec's objective, as the search ranks them; a trial whose metric
    // fails ranks last.
    auto cost = [&](const TrialRecord* t) {
      return objective_cost(spec_.objective, spec_.metrics, *t).value_or(std::numeric_limits<double>::infinity());
    };
    std::stable_sort(trials.begin(), trials.end(),
                     [&](const TrialRecord* a, const TrialRecord* b) { return cost(a) < cost(b); });
    TunedSize t;
    t.size = size;
    for (std::size_t i = 0; i < trials.size() && i < kRemembered; ++i) t.fastest.push_back(trials[i]->config);
    auto same = std::find_if(tuned_.begin(), tuned_.end(),
                             [&](const TunedSize& x) { return size_key(x.size) == size_key(size); });
    if (same != tuned_.end()) *same = std::move(t);
    else tuned_.push_back(std::move(t));
  }

  // A variant's build input. The source's text is read once, but the
  // compiler reads its headers when it builds: one edited during the run
  // would build variants of the new code under the old version's spec_hash,
  // mixed with the old ones, so the run ends there.
  BuildInput input_for(const Config& config, const Bindings& size) const {
    BuildInput in = make_build_input(spec_, source_, config, size);
    if (in.headers != headers_)
      throw std::runtime_error(fmt::format(
          "a header that {} includes changed during the run: the trials so far are stored as the version the run "
          "started with; run again to tune the edited one (or undo the edit to go on with the old)",
          spec_.kernel.source.filename().string()));
    return in;
  }

  // What a trial ran (command backend), for the results table; empty when
  // it never ran.
  std::vector<std::string> command_of(const TrialRecord& t, const MachineInfo& machine) const {
    if (t.status == Status::invalid || t.status == Status::compile_error) return {};
    Bindings values = machine.properties;
    for (const auto& [k, v] : t.size) values[k] = v;
    for (const auto& [k, v] : t.config) values[k] = v;
    try {
      return backend_->command_line(make_build_input(spec_, source_, t.config, t.size), values);
    } catch (const std::exception&) {
      return {};
    }
  }

  // The function an entry calls: without template arguments and qualifiers
  // (`ns::gemm<128>` is `gemm`), which the source need not spell out.
  static std::string function_name(const std::string& entry) {
    std::string name = entry.substr(0, entry.find('<'));
    if (auto colons = name.rfind("::"); colons != std::string::npos) name = name.substr(colons + 2);
    return name;
  }

  // " (did you mean 'stencil'?)" when a name in `text` is a likely typo's
  // original, else empty.
  static std::string did_you_mean(std::string_view text, const std::string& name) {
    const auto match = detail::closest_match(name, detail::identifiers_in(text));
    return match ? fmt::format(" (did you mean '{}'?)", *match) : "";
  }

  // A parameter that neither the kernel (its source, headers, entry, flags)
  // nor the spec's launch and argument expressions name changes nothing a
  // config builds or runs: a misspelling, most often, and the tune would
  // rank identical variants by their noise. A program's parameters reach
  // it in ways not seen here; a replay builds nothing (its source may be a
  // stand-in).
  void warn_of_parameters_nothing_reads() {
    if (spec_.application || backend_for_language(spec_.kernel.language).kernel.parameters_checked ||
        !options_.replay.empty())
      return;
    const auto flags = detail::include_flags_from(spec_.kernel.flags, spec_.file.parent_path());
    std::string text =
        source_ + '\n' + detail::headers_text_for(spec_.kernel.source, source_, flags) + '\n' + spec_.kernel.entry;
    for (const auto& f : spec_.kernel.flags) text += '\n' + f;
    std::set<std::string> named;
    const auto expressions = trial_expressions(spec_);
    // The constraints come first; they only prune.
    for (std::size_t i = spec_.constraints.size(); i < expressions.size(); ++i)
      for (const auto& n : expressions[i]->variables()) named.insert(n);
    for (const Parameter& p : spec_.parameters) {
      if (named.count(p.name) || detail::has_word(text, p.name)) continue;
      warn(
          fmt::format("{}: the parameter '{}' appears nowhere in {} (nor its headers, kernel.entry, flags, launch or "
                      "arguments): every value of it builds and runs the same code{}",
                      p.where.file.empty() ? spec_.file.string() : p.where.str(), p.name,
                      spec_.kernel.source.filename().string(), did_you_mean(text, p.name)));
    }
  }

  // msKPP's way: a '// tunable' line that no parameter names keeps its value
  // in every build. Said, as a %RANGE% parameter the code never reads is:
  // a name marked tunable and left out of the spec is most likely an
  // oversight, and the tune would pass over it without a word.
  void warn_of_tunable_lines_no_parameter_names() {
    if (!uses_tunable_lines(spec_.kernel.injection, source_)) return;
    for (const TunableLine& line : tunable_lines(source_, spec_.kernel.source.string())) {
      if (std::any_of(spec_.parameters.begin(), spec_.parameters.end(),
                      [&](const Parameter& p) { return p.name == line.name; }))
        continue;
      warn(fmt::format(
          "{}: '{}' is marked '// tunable{}', but no parameter of the spec names it: every config keeps {} as "
          "written ({}); to tune it, give it values under the spec's parameters ({}: [...])",
          line.where.str(), line.name, line.alias ? ": " + line.name : "", line.alias ? "the line" : "its value",
          line.as_written, line.name));
    }
  }

  // A kernel entry the source never names would fail every config the same
  // way, after all of them were built: build one config first and report
  // the compiler's line about it, at the spec's `kernel.entry`. (An entry
  // that comes from a header or a macro builds, and the run goes on.)
  void check_entry(const std::vector<SizePlan>& plans) {
    const std::string name = function_name(spec_.kernel.entry);
    if (name.empty() || spec_.application || name.find('{') != std::string::npos) return;
    if (detail::has_word(source_, name)) return;
    const SizePlan* first = nullptr;
    for (const auto& p : plans)
      if (p.baseline && !first) first = &p;
    const SourceLocation where =
        spec_.kernel.entry_where.file.empty() ? SourceLocation{spec_.file.string()} : spec_.kernel.entry_where;
    std::string message = fmt::format("kernel.entry '{}' does not appear in {}{}", spec_.kernel.entry,
                                      spec_.kernel.source.filename().string(), did_you_mean(source_, name));
    if (!first) throw InputError(where, message);
    BuildResult r = build_now(input_for(*first->baseline, first->size));
    if (r.status == Status::ok) return;
    // The compiler's line that names the entry, else its first error.
    std::string useful, first_error;
    std::istringstream log(r.log);
    for (std::string line; std::getline(log, line);) {
      const bool error = line.find("error") != std::string::npos;
      if (error && first_error.empty()) first_error = line;
      if (error && line.find(name) != std::string::npos) {
        useful = line;
        break;
      }
    }
    if (useful.empty()) useful = first_error;
    throw InputError(where, message + (useful.empty() ? "" : ", and the compiler says:\n" + useful));
  }

  // A metric that cannot be computed for a trial that ran correctly (a
  // division by zero) shows as n/a, and as the objective it leaves the
  // config unranked: said once per metric, with why, or the user sees only
  // that nothing was named.
  void warn_of_metrics_without_value(const TrialRecord& rec) {
    for (const Metric& m : spec_.metrics) {
      if (warned_metrics_.count(m.name)) continue;
      const auto why = metric_problem(m, rec);
      if (!why) continue;
      warned_metrics_.insert(m.name);
      warn(fmt::format("{}: the metric '{}' has no value at {}: {}; it shows as n/a where it has none{}",
                       m.expression.where().str(), m.name, rec.config.str(), *why,
                       m.name == spec_.objective.name ? ", and a config without the objective's value is never "
                                                        "named best"
                                                      : ""));
    }
  }

  // Once per distinct message: every size may say the same.
  // A kernel edited since its last tune (or an input file, a flag, the
  // reference) has a new spec_hash, so nothing stored is resumed: say why
  // the run starts afresh, rather than leave the user to wonder where the
  // earlier results went.
  void warn_of_other_versions() {
    auto others = store_->other_versions(report_.kernel, report_.device, report_.spec_hash);
    // The same kernel measured with another toolchain (another compiler
    // release, a store copied from another machine) is said as that: its
    // source has not changed, and select and emit still read those trials.
    std::map<std::string, std::string> toolchain_of;  // spec_hash -> toolchain
    for (const auto& t : store_->toolchains(hash_without_toolchain_)) toolchain_of.emplace(t.spec_hash, t.text);
    std::size_t of_other_toolchains = 0;
    std::set<std::string> other_toolchains;
    std::erase_if(others, [&](const Store::OtherVersion& o) {
      const auto it = toolchain_of.find(o.spec_hash);
      if (it == toolchain_of.end()) return false;
      of_other_toolchains += o.trials;
      other_toolchains.insert("'" + it->second + "'");
      return true;
    });
    if (of_other_toolchains > 0)
      warn(
          fmt::format("{} holds {} trial{} of '{}' on this device measured with another toolchain ({}) than this "
                      "run's ('{}'): a tune reuses no trial another toolchain built, so this run measures anew; "
                      "those trials stay in the store",
                      report_.db.string(), of_other_toolchains, of_other_toolchains == 1 ? "" : "s", report_.kernel,
                      fmt::join(other_toolchains, ", "), toolchain_));
    if (others.empty()) return;
    std::size_t trials = 0;
    for (const auto& o : others) trials += o.trials;
    warn(
        fmt::format("{} holds {} trial{} of '{}' on this device from {} other version{} of it (the last on {}, "
                    "spec hash {}), whose source, headers, input files, flags, defines, compiler, arguments or "
                    "reference differ from this run's: this run resumes none of those trials, which stay in the store",
                    report_.db.string(), trials, trials == 1 ? "" : "s", report_.kernel, others.size(),
                    others.size() == 1 ? "" : "s", others.front().last_created_at.substr(0, 10),
                    others.front().spec_hash.substr(0, 12)));
  }

  // A CPU tune bound to some of the cores (mpirun binds each rank unless
  // told --bind-to none; taskset) is another device, so a rerun bound
  // otherwise resumes none of its trials, and without a word it measured
  // them all again. Only the same processor under another binding is named
  // (another machine's trials in a shared store are no surprise), and only
  // while this binding has none of its own: once it has, it was chosen.
  void warn_of_other_bindings() {
    const auto cores_removed = [](std::string_view device) {
      if (device.size() < 7 || device.substr(device.size() - 7) != " cores)") return device;
      const std::size_t open = device.rfind(" (");
      return open == std::string_view::npos ? device : device.substr(0, open);
    };
    const std::string_view processor = cores_removed(report_.device);
    if (processor == report_.device) return;
    const auto devices = store_->devices(report_.spec_hash);
    // A run that has trials of its own to resume was bound as it is before.
    if (std::any_of(devices.begin(), devices.end(), [&](const auto& d) { return d.device == report_.device; })) return;
    for (const auto& other : devices) {
      if (cores_removed(other.device) != processor) continue;
      warn(
          fmt::format("{} holds {} trial{} of this version of '{}' measured on '{}' (the last on {}), and this run "
                      "is on '{}': it resumes none of them, a run bound to other cores being another device. To "
                      "resume them, run bound as they were (mpirun binds each rank to a core unless given "
                      "--bind-to none; taskset binds too)",
                      report_.db.string(), other.trials, other.trials == 1 ? "" : "s", report_.kernel, other.device,
                      other.last_created_at.substr(0, 10), report_.device));
    }
  }

  // A measurement of a trial already on record (to confirm it, or in full)
  // whose worker was killed from outside and that a fresh one measured: no
  // trial line shows it, so a warning names the trial.
  void note_kill(const TrialResult& res, const TrialRecord& t, std::string_view measuring) {
    if (!res.killed_from_outside_by) return;
    ++report_.measured_again_after_kill;
    const std::string signal = detail::describe_signal(res.killed_from_outside_by);
    // A command kernel's program runs a process a run, in no worker.
    const std::string what = report_.application ? "its program's run was killed from outside ({}); run again"
                             : res.killed_from_outside_by == SIGSTOP
                                 ? "its worker was stopped from outside ({}); measured again on a fresh worker"
                                 : "its worker was killed from outside ({}); measured again on a fresh worker";
    warn(fmt::format("{}{} ({}): {}", at_size(t.size, ": "), t.config.str(), measuring,
                     fmt::format(fmt::runtime(what), signal.substr(0, signal.find(' ')))));
  }

  void warn(const std::string& message) {
    if (std::find(report_.warnings.begin(), report_.warnings.end(), message) == report_.warnings.end())
      report_.warnings.push_back(message);
  }

  // The time budget counts the backend's own clock when it has one (a
  // replay's recorded times), else the wall clock.
  bool out_of_time() const {
    if (!spec_.search.max_time) return false;
    // A rig kept across tune() calls keeps its clock running: this run's
    // share starts where it stood.
    const auto simulated = backend_->clock();
    return (simulated ? *simulated - clock_start_.value_or(Seconds(0)) : Seconds(Clock::now() - start_)) >=
           *spec_.search.max_time;
  }

  void notify(std::string current) {
    if (!progress_) return;
    ProgressEvent e;
    e.done = done_;
    e.total = std::max(total_, done_);
    e.elapsed = Clock::now() - start_;
    e.best = best_;
    e.current = std::move(current);
    e.time_bounded = spec_.search.max_time.has_value();
    // The wall clock's share of the budget (a replay's simulated clock has
    // no bearing on when the run ends in wall time).
    if (spec_.search.max_time && !backend_->clock())
      e.time_left = std::max(Seconds(0), *spec_.search.max_time - Seconds(e.elapsed));
    progress_(e);
  }

  TrialRecord blank_record(const SizePlan& p, const Config& c) const {
    TrialRecord r;
    r.spec_hash = report_.spec_hash;
    r.kernel = report_.kernel;
    r.device = report_.device;
    r.size = p.size;
    r.config = c;
    r.machine = machine_json_;
    return r;
  }

  SizeReport tune_size(SizePlan& p, const MachineInfo& machine) {
    SizeReport sr;
    sr.size = p.size;
    sr.baseline_is_spec_default = p.baseline_is_spec_default;
    size_best_.reset();
    measured_.clear();
    // The reason's counts cost far more than the yes or no: asked once.
    if (!p.space->any_valid()) {
      sr.error = "no config is valid at this size: " + p.space->why_empty().value_or("");
      return sr;
    }
    // A time budget spent at an earlier size (which said so) leaves this one
    // unsearched: said as its reason, as any size that ran nothing says why.
    if (told_out_of_time_) {
      sr.error = fmt::format("the time budget ({:g} s: search.max_time, --max-time) ran out before this size",
                             spec_.search.max_time->count());
      return sr;
    }
    const auto chosen_before = stored_choice(p.size);
    seed(p);
    sr.strategy = spec_.configs.empty() ? strategies().get(spec_.search.strategy).name : "the configs list";
    if (auto chose = p.strategy->describe(); !chose.empty()) sr.strategy += ": " + chose;

    // The default config's outputs are the reference unless the spec names a
    // reference function; it must build, since every verdict depends on it.
    Bindings env = machine.properties;
    for (const auto& [k, v] : p.size) env[k] = v;
    Bindings baseline_env = env;
    if (p.baseline)
      for (const auto& [k, v] : *p.baseline) baseline_env[k] = v;

    // A size whose constraints leave no valid config runs nothing: it needs
    // no reference, and has no config to resolve one's launch or tensor maps
    // with. It is reported as such and the other sizes go on.
    std::optional<ReferenceRun> reference;
    if (reference_function_ && p.baseline) {
      // Built with the first size's baseline. A size whose baseline differs,
      // or whose kernel.defines do (they read the size), gets the reference
      // built with its own, as its configs are built with theirs: a
      // parameter pinned to the size (a compile-time problem size, Kernel
      // Tuner's way) is this size's in the reference too. Where that build
      // fails, the first one serves.
      // (The build cache serves a size whose baseline an earlier one had.)
      Artifact built = *reference_function_;
      if (reference_takes_values_)
        if (const BuildInput own = make_reference_input(spec_, &*p.baseline, p.size); own.hash() != reference_hash_)
          if (BuildResult r = build_now(own); r.status == Status::ok) built = r.artifact;
      const LaunchSpec& own = spec_.reference.launch;
      reference = ReferenceRun{built, spec_.reference.entry,
                               resolve_launch(own.grid.empty() ? spec_.kernel.launch : own, baseline_env)};
    }
    if (spec_.reference.kind == ReferenceSpec::Kind::default_config && p.baseline && compares_outputs_) {
      BuildInput input = input_for(*p.baseline, p.size);
      BuildResult r = build_now(input);
      if (r.status != Status::ok) {
        blame_given_compiler(r, "the reference config " + p.baseline->str());
        blame_the_call(r);
        // Nothing at this size can be verified; the other sizes go on.
        sr.error = fmt::format("the {} config {} is the reference, but it {}{}:\n{}",
                               p.baseline_is_spec_default ? "default" : "baseline", p.baseline->str(),
                               r.fault == Fault::environment ? "cannot be built here" : "does not build",
                               given_build_settings(), clip_log(r.log, 2000));
        return sr;  // every report says why (SizeReport::error)
      }
      reference = ReferenceRun{r.artifact, resolve_entry(spec_.kernel.entry, *p.baseline),
                               resolve_launch(spec_.kernel.launch, baseline_env)};
    }
    // Tensor maps (CUDA) usually depend on the config (the box is the tile):
    // the reference gets those of the config it is launched with.
    if (reference && std::any_of(spec_.arguments.begin(), spec_.arguments.end(),
                                 [](const ArgumentSpec& a) { return a.role == Role::tensor_map; }))
      for (auto& a : resolve_arguments(spec_.arguments, baseline_env))
        if (a.role == Role::tensor_map) reference->tensor_maps.push_back(std::move(a));

    std::set<std::string> seen;
    std::vector<Config> queue;
    // The seeded strategy's first proposals are the seeds: they go ahead of
    // the baseline, so the first seed is evaluation No.1 of the size.
    if (!p.seeds.empty()) queue = p.strategy->next(p.seeds.size());
    if (p.baseline) queue.push_back(*p.baseline);
    const std::size_t batch = std::max<std::size_t>(2, options_.jobs ? options_.jobs : detail::usable_cores()) * 2;
    const std::size_t budget = p.budget.value_or(SIZE_MAX);
    std::size_t proposed = 0;  // configs handed to a batch so far
    bool cut_short = false;    // the run stopped before the search ended
    bool out_of_time_here = false;

    // The next batch: the strategy's proposals, minus what this run did,
    // within the evaluation budget.
    // A strategy that proposes only what this run has seen would be asked
    // forever (a plugin's bug): so many such answers in a row end the size.
    int stale_answers = 0;
    auto next_batch = [&]() -> std::unique_ptr<Batch> {
      // Said once, after the size, where it happened (out_of_time_here): a run
      // cut short by its time budget must not read as one whose search ran
      // its course.
      if (out_of_time() && !told_out_of_time_) told_out_of_time_ = out_of_time_here = true;
      if (out_of_time() || stop_requested()) cut_short = true;
      if (cut_short || proposed >= budget || !sr.error.empty()) return nullptr;
      while (queue.size() < batch && stale_answers < kMostStaleProposals && !stop_requested() && !out_of_time()) {
        const std::size_t want = batch - queue.size();
        auto more = p.strategy->next(want);
        if (more.empty()) break;
        // Fewer than asked: the strategy wants these results first. But a
        // proposal this run has queued already (the default, not measured
        // yet) is no proposal: it asks again.
        const bool waits = more.size() < want;
        std::size_t fresh = 0;
        for (auto& c : more) {
          // 3.0 for an integer's 3 is that config: built with 3, stored once.
          if (auto own = p.space->canonical(c)) c = std::move(*own);
          if (!seen.count(c.key())) {
            queue.push_back(std::move(c));
            ++fresh;
          }
        }
        if (fresh > 0) stale_answers = 0;
        else if (++stale_answers == kMostStaleProposals) {  // said once: the loop asks no more
          warn(
              fmt::format("{}the strategy '{}' proposed only configs this run has evaluated, {} times in a "
                          "row; the size's search ends after {} evaluations",
                          at_size(p.size, ": "), spec_.search.strategy, kMostStaleProposals, proposed));
          break;
        }
        if (waits && fresh > 0) break;
      }
      std::vector<Config> todo;
      for (auto& c : queue)
        if (seen.insert(c.key()).second && proposed + todo.size() < budget) todo.push_back(std::move(c));
      queue.clear();
      if (todo.empty()) return nullptr;
      proposed += todo.size();
      return prepare(p, std::move(todo));
    };

    // Device backends compile the next batch on the host cores while the
    // device measures this one; the CPU backend alternates, since compiling
    // would disturb its timings.
    const bool overlap = backend_->measures_while_building();
    // Batches stay put (unique_ptr): a build in flight refers to its inputs.
    std::unique_ptr<Batch> current = next_batch();
    if (current) start_build(*current, false);
    while (current) {
      std::unique_ptr<Batch> following;
      if (overlap) {
        following = next_batch();
        if (following) start_build(*following, true);
      }
      evaluate(p, *current, env, reference, sr);
      if (stop_requested()) cut_short = true;
      if (!sr.error.empty() || stop_requested()) {
        // Let a build in flight finish (it refers to the batch) and drop it.
        if (following && following->built.valid()) following->built.wait();
        break;
      }
      // Asked before this batch's results were in, a guided strategy may
      // have had nothing to propose yet (it waits for them): ask again now,
      // or the search would end with its budget unspent.
      if (!following) {
        following = next_batch();
        if (following) start_build(*following, false);
      }
      current = std::move(following);
    }

    if (out_of_time_here) {
      // The trials of the size, not the configs proposed: a batch's
      // configs past the budget never ran.
      const bool last = report_.sizes.size() + 1 == spec_.sizes.size();
      warn(fmt::format(
          "the time budget ({:g} s: search.max_time, --max-time) ran out{} after {} evaluations: the search stopped "
          "there{}",
          spec_.search.max_time->count(), at_size(p.size),
          std::count_if(sr.trials.begin(), sr.trials.end(), [](const TrialRecord& t) { return !is_base_trial(t); }),
          last ? "" : " (the sizes after it were not searched)"));
    }
    // A search whose plan the budget cut short (exhaustive's every config,
    // a configs list) ran the first configs of its order only: said, so
    // that 3 configs of 16 do not read as an exhaustive search. (Random
    // plans a sample of the budget's size; a guided search plans the whole
    // space, for the progress bar, but chose what the budget bought.)
    // A size ended otherwise (its reference failed, the run was stopped)
    // stopped for that reason, maybe before any of the configs it counts as
    // proposed ran: its report says why, and the budget had no part in it.
    const bool search_ran_its_course = sr.error.empty() && !stop_requested();
    if (const auto plan = p.strategy->planned();
        search_ran_its_course && plan && !p.strategy->guided() && p.budget && proposed >= *p.budget && *plan > proposed)
      warn(fmt::format(
          "{}{} ran the first {} of its {} configs, in its order, and stopped at the budget ({}); the "
          "other {} were not measured (a guided strategy, such as auto, chooses which configs a budget "
          "buys)",
          at_size(p.size, ": "),
          spec_.configs.empty() ? "the search '" + sr.strategy + "'" : std::string("the configs list"), proposed, *plan,
          spec_.search.max_fraction ? "search.max_fraction, --max-fraction" : "search.max_evals, --max-evals",
          *plan - proposed));

    // After the search, so that the first seed stays evaluation No.1 of the
    // size; before the confirmation, which measures it again when it is
    // near the fastest.
    if (p.base && sr.error.empty() && !stop_requested()) {
      std::unique_ptr<Batch> base = prepare(p, {*p.base});
      start_build(*base, false);
      evaluate(p, *base, env, reference, sr);
    }

    if (sr.error.empty() && !stop_requested()) {
      std::optional<std::string> drift = confirm(p, sr, env);
      if (measure_cuts_again(p, sr, env)) drift = confirm(p, sr, env);
      if (drift) warn(*drift);
    }

    for (std::size_t i = 0; i < sr.trials.size(); ++i) {
      if (p.baseline && sr.trials[i].config == *p.baseline) sr.baseline = i;
      if (is_base_trial(sr.trials[i])) sr.base = i;
    }
    sr.best = best_of_size(sr.trials, Goal{spec_.objective, spec_.metrics});
    if (sr.base && sr.trials[*sr.base].status != Status::ok) {
      const TrialRecord& base = sr.trials[*sr.base];
      warn(
          fmt::format("{}CUB's base policy (the source built with {}=1 and no %RANGE% defines) {}: {}; speedups are "
                      "over the {} instead",
                      at_size(p.size, ", "), kTuneBase, to_string(base.status), clip(base.error, 500),
                      p.baseline_is_spec_default ? "default config" : "first valid config"));
    }
    note_stored_choice(p, sr, chosen_before);
    if (cut_short && sr.error.empty())
      sr.stopped_part_way =
          stopped_part_way(p, sr,
                           out_of_time_here && !stop_requested() ? StoppedPartWay::Cause::time_budget
                                                                 : StoppedPartWay::Cause::stop_requested);
    sr.commands.resize(sr.trials.size());
    for (std::size_t i = 0; i < sr.trials.size(); ++i) sr.commands[i] = command_of(sr.trials[i], machine);
    std::vector<const TrialRecord*> ok;
    for (const auto& t : sr.trials)
      if (t.status == Status::ok && !is_base_trial(t)) ok.push_back(&t);
    if (!ok.empty()) remember(p.size, ok);
    return sr;
  }

  // How much of the size's space a run stopped part way measured; nothing
  // where the stop came after every config had run.
  std::optional<StoppedPartWay> stopped_part_way(const SizePlan& p, const SizeReport& sr,
                                                 StoppedPartWay::Cause cause) const {
    StoppedPartWay part;
    part.cause = cause;
    std::set<std::string> measured;
    for (const TrialRecord& t : sr.trials)
      if (t.status != Status::invalid && !is_base_trial(t)) measured.insert(t.config.key());
    part.measured = measured.size();
    const std::string size = size_key(p.size) + " ";
    part.resumed = std::count_if(measured.begin(), measured.end(),
                                 [&](const std::string& config) { return resumed_.count(size + config) > 0; });
    if (!spec_.configs.empty()) {
      part.valid = std::count_if(spec_.configs.begin(), spec_.configs.end(),
                                 [&](const Config& c) { return p.space->contains(c); });
    } else if (p.space->indexable()) {  // counting a space too large to index could outlast the tune
      part.valid = p.space->size();
    }
    if (part.valid && part.measured >= *part.valid) return std::nullopt;
    return part;
  }

  // A trial of `config` with the spec's measure settings, without a
  // reference or an early-stop bar. Throws InputError when an argument or the
  // launch cannot be resolved for this config.
  TrialRequest request_for(const Config& config, const Artifact& artifact, const std::string& entry,
                           const Bindings& env) const {
    TrialRequest rq;
    rq.values = env;
    for (const auto& [k, v] : config) rq.values[k] = v;
    rq.artifact = artifact;
    rq.entry = entry;
    rq.arguments = resolve_arguments(spec_.arguments, rq.values, config);
    rq.launch = resolve_launch(spec_.kernel.launch, rq.values);
    rq.tolerance = applied_tolerance(spec_);
    rq.measure = spec_.measure;
    rq.measure.early_stop = early_stop_;
    rq.seed = spec_.search.seed;
    return rq;
  }

  // A run that does not confirm yet measured a config faster than the best
  // an earlier run confirmed: where any trial is confirmed only confirmed
  // ones compete (competes_for_best), so that config would never be named,
  // nor picked by select or emit, and a later run that confirms would keep
  // the store's verdict (it measures none of the fastest anew). The
  // confirmations, which no longer name the fastest, are dropped: the size's
  // trials compete by their own times, as in a run that never confirmed, and
  // a later run that confirms confirms afresh.
  void forget_outrun_confirmations(SizeReport& sr) {
    const auto cost_of = [&](const TrialRecord& t) { return objective_cost(spec_.objective, spec_.metrics, t); };
    std::optional<double> confirmed_best;
    for (const TrialRecord& t : sr.trials)
      if (competes_for_best(t, /*confirmed_here=*/true))
        if (auto c = cost_of(t); c && (!confirmed_best || *c < *confirmed_best)) confirmed_best = c;
    if (!confirmed_best) return;
    const bool outrun = std::any_of(sr.trials.begin(), sr.trials.end(), [&](const TrialRecord& t) {
      const auto c = cost_of(t);
      return competes_for_best(t, /*confirmed_here=*/false) && !t.confirmed && measured_.count(t.config.key()) && c &&
             *c < *confirmed_best;
    });
    if (!outrun) return;
    for (TrialRecord& t : sr.trials)
      if (t.confirmed) {
        t.confirmed = false;
        store(t);
      }
  }

  // measure.confirm: the fastest configs of the size, measured again side by
  // side (see MeasureSettings::confirm). A best far ahead of the rest is
  // measured again beside the runner-up: one lucky measurement would
  // otherwise name it. A run that measured none of them anew keeps what the
  // store says when its best is confirmed there, so resuming a finished tune
  // measures nothing, and resuming one stopped before it confirmed confirms.
  // A simulating backend (replay) would serve the same recorded times again.
  // When the pooled times drop the confirmed configs below one that was not
  // (the machine ran slower while confirming), that one is measured again
  // beside the fastest confirmed ones, up to two more times. The best named
  // is a confirmed config whenever one is (competes_for_best).
  // Returns its word on drift, when the best it names is not the fastest
  // measured: the caller says it once the best is final.
  std::optional<std::string> confirm(const SizePlan& p, SizeReport& sr, const Bindings& env) {
    const MeasureSettings& ms = spec_.measure;
    if (ms.confirm < 2 || ms.confirm_rounds == 0 || backend_->clock()) {
      forget_outrun_confirmations(sr);
      return std::nullopt;
    }
    auto ranked = [&] {
      std::vector<std::pair<double, std::size_t>> out;
      for (std::size_t i = 0; i < sr.trials.size(); ++i)
        if (competes_for_best(sr.trials[i], /*confirmed_here=*/false))
          if (auto cost = objective_cost(spec_.objective, spec_.metrics, sr.trials[i])) out.emplace_back(*cost, i);
      std::sort(out.begin(), out.end());
      return out;
    };
    const auto first = ranked();
    std::vector<std::size_t> top;
    for (const auto& [cost, i] : first) {
      if (top.size() == ms.confirm) break;
      if (!top.empty() &&
          sr.trials[i].stats.median.count() > kConfirmWithin * sr.trials[top.front()].stats.median.count())
        continue;
      top.push_back(i);
    }
    if (top.size() == 1 && first.size() > 1) top.push_back(first[1].second);
    // The baselines (the default, CCCL's base), when near the fastest, are
    // measured beside them too: the speedup over them is the headline
    // figure, and a baseline measured once beside a best measured again
    // read as a loss (0.99x) or a gain that was only noise.
    if (!top.empty())
      for (std::size_t i = 0; i < sr.trials.size(); ++i)
        if (sr.trials[i].status == Status::ok && p.measured_in_full(sr.trials[i].config) &&
            std::find(top.begin(), top.end(), i) == top.end() &&
            sr.trials[i].stats.median.count() <= kConfirmWithin * sr.trials[top.front()].stats.median.count())
          top.push_back(i);
    const auto confirmed = [&](std::size_t i) { return sr.trials[i].confirmed; };
    // Not confirmed(top.front()): a run that ended with its fastest config
    // unconfirmed (the machine drifted while confirming) would otherwise
    // confirm again on every resume, and name another best each time.
    if (top.size() < 2 || (any_confirmed(sr.trials) && std::none_of(top.begin(), top.end(), [&](std::size_t i) {
                             return measured_.count(sr.trials[i].config.key());
                           })))
      return std::nullopt;
    constexpr int kPasses = 3;  // the first, and up to two for a config that overtook the confirmed ones
    for (int pass = 0; pass < kPasses; ++pass) {
      if (!measure_side_by_side(p, sr, env, top)) return std::nullopt;
      const auto now = ranked();
      if (now.empty()) return std::nullopt;
      const std::size_t leader = now.front().second;
      if (confirmed(leader)) return std::nullopt;
      top = {leader};
      for (const auto& [cost, i] : now)
        if (top.size() < ms.confirm && confirmed(i)) top.push_back(i);
      if (top.size() < 2) return std::nullopt;
    }
    // Of many configs within the noise of each other, the one measured
    // fastest once is faster by chance (measured again, each ran a little
    // slower): a leader within the noise target of the fastest confirmed
    // config is tied with it, as far as the measurement can tell.
    const auto now = ranked();
    const auto confirmed_best =
        std::find_if(now.begin(), now.end(), [&](const auto& entry) { return confirmed(entry.second); });
    if (confirmed_best != now.end() && now.front().first > 0 &&
        confirmed_best->first <= now.front().first * (1 + ms.target_noise))
      return std::nullopt;
    if (confirmed_best == now.end()) return std::nullopt;
    const TrialRecord& named = sr.trials[confirmed_best->second];
    const TrialRecord& once = sr.trials[now.front().second];
    return fmt::format(
        "{}the best named is the fastest confirmed config, {} at {} us; {} measured "
        "{} us once and was not measured again: in each of {} passes the fastest configs, measured "
        "again, ran slower than they first had (the machine's speed drifts more than they differ)",
        at_size(p.size, ", "), named.config.str(), format_us(named.stats.median), once.config.str(),
        format_us(once.stats.median), kPasses);
  }

  // A trial of a config that ran before at this size: in full (no early-stop
  // bar) and with no reference (it was verified then). None when its build
  // (from the build cache) or its arguments now fail.
  std::optional<TrialRequest> request_again(const SizePlan& p, const Config& config, const Bindings& env) const {
    BuildInput input = input_for(config, p.size);
    BuildResult built = builder_->build(input);
    if (built.status != Status::ok) return std::nullopt;
    try {
      return request_for(config, built.artifact, input.entry, env);
    } catch (const InputError&) {
      return std::nullopt;
    }
  }

  // A trial cut short was judged against the best so far when it ran. When
  // the fastest configs, measured again to confirm them, ran slower than
  // that (the machine slowed down during the run), a cut may no longer hold
  // (still_holds): its first samples may even beat the best now named.
  // Such trials are measured in full here, as a resume would measure them
  // (so that resuming a finished tune still measures nothing), and one that
  // then leads is confirmed beside the others.
  // Whether a cut, measured in full, overtook the best: the caller confirms
  // again.
  bool measure_cuts_again(const SizePlan& p, SizeReport& sr, const Bindings& env) {
    if (!(early_stop_ > 0) || backend_->clock()) return false;
    // The bar is the best that would be named (a confirmed one where any
    // is), not the fastest median stored: a config measured once on a quiet
    // machine, left unconfirmed beside confirmed ones that ran slow, named
    // nothing and kept every cut standing.
    std::optional<Microseconds> best;
    const bool confirmed_here = any_confirmed(sr.trials);
    for (const TrialRecord& t : sr.trials)
      if (competes_for_best(t, confirmed_here) && (!best || t.stats.median < *best)) best = t.stats.median;
    std::vector<std::size_t> stale;
    for (std::size_t i = 0; i < sr.trials.size(); ++i)
      if (sr.trials[i].status == Status::slower && !still_holds(sr.trials[i], p, best)) stale.push_back(i);
    if (stale.empty()) return false;
    notify(fmt::format("measuring {} config{} cut short against an earlier best in full", stale.size(),
                       stale.size() == 1 ? "" : "s"));
    std::vector<std::string> overtook;
    bool cut_earlier = false;  // an overtaking config was cut by an earlier run, against its best
    for (std::size_t i : stale) {
      if (out_of_time() || stop_requested()) return false;
      TrialRecord& t = sr.trials[i];
      const bool cut_now = measured_.count(t.config.key()) > 0;
      const std::optional<TrialRequest> rq = request_again(p, t.config, env);
      if (!rq) continue;
      const auto t0 = Clock::now();
      TrialResult res = evaluator_->evaluate(*rq);
      report_.measure += Clock::now() - t0;
      if (res.interrupted) return false;
      measured_.insert(t.config.key());
      report_.device_busy += res.device_busy;
      report_.flush += res.flush;
      note_kill(res, t, "measured in full after a cut short");
      if (res.status != Status::ok && res.fault == Fault::environment) {
        warn(fmt::format("{}, cut short against an earlier best, could not be measured in full ({}): {}",
                         t.config.str(), to_string(res.status), clip(res.error, 500)));
        continue;
      }
      t.status = res.status;
      t.fault = res.fault;
      t.settings = settings_;  // measured under this run's settings, which a resume judges a failure by
      t.error = res.status == Status::ok ? std::string() : "measured in full after a cut short: " + clip(res.error);
      t.samples = std::move(res.samples);
      t.stats = res.stats;
      t.slower_than.reset();
      store(t);
      if (t.status == Status::ok && best && t.stats.median < *best) {
        overtook.push_back(fmt::format("{} ({} us)", t.config.str(), format_us(t.stats.median)));
        cut_earlier = cut_earlier || !cut_now;
      }
    }
    if (overtook.empty()) return false;
    // A cut made by an earlier run was judged against that run's best, which
    // this run may not name for another reason than a slower machine: a
    // narrower space (--where, a constraint added) leaves it out.
    warn(fmt::format(
        "{}{}: the fastest configs, measured again, ran at {} us, and {} cut short by the early stop {}, ran "
        "faster measured in full: {}",
        at_size(p.size, ", "),
        cut_earlier ? "the best that configs were cut short against is not the best named now"
                    : "the machine slowed down during the run",
        format_us(*best), overtook.size() == 1 ? "one config" : "configs",
        cut_earlier ? "in an earlier run (outside this run's space, or measured when the machine was faster)"
                    : "against the best before that",
        fmt::join(overtook, ", ")));
    return true;
  }

  // The trials `top` (indices into sr.trials), measured again side by side,
  // each one's statistics then pooling every sample (sr.confirmed lists each
  // once). False when the run was stopped or ran out of time.
  bool measure_side_by_side(const SizePlan& p, SizeReport& sr, const Bindings& env,
                            const std::vector<std::size_t>& top) {
    const MeasureSettings& ms = spec_.measure;
    struct Candidate {
      std::size_t trial;
      TrialRequest request;
      std::vector<Microseconds> samples;
      bool dropped = false;
      double cpu_wait_share = 0;  // the most of its rounds
    };
    std::vector<Candidate> candidates;
    for (std::size_t i : top)
      if (auto rq = request_again(p, sr.trials[i].config, env)) candidates.push_back({i, std::move(*rq), {}, false, 0});
    if (candidates.size() < 2) return true;
    notify(fmt::format("confirming the {} fastest configs", candidates.size()));
    for (std::size_t round = 0; round < ms.confirm_rounds; ++round)
      for (std::size_t j = 0; j < candidates.size(); ++j) {
        if (out_of_time() || stop_requested()) return false;
        Candidate& c = candidates[(j + round) % candidates.size()];
        if (c.dropped) continue;
        const auto t0 = Clock::now();
        TrialResult res = evaluator_->evaluate(c.request);
        report_.measure += Clock::now() - t0;
        if (res.interrupted) return false;
        report_.device_busy += res.device_busy;
        report_.flush += res.flush;
        note_kill(res, sr.trials[c.trial], "measured again to confirm it");
        if (res.status == Status::ok) {
          c.samples.insert(c.samples.end(), res.samples.begin(), res.samples.end());
          c.cpu_wait_share = std::max(c.cpu_wait_share, res.cpu_wait_share);
          continue;
        }
        // A config that fails when measured again fails: it cannot be the
        // best. A failure of the environment's says nothing of the config,
        // which keeps its first measurement.
        c.dropped = true;
        TrialRecord& t = sr.trials[c.trial];
        if (res.fault == Fault::environment) {
          warn(fmt::format("{} could not be measured again to confirm it ({}): {}", t.config.str(),
                           to_string(res.status), clip(res.error, 500)));
          continue;
        }
        t.status = res.status;
        t.fault = res.fault;
        // Failed under this run's settings (a shorter timeout): a run under
        // others measures it again, as it would any failure of theirs.
        t.settings = settings_;
        t.error = "measured again to confirm it as one of the fastest: " + clip(res.error);
        store(t);
      }
    for (const Candidate& c : candidates) {
      if (c.dropped || c.samples.empty()) continue;
      TrialRecord& t = sr.trials[c.trial];
      t.samples.insert(t.samples.end(), c.samples.begin(), c.samples.end());
      t.stats = summarize(t.samples);
      // Its statistics pool every round's samples, so a busy round inflates them.
      t.cpu_wait_share = std::max(t.cpu_wait_share, c.cpu_wait_share);
      t.confirmed = true;
      store(t);
      if (std::find(sr.confirmed.begin(), sr.confirmed.end(), c.trial) == sr.confirmed.end())
        sr.confirmed.push_back(c.trial);
    }
    return true;
  }

  // Records from the store have an id; new ones are saved first. Each trial
  // carries the origin it has in this run; a resumed trial whose origin is a
  // seed provider's is stored again, so that the store says why it ran last.
  void record(TrialRecord rec, SizeReport& sr, const SizePlan& p) {
    const bool measured_now = rec.id == 0;
    const std::string origin = p.origin_of(rec.config);
    const bool reflag = rec.id != 0 && origin != kOriginSearch && rec.origin != origin;
    rec.origin = origin;
    if (rec.id == 0) {
      rec.settings = settings_;
      if (rec.status == Status::ok || rec.status == Status::slower) rec.fault = Fault::none;
      else if (rec.fault == Fault::none) rec.fault = Fault::config;
    }
    const bool base = is_base_trial(rec);
    // Whether a config is valid depends on this run's constraints (--where),
    // not on the config alone: an invalid verdict is never stored, so it can
    // neither replace a measurement nor stop a later run from measuring.
    if (rec.status != Status::invalid && (rec.id == 0 || reflag)) {
      const SeedProvider* provider = nullptr;
      for (const auto& [seed, from] : p.seeds)
        if (seed == rec.config) provider = from;
      store(rec, provider && provider->one_per_size());
    }
    const Observed seen = observed(spec_, rec);
    if (seen.value && !seen.outcome.cost && !std::exchange(warned_unplaceable_, true))
      warn(
          fmt::format("the objective {} was not a positive number at some configs (first {} at {}): the search "
                      "models the logarithm of the objective, so it took them as failed; their trials keep "
                      "the values and can still be the best",
                      spec_.objective.name, *seen.value, rec.config.str()));
    if (rec.status == Status::ok) warn_of_metrics_without_value(rec);
    // The base is no config the strategy could propose, nor one that may be
    // named best: it neither guides the search nor sets the early stop's bar.
    if (!base) {
      p.strategy->observe(rec.config, seen.outcome);
      if (rec.status == Status::ok && (!best_ || rec.stats.median < *best_)) best_ = rec.stats.median;
      if (rec.status == Status::ok && (!size_best_ || rec.stats.median < *size_best_)) size_best_ = rec.stats.median;
    }
    ++done_;
    sr.trials.push_back(std::move(rec));
    notify(fmt::format("No.{}: {}", sr.trials.size(), sr.trials.back().config.str()));
    if (measured_now && !base) stop_if_the_machine_keeps_failing(sr.trials.back());
  }

  // A machine that fails every config (a full disk, a compiler that cannot
  // run, a device another process filled) would take the run through the
  // whole space learning nothing, each failure measured again by the next
  // run anyway: after enough in a row, with no config's own verdict between
  // them, the run ends with the reason. What is stored stays stored.
  void stop_if_the_machine_keeps_failing(const TrialRecord& t) {
    if (t.fault != Fault::environment || options_.keep_going) {
      machine_failures_in_a_row_ = 0;
      return;
    }
    if (++machine_failures_in_a_row_ < kMachineFailuresInARow) return;
    std::string reason = clip(t.error, 500);
    reason.erase(reason.find_last_not_of(" \t\r\n") + 1);  // a log's last newline
    throw std::runtime_error(fmt::format(
        "{}the last {} configs measured all failed for a reason of the machine's, not theirs, so the run stops "
        "here rather than go through the space learning nothing (the last, {}, {}: {}); they are stored as the "
        "machine's failures, which the next run measures again: fix what the reason names and run the same command "
        "to resume (or add --keep-going to go on past such failures)",
        at_size(t.size, ": "), kMachineFailuresInARow, t.config.str(), to_string(t.status), reason));
  }

  // A batch of configs on its way through build and evaluation.
  struct Batch {
    std::vector<Config> configs;
    std::vector<std::optional<TrialRecord>> ready;  // resumed or invalid: no build needed
    std::vector<BuildInput> inputs;
    std::vector<std::size_t> input_of;  // config index -> input index
    std::vector<bool> retry;            // a stored failure measured again (counted once it is)
    std::future<std::vector<BuildResult>> built;
  };

  // What a base that fails for a parameter's value it lacks needs: the spec
  // says which values of CCCL's policy its launch, entry and arguments read.
  std::string base_values_hint() const {
    return fmt::format(
        "; the base sets no parameter but those the spec's 'base:' gives ({}): give there the values CUB's own "
        "policy uses for the parameters these read (docs/spec-format.md, TUNE_BASE)",
        spec_.base_values.empty() ? std::string("none") : spec_.base_values.str());
  }

  std::unique_ptr<Batch> prepare(const SizePlan& p, std::vector<Config> configs) {
    auto batch = std::make_unique<Batch>();
    Batch& b = *batch;
    b.configs = std::move(configs);
    b.ready.resize(b.configs.size());
    b.input_of.assign(b.configs.size(), SIZE_MAX);
    b.retry.assign(b.configs.size(), false);
    for (std::size_t i = 0; i < b.configs.size(); ++i) {
      const Config& c = b.configs[i];
      const bool base = p.base && *p.base == c;  // no config of the space, so never invalid there
      if (auto why = base ? std::nullopt : p.space->why_invalid(c)) {
        TrialRecord r = blank_record(p, c);
        r.status = Status::invalid;
        r.error = *why;
        b.ready[i] = std::move(r);
        continue;
      }
      if (!options_.fresh)
        if (auto old = store_->find(report_.spec_hash, report_.device, p.size, c)) {
          if (reusable(*old, p)) {
            // Specs that differ only in their name share a spec_hash and so
            // their rows, whose label is whoever stored last: this run's
            // report names them as this spec.
            old->kernel = report_.kernel;
            resumed_.insert(size_key(p.size) + " " + c.key());
            b.ready[i] = std::move(*old);
            ++report_.resumed;
            continue;
          }
          // A trial a stopped --fresh run left stale is measured as new,
          // not counted as a stored failure measured again.
          b.retry[i] = old->status != Status::slower && !old->settings.starts_with(Store::kStaleSettings);
        }
      try {
        b.inputs.push_back(input_for(c, p.size));
      } catch (const InputError& e) {
        // The base has no parameters but those `base:` gives, so an entry
        // or a kernel.defines that names another cannot be made for it: its
        // failure, not the run's.
        if (!base) throw;
        TrialRecord r = blank_record(p, c);
        r.status = Status::compile_error;
        r.error = fmt::format("the base variant ({}=1) cannot be built: {}{}", kTuneBase, e.what(), base_values_hint());
        b.ready[i] = std::move(r);
        continue;
      }
      b.input_of[i] = b.inputs.size() - 1;
    }
    return batch;
  }

  // Whether a stored trial stands for this run: an ok trial does; one cut
  // short by the early stop while its bar holds (still_holds()); a failure
  // only when it was the config's own under the settings it depends on
  // (detail::failure_stands), and not when the user asked to measure
  // failures again.
  bool reusable(const TrialRecord& old, const SizePlan& p) const {
    if (old.settings.starts_with(Store::kStaleSettings)) return false;  // a --fresh run had not reached it
    if (old.status == Status::ok) return true;
    if (old.status == Status::slower)
      return still_holds(old, p, store_->best_median(report_.spec_hash, report_.device, old.size));
    if (old.status == Status::invalid) return false;  // stored by tunekit before schema 5
    if (options_.retry_failed || old.fault != Fault::config) return false;
    return detail::failure_stands(old.status, old.settings, settings_);
  }

  // A build the run waits for (the reference, the default config as the
  // reference, the first config): in the time line's build, all of it waited
  // for, not in "other".
  BuildResult build_now(const BuildInput& in) {
    const auto t0 = Clock::now();
    BuildResult r = builder_->build(in);
    if (r.cached) return r;  // found in the build cache: no build
    const auto spent = Clock::now() - t0;
    std::lock_guard lock(build_time_mutex_);
    report_.build += spent;
    report_.build_wait += spent;
    return r;
  }

  void start_build(Batch& b, bool in_background) {
    auto work = [this, &inputs = b.inputs] {
      std::vector<BuildResult> built(inputs.size());
      if (inputs.empty()) return built;
      const auto t0 = Clock::now();
      build_parallel(*builder_, inputs, options_.jobs, [&](std::size_t i, BuildResult r) { built[i] = std::move(r); });
      std::lock_guard lock(build_time_mutex_);
      report_.build += Clock::now() - t0;
      return built;
    };
    if (!b.inputs.empty())
      notify(fmt::format("building {} variant{}", b.inputs.size(), b.inputs.size() == 1 ? "" : "s"));
    b.built = std::async(in_background ? std::launch::async : std::launch::deferred, work);
  }

  void evaluate(const SizePlan& p, Batch& b, const Bindings& env, const std::optional<ReferenceRun>& reference,
                SizeReport& sr) {
    const auto wait_start = Clock::now();
    std::vector<BuildResult> built = b.built.get();
    report_.build_wait += Clock::now() - wait_start;
    for (std::size_t i = 0; i < b.configs.size(); ++i) {
      if (stop_requested()) return;
      if (b.ready[i]) {
        record(std::move(*b.ready[i]), sr, p);
        continue;
      }
      // A replay's time budget (recorded times) ends at the first trial past
      // it, as `tunekit replay --max-time` does. A wall-clock budget ends
      // the proposals: a batch built is measured, or a first batch whose
      // builds outlast the budget would measure nothing.
      if (backend_->clock() && out_of_time()) return;
      // A stored failure measured again counts once its new trial is kept,
      // not when a stop drops it.
      auto finish = [&](TrialRecord r) {
        if (b.retry[i]) ++report_.retried;
        record(std::move(r), sr, p);
      };
      const Config& config = b.configs[i];
      TrialRecord rec = blank_record(p, config);
      const BuildResult& br = built[b.input_of[i]];
      rec.build_time = br.time;
      rec.resources = br.resources;
      if (br.status != Status::ok) {
        rec.status = br.status;
        rec.fault = br.fault;
        rec.error = clip_log(br.log);
        finish(std::move(rec));
        continue;
      }
      TrialRequest rq;
      try {
        rq = request_for(config, br.artifact, b.inputs[b.input_of[i]].entry, env);
      } catch (const InputError& e) {
        // An argument or launch expression that fails for this config (a
        // division by zero, a negative size, a scalar out of its type's
        // range) is this config's failure, not the run's; the base's, where
        // it reads a parameter that `base:` does not give.
        rec.status = Status::launch_error;
        rec.error = e.what();
        if (p.base && config == *p.base) rec.error += base_values_hint();
        finish(std::move(rec));
        continue;
      }
      // The default config is checked against its own reference run too:
      // that run's checks (no element left unwritten, nothing NaN) are the
      // config's, and so is a second run that disagrees with the first.
      if (reference) rq.reference = reference;
      // The baseline is measured in full: the speedup over the default, and
      // one config for all sizes, are ratios to its time.
      if (!p.measured_in_full(config)) rq.measure.best_so_far = size_best_;
      notify(fmt::format("measuring {}", config.str()));
      const auto t0 = Clock::now();
      TrialResult res;
      try {
        try {
          res = evaluator_->evaluate(rq);
        } catch (const ReferenceError& e) {
          // A reference whose worker was killed from outside, or whose
          // outputs met a full disk, gets a second run before the size ends.
          if (e.fault != Fault::environment || stop_requested()) throw;
          report_.warnings.push_back(
              fmt::format("{}the reference's run failed for a reason of the machine's, not the kernel's ({}); it ran "
                          "again",
                          at_size(p.size, ": "), clip(e.what(), 500)));
          res = evaluator_->evaluate(rq);
        }
      } catch (const ReferenceError& e) {
        // Every verdict at this size depends on the reference: end the size,
        // say which reference failed, and go on with the other sizes.
        const std::string which = spec_.reference.kind == ReferenceSpec::Kind::function
                                      ? reference_function_name(spec_.reference)
                                      : fmt::format("the reference (the default config {})",
                                                    p.baseline ? p.baseline->str() : std::string("?"));
        sr.error = fmt::format("{} failed ({}), so no config could be verified: {}", which, to_string(e.status),
                               clip(e.what(), 2000));  // every report says why
        report_.measure += Clock::now() - t0;
        if (spec_.reference.kind == ReferenceSpec::Kind::default_config && p.baseline)
          fail_baseline(p, sr, e, config == *p.baseline ? std::move(rec) : blank_record(p, *p.baseline));
        return;
      }
      const Seconds took = Clock::now() - t0;
      report_.measure += took;
      rec.eval_time = res.recorded ? res.recorded->run : took;
      if (res.recorded) rec.build_time = res.recorded->compile;
      if (res.interrupted) return;  // stopped: the trial says nothing about the config
      measured_.insert(config.key());
      report_.device_busy += res.device_busy;
      report_.flush += res.flush;
      report_.verify += res.verify;
      if (res.killed_from_outside_by) ++report_.measured_again_after_kill;  // its error notes it too
      rec.verify_time = res.verify;
      rec.status = res.status;
      rec.fault = res.fault;
      rec.error = clip(res.error);
      rec.samples = std::move(res.samples);
      rec.stats = res.stats;
      rec.verification = res.verification;
      rec.cpu_wait_share = res.cpu_wait_share;
      if (rec.status == Status::slower) {
        if (rq.measure.best_so_far) {
          rec.slower_than = SlowerThan{rq.measure.early_stop, *rq.measure.best_so_far};
        } else {  // no bar was given: a worker out of step with this tuner
          rec.status = Status::launch_error;
          rec.error = "the worker cut the trial short without an early-stop bar";
        }
      }
      finish(std::move(rec));
    }
  }

  // A default-config reference that fails is that config's own failure: its
  // trial says so, whether it is measured now or was stored as ok by a run
  // that never checked it, so that no output path ever ships it.
  void fail_baseline(const SizePlan& p, SizeReport& sr, const ReferenceError& e, TrialRecord fresh) {
    auto failed = [&](TrialRecord& t) {
      t.status = e.status;
      t.fault = e.fault;
      t.error = clip(fmt::format("as the reference: {}", e.what()));
      t.stats = {};
      t.samples.clear();
    };
    for (TrialRecord& t : sr.trials) {
      if (t.config != *p.baseline) continue;
      failed(t);
      t.settings = settings_;
      store(t);
      return;
    }
    failed(fresh);
    record(std::move(fresh), sr, p);
  }

  // Every trial this run writes goes through here.
  void store(TrialRecord& t, bool exclusive_origin = false) {
    // The store keeps a config's seed origin from an earlier run over this
    // run's 'search' (Store::put); this run's report says why it ran here.
    const std::string origin = t.origin;
    // A trial of this spec_hash was built by this toolchain, one read from
    // a store older than schema 10 too (spec_hash holds the toolchain).
    t.hash_without_toolchain = hash_without_toolchain_;
    t.toolchain = toolchain_;
    store_->put(t, exclusive_origin);
    t.origin = origin;
    if (options_.on_stored) options_.on_stored(t, exclusive_origin);
  }

  // Whether a stored trial can stand for this run. A trial cut short was
  // judged against a bar (factor x the best at its size then); it stands
  // while this run would cut it too: early stop on with a factor no larger,
  // and its samples all over this run's bar, factor x `best` (a resume's:
  // the fastest ok trial at its size in the store, which confirmation may
  // have moved a little since: a trial cut against 3 x 5.008 us stands
  // against 3 x 5.213 us when its samples are over that too). Otherwise (early stop off, a larger
  // factor, or a best re-measured much slower) it is measured again, as is
  // the baseline, which is always measured in full.
  bool still_holds(const TrialRecord& old, const SizePlan& p, std::optional<Microseconds> best) const {
    if (old.status != Status::slower) return true;
    if (p.measured_in_full(old.config)) return false;
    const double factor = early_stop_;
    if (!old.slower_than || !(factor > 0) || factor > old.slower_than->factor || old.samples.empty()) return false;
    const Microseconds fastest = *std::min_element(old.samples.begin(), old.samples.end());
    return best && fastest > *best * factor;
  }

  const Spec& spec_;
  const TuneOptions& options_;
  const ProgressCallback& progress_;
  Clock::time_point start_;
  std::string settings_;
  std::string hash_without_toolchain_, toolchain_;  // what each stored trial records (TrialRecord)
  // measure.early_stop, off under an objective other than the time
  // (early_stop_conflict): the cut compares times.
  const double early_stop_;
  TuneReport report_;
  std::optional<TuningRig> own_rig_;  // when the caller passed none
  Backend* backend_ = nullptr;
  Builder* builder_ = nullptr;
  Evaluator* evaluator_ = nullptr;
  std::optional<Seconds> clock_start_;  // the backend's clock when this run began
  std::unique_ptr<Store> store_;
  std::optional<detail::KernelClaim> claim_;  // held while this run may store its kernel's trials
  std::vector<std::unique_ptr<SeedProvider>> providers_;
  bool measures_base_ = false;                    // each size also measures CCCL's base variant (SizePlan::base)
  static constexpr std::size_t kRemembered = 16;  // fastest configs kept per tuned size
  std::vector<TunedSize> tuned_;                  // sizes tuned so far (and stored ones), for transfer
  std::optional<Artifact> reference_function_;
  bool compares_outputs_ = true;  // some argument's outputs are compared with the reference
  // Whether reference_function_ was built with a config's values (else
  // without the parameters): then a size whose baseline differs builds its own.
  bool reference_takes_values_ = false;
  std::string reference_hash_;  // of the input reference_function_ was built from
  std::string source_;
  std::string headers_;  // the digest of the kernel's headers when the run started (input_for)
  std::string machine_json_;
  std::size_t done_ = 0, total_ = 0;
  std::optional<Microseconds> best_;
  // The fastest ok median at the size being tuned, in this run: the early
  // stop's reference.
  std::optional<Microseconds> size_best_;
  std::set<std::string> measured_;        // the configs this run measured at the size being tuned (keys)
  std::set<std::string> warned_metrics_;  // metrics warn_of_metrics_without_value has named
  bool warned_unplaceable_ = false;       // an objective value the search could not take (observed)
  // Trials measured in a row that failed for the machine's reason; a run
  // ends at kMachineFailuresInARow (stop_if_the_machine_keeps_failing).
  std::size_t machine_failures_in_a_row_ = 0;
  std::set<std::string> resumed_;  // "SIZE CONFIG" (size_key, Config::key) of the trials resumed from the store
  static constexpr std::size_t kMachineFailuresInARow = 10;
  bool told_out_of_time_ = false;         // the time budget ran out (said once, at the size where it did)
  std::mutex build_time_mutex_;
};

std::string file_digest(const fs::path& file, const SourceLocation& where) {
  if (auto digest = detail::file_digest(file)) return *digest;
  throw InputError(where, "cannot read " + file.string());
}

}  // namespace

namespace {

// spec_hash() with `toolchain` as the toolchain's identity: "" leaves it out.
std::string kernel_hash(const Spec& spec, const std::string& toolchain) {
  detail::Hasher h;
  const std::string source = read_file(spec.kernel.source, {spec.file.string()});
  h.add(source);
  // Its own headers are the kernel too; only when it has some, so that other
  // specs keep their hash.
  if (const std::string headers = kernel_headers_digest(spec, source); !headers.empty()) h.add("headers").add(headers);
  h.add(spec.kernel.entry).add(spec.kernel.language).add(spec.kernel.compiler);
  // A compiler named by the environment ($CXX) is the kernel's too; only
  // when set, so that other specs keep their hash.
  if (const auto& traits = backend_for_language(spec.kernel.language).kernel;
      spec.kernel.compiler.empty() && traits.compiler_variable)
    if (const std::string variable = traits.compiler_variable(spec.kernel.language); !variable.empty())
      if (const char* env = std::getenv(variable.c_str()); env && *env) h.add("$" + variable).add(env);
  // What the compiler builds with, by its release (the host compiler's
  // --version and target; for CUDA NVRTC's version, $CUDA_HOME's nvcc's
  // release and its host compiler's; for OpenCL the device's platform and
  // driver versions): a switched or upgraded one makes other variants, whose
  // verdicts the old one's trials do not tell, while the same release
  // installed on another machine reads them. Looked up once per process,
  // and "" when the name runs no file: a missing compiler fails at its
  // build.
  if (!toolchain.empty()) h.add("compiler").add(toolchain);
  // The architecture a device kernel is built for decides what it does
  // (sm_90a's wgmma is not sm_90's); only when set, so other specs keep
  // their hash.
  if (!spec.kernel.arch.empty()) h.add("arch").add(spec.kernel.arch);
  h.add(static_cast<std::uint64_t>(spec.kernel.injection));
  for (const auto& f : spec.kernel.flags) h.add(f);
  // The files the flags name (sources, objects, libraries) by their text,
  // and kernel.defines: only when there are, so that other specs keep their
  // hash.
  if (const std::string files = detail::flag_files_digest(spec.kernel.flags); !files.empty())
    h.add("flag files").add(files);
  if (!spec.kernel.defines.empty()) {
    h.add("defines").add(spec.kernel.defines.size());
    for (const auto& d : spec.kernel.defines) h.add(d.name).add(d.value.text());
  }
  h.add(spec.arguments.size());
  for (const auto& a : spec.arguments) {
    h.add(a.name).add(to_string(a.type)).add(to_string(a.role)).add(to_string(a.fill));
    h.add(a.size ? a.size->text() : "").add(a.value ? a.value->text() : "").add(fmt::format("{}", a.fill_value));
    if (const auto& t = a.tensor_map) {  // only when there is one: other specs keep their hash
      h.add(t->of).add(t->dims.size());
      for (const auto& e : t->dims) h.add(e.text());
      for (const auto& e : t->box) h.add(e.text());
      h.add(fmt::format("{} {} {}", t->swizzle, t->oob_nan, t->l2_promotion));
    }
    // Triton's argument fields only when set: other specs keep their hash.
    if (!a.shape.empty()) {
      h.add("shape").add(a.shape.size());
      for (const auto& e : a.shape) h.add(e.text());
    }
    // A file fill's values are the inputs as the seed's are for a random
    // one; by content, so a copy elsewhere (another MPI rank's) is the same.
    if (a.fill == Fill::file) h.add("fill file").add(file_digest(a.fill_file, a.fill_where));
    if (!a.setup.empty()) {
      h.add("setup").add(a.setup);
      // A setup function makes inputs the kernel is timed on (routing and
      // page tables): in a file of its own, that file and the modules it
      // imports are the kernel's as much as its own file's are.
      const fs::path file = a.setup.substr(0, a.setup.rfind(':'));
      if (file != spec.kernel.source) {
        const std::string text = read_file(file, {spec.file.string()});
        h.add(text);
        if (const std::string imports = detail::headers_digest_for(file, text, {}); !imports.empty())
          h.add("setup imports").add(imports);
      }
    }
    if (!a.passed) h.add("not passed");
  }
  for (const auto& c : spec.kernel.constexprs) h.add("constexpr").add(c.name).add(c.value.text());
  if (spec.kernel.max_spills) h.add(fmt::format("max_spills={}", *spec.kernel.max_spills));
  if (!spec.reference.torch_expression.empty()) h.add("torch").add(spec.reference.torch_expression);
  if (spec.measure.graph) h.add("graph");
  h.add(static_cast<std::uint64_t>(spec.reference.kind)).add(spec.reference.entry);
  if (spec.reference.kind == ReferenceSpec::Kind::function && !spec.reference.source.empty()) {
    const std::string text = read_file(spec.reference.source, {spec.file.string()});
    h.add(text);
    // Its own headers decide the verdicts as much as it does.
    const auto own = detail::include_flags_from(spec.reference.flags.empty() ? spec.kernel.flags : spec.reference.flags,
                                                spec.file.parent_path());
    if (const std::string headers = detail::headers_digest_for(spec.reference.source, text, own); !headers.empty())
      h.add("reference headers").add(headers);
  } else if (spec.reference.kind == ReferenceSpec::Kind::function && !spec.reference.flags.empty()) {
    // A reference in the kernel's own source, built with flags of its own:
    // the headers those reach (its -I folders) are its too.
    const auto own = detail::include_flags_from(spec.reference.flags, spec.file.parent_path());
    if (const std::string headers = detail::headers_digest_for(spec.kernel.source, source, own); !headers.empty())
      h.add("reference headers").add(headers);
  }
  for (const auto& f : spec.reference.flags) h.add(f);
  if (const std::string files = detail::flag_files_digest(spec.reference.flags); !files.empty())
    h.add("reference flag files").add(files);
  if (spec.reference.kind == ReferenceSpec::Kind::default_config && spec.default_config)
    h.add(spec.default_config->key());
  const Tolerance tolerance = applied_tolerance(spec);
  h.add(fmt::format("{} {}", tolerance.atol, tolerance.rtol));
  h.add(spec.search.seed);  // the seed fills the inputs
  // Hot, cold and cold-read times are different measurements, so none may
  // resume another's trials. cold, the default, adds nothing: specs keep the
  // hash they had before the mode took part (applications: no flush precedes
  // their runs, so the mode means nothing there).
  if (spec.measure.cache != CacheMode::cold && !spec.application)
    h.add(fmt::format("cache={}", to_string(spec.measure.cache)));
  if (const auto& app = spec.application) {  // what an application-level trial builds, runs and reads
    h.add(app->build.size());
    for (const auto& a : app->build) h.add(a);
    h.add(app->run.size());
    for (const auto& a : app->run) h.add(a);
    h.add(static_cast<std::uint64_t>(app->time.kind)).add(app->time.pattern).add(fmt::format("{}", app->time.to_us));
    h.add(app->workdir.string());
  }
  return h.hex();
}

}  // namespace

std::string spec_hash(const Spec& spec, int device) {
  return kernel_hash(spec, detail::kernel_compiler_identity(spec, device));
}

std::string spec_hash_without_toolchain(const Spec& spec) { return kernel_hash(spec, {}); }

std::string settings_key(const Spec& spec) {
  const Tolerance tolerance = applied_tolerance(spec);
  std::string key =
      fmt::format("timeout={}s atol={} rtol={}", spec.measure.timeout.count(), tolerance.atol, tolerance.rtol);
  // What a trial spends of its limit before its kernel could hang: a
  // shorter limit holds a stored timeout only under the same sampling.
  key += fmt::format(" warmup={}s max_time={}s min_samples={}", Seconds(spec.measure.warmup).count(),
                     spec.measure.max_time.count(), spec.measure.min_samples);
  if (spec.application) {
    if (spec.application->run_timeout) key += fmt::format(" run_timeout={}s", spec.application->run_timeout->count());
    key += fmt::format(" build_timeout={}s", spec.application->build_timeout.count());
  } else {
    key += fmt::format(" cache={}", to_string(spec.measure.cache));
    // A longer limit builds again the configs that ran out of time; the
    // default (the backend's: Triton's is longer) adds nothing, so that
    // stores made before the setting keep their failures.
    Seconds by_default = kDefaultBuildTimeout;
    try {
      by_default = backend_for_language(spec.kernel.language).kernel.default_build_timeout;
    } catch (const std::exception&) {  // a language no backend of this build serves
    }
    if (spec.kernel.build_timeout && *spec.kernel.build_timeout != by_default)
      key += fmt::format(" build_timeout={}s", spec.kernel.build_timeout->count());
  }
  return key;
}

std::optional<std::size_t> SizeReport::first_of(std::string_view origin) const {
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (trials[i].origin == origin) return i;
  return std::nullopt;
}

std::size_t SizeReport::count_of(std::string_view origin) const {
  return static_cast<std::size_t>(
      std::count_if(trials.begin(), trials.end(), [&](const TrialRecord& t) { return t.origin == origin; }));
}

std::vector<std::size_t> SizeReport::measured_on_a_busy_machine() const {
  std::vector<std::size_t> busy;
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (trials[i].cpu_wait_share >= kBusyCpuWait) busy.push_back(i);
  return busy;
}

std::vector<TrialRecord> TuneReport::all_trials() const {
  std::vector<TrialRecord> all;
  for (const auto& s : sizes) all.insert(all.end(), s.trials.begin(), s.trials.end());
  return all;
}

TuneReport untuned_report(const Spec& spec, const TuneOptions& options) {
  TuneReport r;
  r.kernel = spec.name.empty() ? spec.kernel.entry : spec.name;
  r.spec_hash = spec_hash(spec, options.device);
  r.application = spec.application.has_value();
  // As the user gave it (the tuner's own directory never changes).
  r.db = or_default(spec.output.db, options.out_dir / "tunekit.db");
  r.metrics = spec.metrics;
  r.objective = spec.objective;
  r.target_noise = spec.measure.target_noise;
  r.tolerance = applied_tolerance(spec);
  r.outputs_compared = has_compared_output(spec);
  return r;
}

TuneReport tune(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress) {
  return Run(spec, options, progress).execute();
}

}  // namespace tunekit
