// `tunekit replay`: a search replayed on recorded results, no device needed.
#include "replay_command.hpp"

#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "flags.hpp"
#include "json_output.hpp"
#include "store/detail/json_value.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/recording.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/t1.hpp"

namespace tunekit::cli {

namespace fs = std::filesystem;

namespace {

struct ReplayArgs {
  std::string recording;
  std::string t1;
  std::string spec;
  std::vector<std::string> sizes;
  std::string properties;
  std::string kernel, device;
  std::optional<std::string> strategy;  // default: a --t1 file's Search, else auto
  std::vector<std::string> options;
  std::optional<std::int64_t> max_evals;
  std::optional<double> max_fraction;
  std::string max_time;
  std::string minimize, maximize;  // the objective, when not the time
  std::uint64_t seed = 1;
  std::size_t batch = 1;
  bool json = false;
};

double ms(Microseconds t) { return t.count() / 1e3; }

int run_replay(const ReplayArgs& a) {
  // What to search: the recording's parameters with a T1 file's restrictions,
  // or a spec's parameters and constraints at one of its sizes.
  RecordingFilter filter{a.kernel, a.device, std::nullopt};
  std::optional<Spec> spec;
  if (!a.spec.empty()) spec = load_spec(a.spec);
  // A recording has no machine to read properties from: a spec's size flag
  // is checked against its size names alone.
  Bindings size = one_size_from_flags(a.sizes, spec ? &*spec : nullptr, {}, "replay");
  if (spec) {
    if (size.empty()) {
      if (spec->sizes.size() > 1)
        throw InputError({"--size"},
                         fmt::format("{} has {} sizes; pick one with --size NAME=VALUE", a.spec, spec->sizes.size()));
      if (!spec->sizes.empty()) size = spec->sizes.front();
    } else if (!spec->sizes.empty()) {
      Bindings full = spec->sizes.front();
      for (const auto& [k, v] : size) full[k] = v;
      size = full;
    }
  }
  if (!size.empty()) filter.size = size;
  std::vector<Recording> found = load_recordings(a.recording, filter);
  // A store may hold several kernels at the spec's size: the spec names its
  // own, unless --kernel picks another.
  if (spec && a.kernel.empty())
    found = recordings_of_kernel(std::move(found), spec->name.empty() ? spec->kernel.entry : spec->name);
  // A Kernel Tuner cache records one (unnamed) problem size: any size fits it.
  if (found.size() > 1) {
    std::vector<std::string> names;
    for (const auto& r : found)
      names.push_back(fmt::format("'{}' on '{}' at {}", r.kernel(), r.device(), size_key(r.size())));
    throw InputError({a.recording},
                     fmt::format("it holds {} recordings; pick one with --kernel, --device or --size: {}", found.size(),
                                 fmt::join(names, "; ")));
  }
  const Recording& recording = found.front();
  // Flags nothing would read are refused, not ignored.
  if (!a.properties.empty() && !spec)
    throw InputError({"--properties"}, "machine properties are read by a --spec's constraints; with " +
                                           std::string(a.t1.empty() ? "the recording's own parameters" : "--t1") +
                                           " nothing reads them");
  if (!a.sizes.empty() && !spec && recording.size().empty())
    throw InputError({"--size " + a.sizes.front()},
                     a.recording +
                         " records one problem size, unnamed (a Kernel Tuner cache): --size picks one of a "
                         "tunekit database's sizes, or a --spec's");
  // On stderr, as every warning here: --json's stdout stays one object.
  for (const auto& w : recording.warnings()) fmt::print(stderr, "warning: {}\n", w);

  std::vector<Parameter> params = recording.parameters();
  std::vector<Expression> constraints;
  Bindings constants;
  std::string space_from = "the recording's parameters";
  std::optional<T1Search> t1;  // a --t1 file's Search, Budget and KernelName
  if (!a.t1.empty()) {
    SpaceDefinition def = load_t1(a.t1);
    params = def.parameters;
    constraints = def.constraints;
    space_from = "the parameters and restrictions of " + a.t1;
    t1 = load_t1_search(a.t1);
    // Kernel Tuner refuses a cache of another kernel than the file's.
    if (!t1->kernel_name.empty() && recording.format() == Recording::Format::kernel_tuner &&
        !recording.kernel().empty() && recording.kernel() != t1->kernel_name)
      fmt::print(stderr,
                 "warning: {}: KernelName is '{}', but {} records kernel '{}' (its kernel_name): a T1 file of another "
                 "kernel? Kernel Tuner refuses such a cache\n",
                 t1->kernel_name_where.str(), t1->kernel_name, a.recording, recording.kernel());
  } else if (spec) {
    // Names first: a cache of another kernel is reported as such, before
    // the spec's constraints ask for properties the recording lacks.
    std::vector<std::string> names;
    for (const auto& p : spec->parameters) names.push_back(p.name);
    check_parameters(recording, names);
    params = spec->parameters;
    constraints = spec->constraints;
    space_from = "the parameters and constraints of " + a.spec;
    // Machine properties the constraints may use: --properties, else the
    // recording's own machine (a tunekit store keeps it).
    if (!a.properties.empty()) {
      constants = load_machine_file(a.properties).properties;
      check_property_names(size_names_used(*spec), constants, a.properties);
    } else if (const std::string machine = recording.machine(); !machine.empty()) {
      try {
        constants = machine_from_json(machine).properties;
      } catch (const std::exception& e) {
        throw InputError({a.recording}, std::string("bad machine description: ") + e.what());
      }
    }
    for (const auto& [k, v] : size) constants[k] = v;
  }
  const Space space(params, constraints, constants);
  // A constraint that cannot be evaluated (a division by zero) drops its
  // configs from the space: say so, as `tunekit space` and a tune do.
  for (const auto& e : space.constraint_errors()) fmt::print(stderr, "warning: {}\n", e);
  if (!space.indexable()) throw InputError({a.recording}, "the space is too large to index, so it cannot be replayed");
  if (space.size() == 0) {
    // Only a T1 file's or a spec's restrictions can empty the space: the
    // fault is theirs, not the recording's or a budget's.
    const bool from_t1 = !a.t1.empty();
    throw InputError({from_t1 ? a.t1 : a.spec},
                     fmt::format("its {} leave no valid config of the {} combinations of its parameters' values{}: "
                                 "there is nothing to replay",
                                 from_t1 ? "restrictions" : "constraints", space.cartesian_size(),
                                 from_t1 || size.empty() ? "" : " at " + size_key(size)));
  }
  // The objective: a flag's, else the spec's, else the time.
  ReplayObjective objective;
  if (spec) {
    objective.objective = spec->objective;
    objective.metrics = spec->metrics;
    objective.size = size;
  }
  const std::vector<std::string>& tuned_for = recording.tuned_for();
  if (!a.minimize.empty() || !a.maximize.empty()) {
    const bool up = !a.maximize.empty();
    objective.objective = Objective{up ? a.maximize : a.minimize, up, SourceLocation{up ? "--maximize" : "--minimize"}};
    if (up && objective.objective.is_time())
      throw InputError({"--maximize"}, "time can only be minimised (name a recorded number to maximise)");
  } else if (!spec && tuned_for.size() == 1 && tuned_for.front() != "time") {
    fmt::print(stderr,
               "note: {} was tuned for '{}'; this replay ranks configs by time (--maximize or --minimize '{}' ranks "
               "them by it)\n",
               a.recording, tuned_for.front(), tuned_for.front());
  } else if (!spec && tuned_for.size() > 1) {
    // Kernel Tuner's tune of several objectives at once (nsga2, nsga3)
    // has no one best config; a replay ranks by one objective.
    fmt::print(stderr,
               "note: {} was tuned for {} objectives at once ('{}'); this replay ranks configs by one, the time "
               "(--maximize or --minimize NAME ranks them by another)\n",
               a.recording, tuned_for.size(), fmt::join(tuned_for, "', '"));
  }
  const ReplayTable table(recording, space, objective);
  table.require_complete(spec            ? ReplayTable::SpaceFrom::spec
                         : !a.t1.empty() ? ReplayTable::SpaceFrom::t1
                                         : ReplayTable::SpaceFrom::recording);
  const std::uint64_t n = space.size();

  // The strategy and the budget: the flags', else a --t1 file's Search and
  // Budget (Kernel Tuner's tune_kernel_T1 reads both), taken as `tunekit
  // tune` takes them from one.
  SearchSettings search;
  if (t1) search = t1->search;
  // The file's strategy by the name it gives, so that an option of Kernel
  // Tuner's under Kernel Tuner's name is judged as such.
  ReplaySettings settings;
  settings.strategy = search.strategy_alias.empty() ? search.strategy : search.strategy_alias;
  if (a.strategy) {
    // The file's options are for the file's strategy, and so is a budget
    // that is only where that strategy stops by itself.
    if (strategies().get(*a.strategy, {"--strategy"}).name != search.strategy) {
      search.options.clear();
      if (search.budget_is_strategys_stop) {
        search.max_evaluations.reset();
        search.max_fraction.reset();
      }
    }
    settings.strategy = *a.strategy;
  } else if (t1) {
    for (const auto& w : t1->search_warnings) fmt::print(stderr, "warning: {}\n", w);
  }
  settings.options = search.options;
  for (auto& o : parse_option_assignments(a.options, "--option")) settings.options.push_back(std::move(o));
  if (a.max_evals) {
    if (*a.max_evals < 1)
      throw InputError(
          {"--max-evals"},
          fmt::format("a budget of {} evaluations: expected 1 to {} (the space's valid configs)", *a.max_evals, n));
    search.max_evaluations = static_cast<std::size_t>(*a.max_evals);
    search.max_evaluations_where = {"--max-evals"};
    search.max_fraction.reset();  // the flag's budget replaces the file's
  }
  if (a.max_fraction) {
    search.max_fraction = fraction_flag("--max-fraction", *a.max_fraction);
    search.max_evaluations.reset();
  }
  if (!a.max_time.empty()) search.max_time = duration_flag("--max-time", a.max_time, true);
  if (t1 && !a.max_evals && !a.max_fraction && a.max_time.empty())
    for (const auto& w : t1->budget_warnings) fmt::print(stderr, "warning: {}\n", w);
  // Kernel Tuner's strategy stops by itself when the space runs out.
  if (search.max_evaluations && search.budget_is_strategys_stop && !a.max_evals)
    search.max_evaluations = std::min<std::uint64_t>(*search.max_evaluations, n);
  if (search.max_evaluations) {
    if (*search.max_evaluations > n)
      throw InputError(search.max_evaluations_where,
                       fmt::format("a budget of {} evaluations: expected 1 to {} (the space's valid configs)",
                                   *search.max_evaluations, n));
    settings.max_evaluations = *search.max_evaluations;
  }
  if (search.max_fraction) {
    // Both a count and a share (a T1 file's): the smaller holds, as in a tune.
    const std::uint64_t share = evaluations_for_fraction(*search.max_fraction, n);
    settings.max_evaluations = std::min(share, settings.max_evaluations.value_or(share));
  }
  settings.max_time = search.max_time;
  settings.seed = a.seed;
  settings.batch = a.batch;
  const ReplayRun run = replay(table, settings);
  if (!run.ended_early.empty()) fmt::print(stderr, "warning: {}\n", run.ended_early);

  if (a.json) {
    nlohmann::ordered_json j;
    j["strategy"] = run.strategy;
    j["evaluations"] = run.evaluations;
    j["best_time"] = run.best_time ? nlohmann::ordered_json(ms(*run.best_time)) : nlohmann::ordered_json(nullptr);
    j["optimum_time"] = ms(run.optimum_time);
    j["fraction_of_optimum"] = run.fraction_of_optimum;
    if (!table.objective().is_time()) {
      j["objective"] = table.objective().describe();
      j["best_value"] = run.best_value ? nlohmann::ordered_json(*run.best_value) : nlohmann::ordered_json(nullptr);
      j["optimum_value"] = run.optimum_value;
    }
    j["strategy_cpu_seconds"] = run.strategy_cpu.count();
    j["time_unit"] = "ms";
    j["failed"] = run.failed;
    j["budget"] =
        settings.max_evaluations ? nlohmann::ordered_json(*settings.max_evaluations) : nlohmann::ordered_json(nullptr);
    j["space_size"] = n;
    j["seed"] = a.seed;
    j["simulated_seconds"] = run.simulated.count();
    j["recording"] = a.recording;
    j["format"] = to_string(recording.format());
    j["kernel"] = recording.kernel();
    j["device"] = recording.device();
    if (run.best) j["best_config"] = detail::config_to_json(*run.best);
    nlohmann::ordered_json trace = nlohmann::ordered_json::array();
    for (const auto& t : run.trace)
      trace.push_back(t ? nlohmann::ordered_json(ms(*t)) : nlohmann::ordered_json(nullptr));
    j["trace"] = trace;
    if (!table.objective().is_time()) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (const auto& v : run.values)
        values.push_back(v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr));
      j["objective_trace"] = values;
    }
    nlohmann::ordered_json configs = nlohmann::ordered_json::array();
    for (const auto& c : run.configs) configs.push_back(detail::config_to_json(c));
    j["trace_configs"] = configs;
    fmt::print("{}\n", json_text(j));
    return 0;
  }
  fmt::print("replay of {} ({}", a.recording, to_string(recording.format()));
  if (!recording.kernel().empty()) fmt::print(", kernel {}", recording.kernel());
  if (!recording.device().empty()) fmt::print(" on {}", recording.device());
  fmt::print(")\n");
  fmt::print("space:     {} valid configs, from {}\n", n, space_from);
  fmt::print("strategy:  {}, seed {}, {} evaluation{} ({:.2f}% of the space; {} failed)\n", run.strategy, a.seed,
             run.evaluations, run.evaluations == 1 ? "" : "s",
             100.0 * static_cast<double>(run.evaluations) / static_cast<double>(n), run.failed);
  // By the objective: "12.3 GFLOP/s, 0.5 ms" where it is not the time.
  const auto by = [&](std::optional<double> value, Microseconds time) {
    if (table.objective().is_time()) return fmt::format("{:.6g} ms", ms(time));
    return fmt::format("{:.6g} {}, {:.6g} ms", value.value_or(std::nan("")), table.objective().name, ms(time));
  };
  if (!table.objective().is_time()) fmt::print("objective: {}\n", table.objective().describe());
  if (run.best) fmt::print("best:      {} {}\n", by(run.best_value, *run.best_time), run.best->str());
  else fmt::print("best:      none (every config tried failed)\n");
  fmt::print("optimum:   {}; fraction of optimum {:.4f}\n", by(run.optimum_value, run.optimum_time),
             run.fraction_of_optimum);
  fmt::print("cost:      strategy CPU {:.3f} ms ({:.4f} ms per evaluation); simulated tuning time {:.1f} s\n",
             run.strategy_cpu.count() * 1e3,
             run.evaluations ? run.strategy_cpu.count() * 1e3 / static_cast<double>(run.evaluations) : 0.0,
             run.simulated.count());
  return 0;
}

}  // namespace

SubCommand add_replay_command(CLI::App& app) {
  auto a = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand(
      "replay",
      "Replay a search on recorded results: each config the strategy proposes is looked up in RECORDING\n"
      "(a Kernel Tuner cache, original or T4, gzipped or not, or a tunekit results DB) instead of run.\n"
      "A config recorded as failed is a failed evaluation; its recorded compile and run time are its cost.");
  cmd->add_option("RECORDING", a->recording, "Kernel Tuner cache (.json, .json.gz, T4) or tunekit results DB")
      ->required()
      ->check(CLI::ExistingFile);
  auto* t1 =
      cmd->add_option("--t1", a->t1,
                      "Kernel Tuner T1 file whose parameters, values and restrictions make the space (its parameter "
                      "names those the recording has; a valid config the recording lacks is an error); its Search "
                      "and Budget are the strategy and budget where no flag gives them, as `tunekit tune` takes "
                      "them")
          ->check(CLI::ExistingFile);
  cmd->add_option("--spec", a->spec, "tunekit spec whose parameters and constraints make the space")
      ->check(CLI::ExistingFile)
      ->excludes(t1);
  add_size_flag(cmd, a->sizes, "Problem size NAME=VALUE: the spec's size to replay, and the DB recording to use");
  cmd->add_option("--properties", a->properties,
                  "Machine description (tunekit devices --json) for a spec's constraints (default: the DB's machine)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--kernel", a->kernel, "DB recordings: the kernel's name");
  cmd->add_option("--device", a->device, "DB recordings: the device's name");
  cmd->add_option("--strategy", a->strategy,
                  "Search strategy (`tunekit plugins` lists them; default: the --t1 file's Search, else auto)");
  cmd->add_option("--option", a->options, "An option of the strategy, NAME=VALUE (repeat for several)");
  auto* evals = cmd->add_option("--max-evals", a->max_evals, "Budget: distinct configs evaluated, failures included");
  cmd->add_option("--max-fraction", a->max_fraction, "Budget as a share of the valid configs, e.g. 0.02 (rounded up)")
      ->excludes(evals);
  cmd->add_option("--max-time", a->max_time,
                  "Budget in simulated time (recorded compile + run; every config of the space needs its recorded "
                  "times), e.g. 10m");
  auto* minimize = cmd->add_option("--minimize", a->minimize,
                                   "Rank configs by this number instead of the time (Kernel Tuner's objective): one "
                                   "recorded with each config (a cache's fields, a T4 file's measurements) or a "
                                   "metric of --spec (default: the spec's objective, else time)");
  cmd->add_option("--maximize", a->maximize,
                  "Rank configs by this number, higher is better (Kernel Tuner's objective with "
                  "objective_higher_is_better), e.g. --maximize GFLOP/s")
      ->excludes(minimize);
  cmd->add_option("--seed", a->seed, "Seed of the strategy's random choices")->capture_default_str();
  cmd->add_option("--batch", a->batch, "Configs asked of the strategy at a time (the tuner asks for a batch)")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_flag("--json", a->json,
                "Print one JSON object: strategy, evaluations, best_time, optimum_time, fraction_of_optimum, "
                "strategy_cpu_seconds, trace (times in evaluation order, null for a failed config), trace_configs "
                "(the configs in the same order), and more; "
                "times in ms. With another objective: objective, best_value, optimum_value, objective_trace");
  cmd->footer(
      "Without a budget (a flag's, or a --t1 file's) the whole space is evaluated. Exit status: 0, or 1 for\n"
      "bad input (the message names the file or the flag).");
  return {cmd, [a] { return run_replay(*a); }};
}

}  // namespace tunekit::cli
