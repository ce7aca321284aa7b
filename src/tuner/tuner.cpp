#include "tunekit/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/detail/hash.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/seeds.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_file(const fs::path& p, const SourceLocation& where) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw InputError(where, "cannot read '" + p.string() + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Compiler logs can be long; the store keeps the head, where the first
// error is.
std::string clip(std::string text, std::size_t limit = 8000) {
  if (text.size() > limit) text = text.substr(0, limit) + "\n[... truncated]";
  return text;
}

fs::path or_default(const fs::path& given, const fs::path& fallback) { return given.empty() ? fallback : given; }

// Everything one size's search needs, decided before the first build so the
// progress bar knows the total.
struct SizePlan {
  Bindings size;
  std::unique_ptr<Space> space;
  std::unique_ptr<Strategy> strategy;  // the seeds first, then the search
  std::optional<Config> baseline;
  bool baseline_is_spec_default = false;
  // The seed providers' configs valid here, in the order they are tried,
  // each with its provider (for the origin it records).
  std::vector<std::pair<Config, const SeedProvider*>> seeds;
  std::size_t planned = 0;
  Bindings constants;  // the size and the machine's properties

  // Why `c` runs in this size's search.
  std::string origin_of(const Config& c) const {
    for (const auto& [seed, provider] : seeds)
      if (seed == c) return std::string(provider->origin());
    if (baseline && *baseline == c) return std::string(kOriginBaseline);
    return std::string(kOriginSearch);
  }
};

// What a strategy learns from a trial: its status and, when it ran
// correctly, its median time.
Outcome outcome_of(const TrialRecord& t) {
  Outcome o;
  o.status = t.status;
  if (t.status == Status::ok) o.cost = t.stats.median.count();
  return o;
}

class Run {
 public:
  Run(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress)
      : spec_(spec), options_(options), progress_(progress), start_(Clock::now()) {}

  TuneReport execute() {
    BackendOptions backend_options;
    backend_options.work_dir = options_.out_dir / "cache";
    backend_options.rebuild = options_.fresh;
    backend_options.application = spec_.application;
    if (!options_.replay.empty()) {
      backend_options.recording = options_.replay;
      backend_options.recording_kernel = spec_.name.empty() ? spec_.kernel.entry : spec_.name;
      for (const auto& p : spec_.parameters) backend_options.parameters.push_back(p.name);
      backend_ = backends().get("replay").make(backend_options);
    } else {
      backend_ = make_backend(spec_.kernel.language, backend_options);
    }
    const MachineInfo& machine = backend_->machine();
    report_.device = machine.device;
    report_.spec_hash = spec_hash(spec_);
    machine_json_ = machine_to_json(machine);
    report_.kernel = spec_.name.empty() ? spec_.kernel.entry : spec_.name;
    report_.application = spec_.application.has_value();
    report_.db = or_default(spec_.output.db, options_.out_dir / "tunekit.db");
    store_ = std::make_unique<Store>(report_.db);
    source_ = read_file(spec_.kernel.source, {spec_.file.string()});
    builder_ = backend_->make_builder();
    evaluator_ = backend_->make_evaluator();

    if (spec_.reference.kind == ReferenceSpec::Kind::function) {
      BuildResult r = builder_->build(make_reference_input(spec_));
      if (r.status != Status::ok)
        throw InputError({spec_.file.string()},
                         fmt::format("the reference function '{}' does not build:\n{}", spec_.reference.entry, r.log));
      reference_function_ = r.artifact;
    }

    providers_ = seed_providers(spec_);
    for (const auto& p : providers_) report_.seeded_by.emplace_back(p->origin());
    if (!options_.fresh) remember_stored_sizes();
    std::vector<SizePlan> plans;
    for (const auto& size : spec_.sizes) plans.push_back(plan(size, machine));
    for (const auto& p : plans) total_ += p.planned;

    for (auto& p : plans) report_.sizes.push_back(tune_size(p, machine));
    report_.wall = Clock::now() - start_;
    return report_;
  }

 private:
  SizePlan plan(const Bindings& size, const MachineInfo& machine) {
    SizePlan p;
    p.size = size;
    Bindings constants = machine.properties;
    for (const auto& [k, v] : size) constants[k] = v;  // a size named like a property wins
    p.space = std::make_unique<Space>(spec_.parameters, spec_.constraints, constants);
    if (spec_.configs.empty()) {
      std::optional<std::uint64_t> budget;
      if (spec_.search.max_evaluations) budget = *spec_.search.max_evaluations;
      p.strategy = make_strategy(spec_.search.strategy, *p.space, spec_.search.seed, budget, spec_.search.options,
                                 spec_.search.strategy_where, spec_.search.max_time.has_value());
    } else {
      p.strategy = make_list(spec_.configs);
    }
    p.constants = constants;
    // Seeds that depend on the sizes tuned before (transfer) are asked for
    // when the size's turn comes (seed_learned); the others now.
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
    } else if (!spec_.configs.empty()) {
      for (const auto& c : spec_.configs)
        if (p.space->contains(c)) {
          p.baseline = c;
          break;
        }
    } else if (auto first = p.space->enumerate(1); !first.empty()) {
      p.baseline = first.front();
    }
    p.planned = static_cast<std::size_t>(std::min<std::uint64_t>(p.strategy->planned().value_or(0), SIZE_MAX - extra)) + extra;
    if (p.baseline && spec_.default_config && p.baseline_is_spec_default && !spec_.configs.empty()) {
      // the seeded strategy counts it already
      bool listed = std::any_of(p.seeds.begin(), p.seeds.end(), [&](const auto& s) { return s.first == *p.baseline; });
      for (const auto& c : spec_.configs) listed = listed || c == *p.baseline;
      if (!listed) ++p.planned;
    }
    if (spec_.search.max_evaluations) p.planned = std::min(p.planned, *spec_.search.max_evaluations);
    return p;
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
      const SeedContext context{*p.space, p.constants, p.size, tuned_};
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

  // The fastest configs of each size this spec was tuned at on this device,
  // from the store: what transfer seeds the first sizes of a rerun with.
  void remember_stored_sizes() {
    std::map<std::string, std::vector<const TrialRecord*>> by_size;
    const std::vector<TrialRecord> stored = store_->trials(report_.spec_hash);
    for (const auto& t : stored)
      if (t.device == report_.device && t.status == Status::ok) by_size[size_key(t.size)].push_back(&t);
    for (auto& [key, trials] : by_size) remember(trials.front()->size, trials);
  }

  void remember(const Bindings& size, std::vector<const TrialRecord*> trials) {
    std::stable_sort(trials.begin(), trials.end(),
                     [](const TrialRecord* a, const TrialRecord* b) { return a->stats.median < b->stats.median; });
    TunedSize t;
    t.size = size;
    for (std::size_t i = 0; i < trials.size() && i < kRemembered; ++i) t.fastest.push_back(trials[i]->config);
    auto same = std::find_if(tuned_.begin(), tuned_.end(), [&](const TunedSize& x) { return size_key(x.size) == size_key(size); });
    if (same != tuned_.end()) *same = std::move(t);
    else tuned_.push_back(std::move(t));
  }

  // What a trial ran (command backend), for the results table; empty when
  // it never ran.
  std::vector<std::string> command_of(const TrialRecord& t, const MachineInfo& machine) const {
    if (t.status == Status::invalid || t.status == Status::compile_error) return {};
    Bindings values = machine.properties;
    for (const auto& [k, v] : t.size) values[k] = v;
    for (const auto& [k, v] : t.config) values[k] = v;
    try {
      return backend_->command_line(make_build_input(spec_, source_, t.config), values);
    } catch (const std::exception&) {
      return {};
    }
  }

  // The time budget counts the backend's own clock when it has one (a
  // replay's recorded times), else the wall clock.
  bool out_of_time() const {
    if (!spec_.search.max_time) return false;
    const auto simulated = backend_->clock();
    return (simulated ? *simulated : Seconds(Clock::now() - start_)) >= *spec_.search.max_time;
  }

  void notify(std::string current) {
    if (!progress_) return;
    ProgressEvent e;
    e.done = done_;
    e.total = std::max(total_, done_);
    e.elapsed = Clock::now() - start_;
    e.best = best_;
    e.current = std::move(current);
    progress_(e);
  }

  TrialRecord blank_record(const SizePlan& p, const Config& c) const {
    TrialRecord r;
    r.spec_hash = report_.spec_hash;
    r.kernel = spec_.name.empty() ? spec_.kernel.entry : spec_.name;
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
    seed(p);

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
      const LaunchSpec& own = spec_.reference.launch;
      reference = ReferenceRun{*reference_function_, spec_.reference.entry,
                               resolve_launch(own.grid.empty() ? spec_.kernel.launch : own, baseline_env)};
    }
    if (spec_.reference.kind == ReferenceSpec::Kind::default_config && p.baseline) {
      BuildResult r = builder_->build(make_build_input(spec_, source_, *p.baseline));
      if (r.status != Status::ok)
        throw InputError({spec_.file.string()}, fmt::format("the default config {} is the reference, but it does not build:\n{}",
                                                            p.baseline->str(), r.log));
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
    const std::size_t batch = std::max(2u, options_.jobs ? options_.jobs : std::thread::hardware_concurrency()) * 2;
    const std::size_t budget = spec_.search.max_evaluations.value_or(SIZE_MAX);
    std::size_t proposed = 0;  // configs handed to a batch so far

    // The next batch: the strategy's proposals, minus what this run did,
    // within the evaluation budget.
    auto next_batch = [&]() -> std::unique_ptr<Batch> {
      if (out_of_time() || proposed >= budget) return nullptr;
      while (queue.size() < batch) {
        const std::size_t want = batch - queue.size();
        auto more = p.strategy->next(want);
        if (more.empty()) break;
        // Fewer than asked: the strategy wants these results first.
        const bool waits = more.size() < want;
        for (auto& c : more)
          if (!seen.count(c.key())) queue.push_back(std::move(c));
        if (waits) break;
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
      if (!overlap) {
        following = next_batch();
        if (following) start_build(*following, false);
      }
      current = std::move(following);
    }

    for (std::size_t i = 0; i < sr.trials.size(); ++i) {
      const auto& t = sr.trials[i];
      if (t.status == Status::ok && (!sr.best || t.stats.median < sr.trials[*sr.best].stats.median)) sr.best = i;
      if (p.baseline && t.config == *p.baseline) sr.baseline = i;
    }
    sr.commands.resize(sr.trials.size());
    for (std::size_t i = 0; i < sr.trials.size(); ++i) sr.commands[i] = command_of(sr.trials[i], machine);
    std::vector<const TrialRecord*> ok;
    for (const auto& t : sr.trials)
      if (t.status == Status::ok) ok.push_back(&t);
    if (!ok.empty()) remember(p.size, ok);
    return sr;
  }

  // Records from the store have an id; new ones are saved first. Each trial
  // carries the origin it has in this run; a resumed trial whose origin is a
  // seed provider's is stored again, so that the store says why it ran last.
  void record(TrialRecord rec, SizeReport& sr, const SizePlan& p) {
    const std::string origin = p.origin_of(rec.config);
    const bool reflag = rec.id != 0 && origin != kOriginSearch && rec.origin != origin;
    rec.origin = origin;
    if (rec.id == 0 || reflag) {
      const SeedProvider* provider = nullptr;
      for (const auto& [seed, from] : p.seeds)
        if (seed == rec.config) provider = from;
      store_->put(rec, provider && provider->one_per_size());
    }
    p.strategy->observe(rec.config, outcome_of(rec));
    if (rec.status == Status::ok && (!best_ || rec.stats.median < *best_)) best_ = rec.stats.median;
    ++done_;
    sr.trials.push_back(std::move(rec));
    notify(fmt::format("No.{}: {}", sr.trials.size(), sr.trials.back().config.str()));
  }

  // A batch of configs on its way through build and evaluation.
  struct Batch {
    std::vector<Config> configs;
    std::vector<std::optional<TrialRecord>> ready;  // resumed or invalid: no build needed
    std::vector<BuildInput> inputs;
    std::vector<std::size_t> input_of;  // config index -> input index
    std::future<std::vector<BuildResult>> built;
  };

  std::unique_ptr<Batch> prepare(const SizePlan& p, std::vector<Config> configs) {
    auto batch = std::make_unique<Batch>();
    Batch& b = *batch;
    b.configs = std::move(configs);
    b.ready.resize(b.configs.size());
    b.input_of.assign(b.configs.size(), SIZE_MAX);
    for (std::size_t i = 0; i < b.configs.size(); ++i) {
      const Config& c = b.configs[i];
      if (!options_.fresh)
        if (auto old = store_->find(report_.spec_hash, report_.device, p.size, c)) {
          b.ready[i] = std::move(*old);
          ++report_.resumed;
          continue;
        }
      if (auto why = p.space->why_invalid(c)) {
        TrialRecord r = blank_record(p, c);
        r.status = Status::invalid;
        r.error = *why;
        b.ready[i] = std::move(r);
        continue;
      }
      b.input_of[i] = b.inputs.size();
      b.inputs.push_back(make_build_input(spec_, source_, c));
    }
    return batch;
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
      if (b.ready[i]) {
        record(std::move(*b.ready[i]), sr, p);
        continue;
      }
      const Config& config = b.configs[i];
      TrialRecord rec = blank_record(p, config);
      const BuildResult& br = built[b.input_of[i]];
      rec.build_time = br.time;
      if (br.status != Status::ok) {
        rec.status = br.status;
        rec.error = clip(br.log);
        record(std::move(rec), sr, p);
        continue;
      }
      Bindings trial_env = env;
      for (const auto& [k, v] : config) trial_env[k] = v;
      TrialRequest rq;
      rq.artifact = br.artifact;
      rq.entry = b.inputs[b.input_of[i]].entry;
      rq.arguments = resolve_arguments(spec_.arguments, trial_env);
      rq.launch = resolve_launch(spec_.kernel.launch, trial_env);
      // The reference itself is not checked against itself.
      if (reference && reference->artifact.hash != br.artifact.hash) rq.reference = reference;
      rq.tolerance = spec_.tolerance;
      rq.measure = spec_.measure;
      rq.seed = spec_.search.seed;
      rq.values = trial_env;
      notify(fmt::format("measuring {}", config.str()));
      const auto t0 = Clock::now();
      TrialResult res = evaluator_->evaluate(rq);
      report_.measure += Clock::now() - t0;
      report_.device_busy += res.device_busy;
      rec.status = res.status;
      rec.error = clip(res.error);
      rec.samples = std::move(res.samples);
      rec.stats = res.stats;
      rec.verification = res.verification;
      record(std::move(rec), sr, p);
    }
  }

  const Spec& spec_;
  const TuneOptions& options_;
  const ProgressCallback& progress_;
  Clock::time_point start_;
  TuneReport report_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Builder> builder_;
  std::unique_ptr<Evaluator> evaluator_;
  std::unique_ptr<Store> store_;
  std::vector<std::unique_ptr<SeedProvider>> providers_;
  static constexpr std::size_t kRemembered = 16;  // fastest configs kept per tuned size
  std::vector<TunedSize> tuned_;                  // sizes tuned so far (and stored ones), for transfer
  std::optional<Artifact> reference_function_;
  std::string source_;
  std::string machine_json_;
  std::size_t done_ = 0, total_ = 0;
  std::optional<Microseconds> best_;
  std::mutex build_time_mutex_;
};

}  // namespace

std::string spec_hash(const Spec& spec) {
  detail::Hasher h;
  h.add(read_file(spec.kernel.source, {spec.file.string()}));
  h.add(spec.kernel.entry).add(spec.kernel.language).add(spec.kernel.compiler);
  h.add(static_cast<std::uint64_t>(spec.kernel.injection));
  for (const auto& f : spec.kernel.flags) h.add(f);
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
  }
  h.add(static_cast<std::uint64_t>(spec.reference.kind)).add(spec.reference.entry);
  if (spec.reference.kind == ReferenceSpec::Kind::function && !spec.reference.source.empty())
    h.add(read_file(spec.reference.source, {spec.file.string()}));
  for (const auto& f : spec.reference.flags) h.add(f);
  if (spec.reference.kind == ReferenceSpec::Kind::default_config && spec.default_config)
    h.add(spec.default_config->key());
  h.add(fmt::format("{} {}", spec.tolerance.atol, spec.tolerance.rtol));
  h.add(spec.search.seed);  // the seed fills the inputs
  // Hot, cold and cold-read times are different measurements, so none may
  // resume another's trials. cold, the default, adds nothing: specs keep the
  // hash they had before the mode took part (applications: no flush precedes
  // their runs, so the mode means nothing there).
  if (spec.measure.cache != CacheMode::cold && !spec.application) h.add(fmt::format("cache={}", to_string(spec.measure.cache)));
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

std::optional<std::size_t> SizeReport::first_of(std::string_view origin) const {
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (trials[i].origin == origin) return i;
  return std::nullopt;
}

std::size_t SizeReport::count_of(std::string_view origin) const {
  return static_cast<std::size_t>(
      std::count_if(trials.begin(), trials.end(), [&](const TrialRecord& t) { return t.origin == origin; }));
}

std::vector<TrialRecord> TuneReport::all_trials() const {
  std::vector<TrialRecord> all;
  for (const auto& s : sizes) all.insert(all.end(), s.trials.begin(), s.trials.end());
  return all;
}

TuneReport tune(const Spec& spec, const TuneOptions& options, const ProgressCallback& progress) {
  return Run(spec, options, progress).execute();
}

}  // namespace tunekit
