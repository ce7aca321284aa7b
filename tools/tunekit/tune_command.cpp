// `tunekit tune`: build the spec from the file and the flags, tune it, and
// run the output writers.
#include "tune_command.hpp"

#include <signal.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/detail/text.hpp"
#include "distribute/detail/job.hpp"
#include "flags.hpp"
#include "progress.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/distribute.hpp"
#include "tunekit/output.hpp"
#include "tunekit/report.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/store.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {

namespace fs = std::filesystem;

namespace {

// A results database that cannot be one (a folder, a file of another kind)
// is the input's error, named where it was given, before anything is built;
// an empty file becomes a store.
// Returns whether it opened the store and checked its whole file: the
// tuner's open then checks it no more (TuneOptions::store_checked).
bool check_store_path(const fs::path& db, const std::string& given_by) {
  std::error_code ec;
  if (fs::is_directory(db, ec))
    throw InputError({given_by},
                     fmt::format("{} is a folder; expected the path of a results database (a file)", db.string()));
  // SQLite would open a device or a pipe, fail later, and leave its
  // journal beside it (/dev/null-journal).
  if (fs::exists(db, ec) && !fs::is_regular_file(db, ec))
    throw InputError({given_by}, fmt::format("{} is not a regular file (a device, a pipe or a socket); expected the "
                                             "path of a results database",
                                             db.string()));
  // SQLite writes its journal beside the database.
  const fs::path folder = db.parent_path().empty() ? fs::path(".") : db.parent_path();
  if (fs::is_directory(folder, ec) && ::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError({given_by}, fmt::format("cannot tune into {}: its folder is not writable ({}); expected a "
                                             "database in a folder you may write to",
                                             db.string(), strerror(errno)));
  if (fs::exists(db, ec) && ::access(db.c_str(), W_OK) != 0)
    throw InputError({given_by}, fmt::format("cannot tune into {}: {}; expected a database you may write to",
                                             db.string(), strerror(errno)));
  if (!fs::exists(db, ec) || fs::file_size(db, ec) == 0 || ec) return false;
  try {
    const Store probe(db, Store::Access::read_only);
    return true;
  } catch (const EmptyStoreError&) {
    // Another tune (another MPI rank) is creating it, or it was made empty:
    // this tune makes its table.
  } catch (const OldStoreError&) {
    // The tune's own (writing) open migrates it, and checks it first.
  } catch (const std::runtime_error& e) {
    throw InputError({given_by}, fmt::format("cannot tune into {}: {}", db.string(), e.what()));
  }
  return false;
}

struct TuneArgs {
  std::string target;
  std::vector<std::string> sizes;
  std::vector<std::string> axes;
  std::vector<std::string> where;  // constraints for this run, on top of the spec's
  std::optional<std::string> strategy;
  std::vector<std::string> options;  // the strategy's, NAME=VALUE
  std::vector<std::string> outputs;  // writer names; empty: the writers' defaults
  std::optional<std::int64_t> max_evals;
  std::optional<double> max_fraction;
  std::string max_time;
  std::string replay;
  bool no_transfer = false;
  std::optional<std::uint64_t> seed;  // unsigned as select's --seed, which finds this tune again
  std::uint64_t jobs = 0;  // checked against kMaxJobs before it is narrowed
  std::optional<std::uint64_t> device_index;  // checked against the backend's devices before it is narrowed
  std::string out_dir = "tunekit-out";
  std::string db, csv, json, html;
  bool fresh = false;
  bool retry_failed = false;
  bool keep_going = false;
  KernelFlags kernel;  // --compiler, --flags, --reference, --atol, --rtol
  std::string timeout;
  std::string cache;
  std::string properties;  // a machine's JSON (tunekit devices --json) for the constraints
  std::string early_stop;
  std::string confirm;
  bool no_progress = false;
  bool no_rules = false;
  // Bare sources (no spec).
  std::string entry;
  std::vector<std::string> args;
};

// The size flags (-s, -a) as typed, and the names they may give a value
// (those the spec uses), for the checks that need the machine.
struct SizeFlags {
  std::set<std::string> known_sizes;
  std::vector<Parameter> sizes;  // each flag's name and values; `where` is the flag as typed
};

// Each size flag against the spec and the machine the constraints see.
void check_size_flags(const Spec& spec, const SizeFlags& flags, const MachineInfo& machine) {
  for (const auto& p : flags.sizes)
    check_size_flag(spec, flags.known_sizes, machine.properties, p.where.file, p.name, p.values);
}

// A --properties file stands for another machine: a property the spec reads
// that the file lacks would be this machine's, a mix of the two, which
// `tunekit space --properties` refuses too.
void check_properties_complete(const Spec& spec, const Bindings& given, const MachineInfo& machine,
                               const std::string& file) {
  std::vector<std::string> lacking;
  for (const std::string& name : size_names_used(spec)) {
    const bool size =
        std::any_of(spec.sizes.begin(), spec.sizes.end(), [&](const Bindings& b) { return b.count(name); });
    if (!size && !given.count(name) && machine.properties.count(name)) lacking.push_back("'" + name + "'");
  }
  if (!lacking.empty())
    throw InputError(
        SourceLocation{file, 0, 0},
        fmt::format("the spec reads the machine propert{} {}, which this file does not give; this "
                    "machine's would stand in for the other machine's: add {} to the file (`tunekit "
                    "devices --json` on that machine lists every property)",
                    lacking.size() == 1 ? "y" : "ies", either(lacking), lacking.size() == 1 ? "it" : "them"));
}

// The device a tune runs on: --device-index's, else the spec's (a T1
// file's Device.DeviceId), else the first, checked against the backend's
// devices (device_index); under mpirun each rank's own.
int device_to_tune(const TuneArgs& t, const Spec& spec, bool under_mpi) {
  if (t.device_index && under_mpi)
    throw InputError({"--device-index"},
                     "is not taken under mpirun: each rank tunes the device whose index is its own among the "
                     "ranks on its host (the host's first rank device 0, the next device 1, ...); leave the flag "
                     "out, and pick the devices with the launcher (CUDA_VISIBLE_DEVICES per rank)");
  if (t.device_index && !t.replay.empty())
    throw InputError({"--device-index"},
                     "does not apply with --replay: the recorded results are served, and no "
                     "kernel runs on a device");
  if (under_mpi || !t.replay.empty()) return 0;  // the rank's own (mpi_job.cpp), or none
  return device_index(spec, t.device_index);
}

Spec build_spec(const TuneArgs& t, SizeFlags& flags) {
  const fs::path target = t.target;
  Spec spec = spec_of_target(target, t.entry, t.args);
  apply_kernel_flags(spec, t.kernel);
  // The size flags' names are checked once the machine is known
  // (check_size_flags): a machine property is no size.
  flags.known_sizes = size_names_used(spec);
  if (spec.sizes.empty()) spec.sizes.emplace_back();
  // -s NAME=VALUE is an axis of one value: it replaces NAME in every size,
  // and sizes that then differ in nothing are one size, tuned once.
  auto [overrides, axes] = size_axes_from_flags(t.sizes, t.axes);
  for (const auto* flagged : {&overrides, &axes})
    flags.sizes.insert(flags.sizes.end(), flagged->begin(), flagged->end());
  spec.sizes = apply_axes(apply_axes(spec.sizes, overrides), axes);
  // A narrower search for this run only: the results stay the spec's, since a
  // constraint decides which configs run, not what a config measures.
  for (const auto& w : t.where) spec.constraints.push_back(Expression::parse(w, SourceLocation{"--where " + w}));
  if (t.strategy) {
    const StrategyInfo& info = strategies().get(*t.strategy, {"--strategy"});
    // The spec's options are for the spec's strategy, and so is a T1
    // file's budget that is only where its strategy stops by itself.
    if (info.name != spec.search.strategy) {
      spec.search.options.clear();
      if (spec.search.budget_is_strategys_stop) {
        spec.search.max_evaluations.reset();
        spec.search.max_fraction.reset();
        spec.search.budget_is_strategys_stop = false;
      }
    }
    spec.search.strategy = info.name;
    spec.search.strategy_where = {"--strategy"};
    spec.search.strategy_alias = *t.strategy == info.name ? "" : *t.strategy;
  }
  if ((t.strategy || !t.options.empty()) && !spec.configs.empty())
    throw InputError({t.strategy ? "--strategy" : "--option"},
                     "the spec lists its configs (configs:), which are tried in order: no strategy picks among "
                     "them; leave the flag out, or give a spec without the list");
  for (auto& o : parse_option_assignments(t.options, "--option")) spec.search.options.push_back(std::move(o));
  (void)strategy_options(strategies().get(spec.search.strategy), spec.search.options, spec.search.strategy_alias);
  if (t.max_evals) {
    if (*t.max_evals < 1)
      throw InputError({"--max-evals"}, fmt::format("{} is not a number of trials; give 1 or more (leave the flag out "
                                                    "for no limit)",
                                                    *t.max_evals));
    spec.search.max_evaluations = static_cast<std::size_t>(*t.max_evals);
    spec.search.max_evaluations_where = {"--max-evals"};
    spec.search.max_fraction.reset();  // the flag's budget replaces the spec's
  }
  if (t.max_fraction) {
    spec.search.max_fraction = fraction_flag("--max-fraction", *t.max_fraction);
    spec.search.max_evaluations.reset();
  }
  if (!t.max_time.empty()) spec.search.max_time = duration_flag("--max-time", t.max_time, true);
  if (t.seed) spec.search.seed = *t.seed;
  if (t.no_transfer) spec.search.transfer = 0;
  if (!t.db.empty()) spec.output.db = t.db;
  for (const auto& name : t.outputs) (void)writers().get(name, {"--output"});  // before the tune, not after
  // A file on the command line wins over the spec's, and over its `false`.
  const std::pair<std::string_view, const std::string*> file_flags[] = {
      {"csv", &t.csv}, {"json", &t.json}, {"html", &t.html}};
  for (const auto& [name, file] : file_flags)
    if (!file->empty()) {
      spec.output.files[std::string(name)] = *file;
      spec.output.off.erase(std::string(name));
      spec.output.where.erase(std::string(name));  // named by the flag now
    }
  if (!t.timeout.empty()) {
    spec.measure.timeout = duration_flag("--timeout", t.timeout, true);
    // A command kernel's runs are bounded by application.run_timeout when
    // the spec sets it: the flag replaces that too, or it would change
    // nothing but the settings a stored failure is judged by.
    if (spec.application) spec.application->run_timeout = spec.measure.timeout;
    else if (auto why = sampling_outlasts_timeout(spec.measure))
      throw InputError({"--timeout"}, *why + " (the spec's measure.warmup and measure.max_time)");
  }
  if (!t.cache.empty()) {
    const auto mode = cache_mode_from_string(t.cache);
    if (!mode) {
      // Kernel Tuner's cache=FILE is a file of results: here, the store.
      const bool a_file = t.cache.find_first_of("./") != std::string::npos;
      throw InputError({"--cache"}, "unknown cache mode '" + t.cache + "'" +
                                        did_you_mean(t.cache, names_in(cache_mode_names())) + " (" +
                                        either(names_in(cache_mode_names())) + ")" +
                                        (a_file ? "; --cache is how the kernel meets the caches, cold or hot. Kernel "
                                                  "Tuner's cache file of results is the results store here (--db "
                                                  "FILE, resumed by the next run), and --replay FILE replays a "
                                                  "Kernel Tuner cache"
                                                : ""));
    }
    spec.measure.cache = *mode;
  }
  if (!t.early_stop.empty()) {
    try {
      spec.measure.early_stop = parse_early_stop(t.early_stop);
    } catch (const std::invalid_argument& e) {
      throw InputError({"--early-stop"}, e.what());
    }
    if (auto why = early_stop_conflict(spec.objective); why && spec.measure.early_stop > 0)
      throw InputError({"--early-stop"}, "'" + t.early_stop + "' turns the early stop on, but " + *why +
                                             "; expected off (under the objective at " + spec.objective.where.str() +
                                             " every config is measured in full)");
  }
  if (!t.confirm.empty()) {
    std::size_t n = 0;
    const char* end = t.confirm.data() + t.confirm.size();
    const auto [at, ec] = std::from_chars(t.confirm.data(), end, n);
    if (t.confirm == "off") spec.measure.confirm = 0;
    else if (ec == std::errc{} && at == end) spec.measure.confirm = n;
    else
      throw InputError({"--confirm"}, "'" + t.confirm +
                                          "' is not a count; give how many of the fastest configs "
                                          "to measure again (0 or more), or off");
  }
  if (t.no_rules) spec.search.rules.clear();
  return spec;
}

// ".where-KC_256" for --where 'KC == 256', ".where-KC_ge_128" for 'KC >= 128':
// the files of a narrowed run get their own names, readable and bounded in
// length. Where the name cannot say it all (other operators, a long
// filter), a hash of the whole filter keeps two filters' files apart.
std::string where_suffix(const std::vector<std::string>& where) {
  if (where.empty()) return {};
  static const std::map<std::string, std::string> kWords = {{"==", ""}, {"=", ""},    {"!=", "ne"}, {"<=", "le"},
                                                            {">=", "ge"}, {"<", "lt"}, {">", "gt"}};
  std::string text, all;
  bool lossy = false;
  auto add = [&](std::string_view word) {
    if (word.empty()) return;
    if (!text.empty() && text.back() != '_') text += '_';
    text += word;
  };
  for (const auto& w : where) {
    all += w + '\n';
    if (!text.empty()) text += "_and_";
    for (std::size_t i = 0; i < w.size();) {
      std::size_t j = i;
      if (std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '_') {
        while (j < w.size() && (std::isalnum(static_cast<unsigned char>(w[j])) || w[j] == '_')) ++j;
        add(std::string_view(w).substr(i, j - i));
      } else {
        while (j < w.size() && !std::isalnum(static_cast<unsigned char>(w[j])) && w[j] != '_') ++j;
        std::string op;
        for (char c : std::string_view(w).substr(i, j - i))
          if (!std::isspace(static_cast<unsigned char>(c))) op += c;
        if (auto word = kWords.find(op); word != kWords.end()) add(word->second);
        else if (!op.empty()) lossy = true;
      }
      i = j;
    }
  }
  if (text.size() > 48) {
    text.resize(48);
    lossy = true;
  }
  if (text.empty()) text = "x";
  if (lossy) {
    std::uint32_t h = 2166136261u;  // FNV-1a: stable across builds, unlike std::hash
    for (unsigned char c : all) h = (h ^ c) * 16777619u;
    text += fmt::format("-{:08x}", h);
  }
  return ".where-" + text;
}

// Ctrl-C and SIGTERM stop the run between trials: what is done is stored
// and reported; a second signal, a second or more after the first, ends the
// process at once. One stop may arrive twice at once: `timeout` signals its
// child, then the child's whole process group, and a terminal's Ctrl-C
// reaches every process of the foreground group.
std::atomic<int> g_signal{0};
std::atomic<std::int64_t> g_first_signal_ns{0};
constexpr std::int64_t kSameStopNs = 1'000'000'000;

extern "C" void on_stop_signal(int sig) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  const std::int64_t ns = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  if (g_signal.load() != 0) {
    if (ns - g_first_signal_ns.load() < kSameStopNs) return;
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_first_signal_ns = ns;
  g_signal = sig;
  request_stop();
}

class StopOnSignals {
 public:
  StopOnSignals() {
    clear_stop();
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a wait returns early and looks at the flag
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, &old_[index(sig)]);
  }
  ~StopOnSignals() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &old_[index(sig)], nullptr);
  }
  int signal() const { return g_signal; }

 private:
  static int index(int sig) { return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2; }
  struct sigaction old_[3]{};
};

// The output folder: made now, so a path that cannot be one is bad input
// at its flag before anything is built.
void make_out_dir(const std::string& dir) {
  if (dir.empty()) throw InputError({"--out-dir"}, "empty; expected a folder, e.g. -o tunekit-out");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError({"--out-dir " + dir}, "is a file; expected a folder (new or existing)");
  fs::create_directories(dir, ec);
  if (ec) throw InputError({"--out-dir " + dir}, "cannot make this folder: " + ec.message());
  // The store, its journal and the builds are written there.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(
        {"--out-dir " + dir},
        fmt::format("cannot write into this folder: {}; expected a folder you may write to", strerror(errno)));
}

// More parallel builds than this is a typo, not a machine.
constexpr std::uint64_t kMaxJobs = 4096;

// What to type after a stop: the same command resumes, except that
// --fresh would measure again what this run stored.
std::string how_to_resume(const TuneArgs& t) {
  // The trials it had not reached are stale (Store::mark_stale): a resume
  // measures them anew, and --fresh again would redo what it did.
  if (t.fresh) return "run the command without --fresh to resume (what this run had not reached is measured anew)";
  return "run the same command to resume";
}

// A rank that says nothing of the error it exits with, where the ranks
// cannot wait for each other (no MPI): the launcher ends the job at the
// first rank that exits with an error, so rank 0 gets a moment to say it.
int leave_quietly(int status) {
  std::this_thread::sleep_for(std::chrono::seconds(1));
  return status;
}

// Every rank of `job`, once it has read its arguments, the flags and the
// spec, with its exit status so far (0: ready to tune). When any rank
// failed, the first that did calls `say` (the error every rank most often
// met alike, a spec's or a flag's, is said once, not once a rank), the job
// ends on every rank before any exits, and this returns the status to exit
// with (detail::end_before_tune); nullopt when every rank is ready.
std::optional<int> settle(MpiJob& job, int status, const std::function<void()>& say) {
  const auto end = detail::end_before_tune(job.statuses(status), job.rank());
  if (!end) return std::nullopt;
  if (end->speaks) say();
  job.end();
  return end->status;
}

fs::path db_of(const Spec& spec, const TuneArgs& t) {
  return spec.output.db.empty() ? fs::path(t.out_dir) / "tunekit.db" : spec.output.db;
}

// The trials a run stored, each once (a trial confirmed is stored again), in
// the order they were first stored.
class StoredSoFar {
 public:
  void add(const TrialRecord& trial) {
    const std::string key = detail::shown_bindings(trial.size) + " " + trial.config.str();
    const auto [at, fresh] = index_.emplace(key, trials_.size());
    if (fresh) trials_.push_back(trial);
    else trials_[at->second] = trial;
    // What its console line shows, not every sample and the machine's
    // description: a week's run keeps hundreds of thousands of these.
    trials_[at->second].samples = {};
    trials_[at->second].machine = {};
  }

  // Prints the trials' console lines (stdout), then how many the store
  // keeps (stderr), before the error that ended the run is said.
  void say(const Spec& spec, const fs::path& db) const {
    if (trials_.empty()) return;
    std::vector<Bindings> sizes;
    for (const auto& t : trials_)
      if (std::find(sizes.begin(), sizes.end(), t.size) == sizes.end()) sizes.push_back(t.size);
    const TrialColumns columns{spec.metrics, spec.measure.target_noise};
    for (const auto& size : sizes) {
      if (sizes.size() > 1 || !size.empty()) fmt::print("size {}\n", detail::shown_bindings(size));
      std::size_t number = 0;
      for (const auto& t : trials_)
        if (t.size == size) fmt::print("{}\n", format_trial_line(++number, t, columns));
    }
    std::fflush(stdout);
    fmt::print(stderr,
               "the run ended on the error below after storing {} trial{} (above) in {}: {} kept, and the "
               "same command resumes from {}\n",
               trials_.size(), trials_.size() == 1 ? "" : "s", db.string(), trials_.size() == 1 ? "it is" : "they are",
               trials_.size() == 1 ? "it" : "them");
  }

 private:
  std::vector<TrialRecord> trials_;
  std::map<std::string, std::size_t> index_;
};

int run_tune(const TuneArgs& t) {
  // Under mpirun every rank reads the same flags and spec; rank 0 keeps the
  // store and writes the outputs (distribute.hpp).
  std::unique_ptr<MpiJob> job;
  try {
    job = MpiJob::join();
  } catch (const std::exception&) {
    // Every rank fails to join alike (a tunekit built without MPI): rank 0
    // says so.
    if (detail::launched_rank() > 0) return leave_quietly(2);
    throw;
  }
  const bool lead = !job || job->rank() == 0;
  SizeFlags size_flags;
  Spec spec;
  TuneOptions options;
  KeptFiles kept;
  std::exception_ptr failed;  // under MPI, this rank's error before the tune
  int status = 0;             // and the exit status it calls for
  try {
    if (t.jobs > kMaxJobs)
      throw InputError({"--jobs"},
                       fmt::format("{} parallel builds: expected 0 (one per core) to {}", t.jobs, kMaxJobs));
    spec = build_spec(t, size_flags);
    make_out_dir(t.out_dir);
    options.check_machine = [&](const MachineInfo& machine) {
      check_size_flags(spec, size_flags, machine);
      if (!t.properties.empty()) check_properties_complete(spec, options.properties, machine, t.properties);
    };
    options.out_dir = t.out_dir;
    options.fresh = t.fresh;
    options.retry_failed = t.retry_failed;
    options.keep_going = t.keep_going;
    options.jobs = static_cast<unsigned>(t.jobs);
    options.device = device_to_tune(t, spec, job != nullptr);
    // Each rank takes its own device (mpi_job.cpp): the file's is no rank's.
    if (job && spec.device)
      spec.warnings.push_back(
          fmt::format("{}: KernelSpecification.Device.DeviceId is not read under mpirun: each "
                      "rank tunes the device of its index among the ranks on its host",
                      spec.device_where.str()));
    if (!t.properties.empty()) {
      options.properties = load_machine_file(t.properties).properties;
      check_property_names(size_names_used(spec), options.properties, t.properties);
      check_property_types(options.properties, spec.kernel.language, t.properties);
    }
    // Before a week of tuning, not after: no explicit output may replace the
    // store, the spec or the kernel's source.
    const fs::path db = db_of(spec, t);
    if (check_store_path(db, !t.db.empty() ? "--db" : !spec.output.db.empty() ? spec.file.string() : "--out-dir"))
      options.store_checked = db;
    kept = kept_inputs(spec, db);
    std::vector<OutputFile> given;
    for (const auto& [name, file] : spec.output.files) {
      if (file.empty()) continue;  // the writer's default file, checked once planned
      const auto in_spec = spec.output.where.find(name);
      given.push_back(in_spec == spec.output.where.end() ? OutputFile::of_flag("--" + name, file)
                                                         : OutputFile{"output." + name, in_spec->second, file});
      check_output_file(given.back(), kept);
    }
    check_distinct_outputs(given);
  } catch (const std::exception& e) {
    if (!job) throw;
    failed = std::current_exception();
    status = dynamic_cast<const InputError*>(&e) ? 1 : 2;
  }
  if (job)
    if (const auto end = settle(*job, status, [&] {
          try {
            std::rethrow_exception(failed);
          } catch (const std::exception& e) {
            (void)report_error(e);
          }
        }))
      return *end;

  options.replay = t.replay;
  ProgressBar bar(stderr);
  ProgressCallback progress;
  if (!t.no_progress && lead) progress = [&](const ProgressEvent& e) { bar.update(e); };
  StopOnSignals signals;
  TuneReport report;
  // What this run stored, for a run an error ends before its report (the
  // store's disk filled): the trials measured stay on the console too.
  StoredSoFar stored;
  if (lead) options.on_stored = [&](const TrialRecord& trial, bool) { stored.add(trial); };
  try {
    report = job ? job->tune(spec, options, progress) : tune(spec, options, progress);
  } catch (const std::exception& e) {
    // Stopped before any result to report (while the space was counted):
    // a stop, not an error.
    if (!signals.signal()) {
      bar.finish();
      stored.say(spec, db_of(spec, t));
      throw;
    }
    bar.finish();
    fmt::print(stderr, "\nstopped by {} ({}); {}\n", strsignal(signals.signal()), e.what(), how_to_resume(t));
    return 128 + signals.signal();
  }
  bar.finish();
  if (!lead) return 0;
  const OutputContext context{t.out_dir, std::chrono::system_clock::now(), where_suffix(t.where)};
  const auto planned = plan_outputs(report, spec.output, context, t.outputs, {"--output"});
  kept[0].second = report.db;
  std::vector<OutputFile> files;
  for (const auto& o : planned)
    if (o.writer->writes_file) {
      files.push_back(OutputFile::of_flag("--output " + o.writer->name, o.file));
      check_output_file(files.back(), kept);
    }
  check_distinct_outputs(files);
  write_outputs(report, planned, std::cout);
  std::cout.flush();
  if (report.interrupted) {
    fmt::print(stderr, "\nstopped by {}: the trials done are stored in {}; {}\n",
               signals.signal() ? std::string(strsignal(signals.signal())) : std::string("request"), report.db.string(),
               how_to_resume(t));
    return 128 + (signals.signal() ? signals.signal() : SIGINT);
  }
  for (const auto& s : report.sizes)
    if (s.best) return 0;
  return 3;  // nothing worked: scripts should notice
}

}  // namespace

int end_tune_with_usage_error(const std::function<void()>& say) {
  if (detail::launched_ranks() < 2) {
    say();
    return 1;
  }
  std::unique_ptr<MpiJob> job;
  try {
    job = MpiJob::join();
  } catch (const std::exception&) {
    // Built without MPI: the ranks cannot wait for rank 0.
  }
  if (job) return settle(*job, 1, say).value_or(1);
  if (detail::launched_rank() > 0) return leave_quietly(1);
  say();
  return 1;
}

SubCommand add_tune_command(CLI::App& app) {
  auto t = std::make_shared<TuneArgs>();
  auto* tune_cmd = app.add_subcommand("tune",
                                      "Tune a kernel: search its space, print the best config.\n"
                                      "TARGET is a spec (.yaml/.yml/.json) or a kernel source whose\n"
                                      "parameters come from %RANGE% annotations (then --entry and\n"
                                      "--arg describe the call).");
  tune_cmd->add_option("TARGET", t->target, "Spec file, or kernel source")->required()->check(CLI::ExistingFile);
  add_size_flag(tune_cmd, t->sizes,
                "Problem size NAME=VALUE (a number as a spec writes one: 4096, 0x1000, 0o10000, 1e3), which "
                "sets that name in every size of the spec (or makes the only size); sizes it makes equal are tuned "
                "once, so on a spec whose sizes differ only in NAME it tunes the one size. A machine property "
                "(l1d_bytes) is no size: --properties sets those");
  tune_cmd
      ->add_option("-a,--axis", t->axes,
                   "Problem-size axis, nvbench style: M=[1,4,16], N=[1024:8192:1024] (inclusive), "
                   "K[pow2]=[7:12] (2^7 to 2^12) or M=64. Several axes tune every combination")
      ->allow_extra_args(false);
  tune_cmd->add_option("--where", t->where,
                       "Extra constraint for this run, e.g. --where 'CLUSTER == 1' (repeat: all must hold); results "
                       "go to the same DB as the spec's, the CSV, JSON and HTML to NAME.where-CLUSTER_1.* so the full "
                       "run's stay");
  tune_cmd->add_option("--strategy", t->strategy,
                       "Search strategy, by name (`tunekit plugins` lists them; default: the spec's, else auto: "
                       "exhaustive unless a budget is smaller than the space)");
  tune_cmd->add_option("--option", t->options,
                       "An option of the strategy, NAME=VALUE (repeat for several; `tunekit plugins` lists them)");
  tune_cmd
      ->add_option("--output", t->outputs,
                   "Output writers to run, by name (repeat, or separate with commas; default: console, csv, json, "
                   "html, and mskpp for applications; `tunekit plugins` lists them)")
      ->delimiter(',');
  auto* max_evals = tune_cmd->add_option(
      "--max-evals", t->max_evals,
      "Stop after this many trials per size (seeds and the default config included). With a "
      "budget smaller than the space, the default strategy (auto) searches instead of enumerating");
  tune_cmd
      ->add_option("--max-fraction", t->max_fraction,
                   "Budget as a share of each size's valid configs, e.g. 0.02 (rounded up; otherwise as --max-evals)")
      ->excludes(max_evals);
  tune_cmd->add_option("--max-time", t->max_time,
                       "Stop proposing configs after this long, e.g. 90s or 5m (with --replay: recorded compile and "
                       "run time)");
  tune_cmd
      ->add_option("--replay", t->replay,
                   "Evaluate configs by looking them up in recorded results instead of running them: a Kernel "
                   "Tuner cache (original or T4, gzipped or not) or a tunekit results DB. Its parameters must be "
                   "the spec's; a config it lacks is an error")
      ->check(CLI::ExistingFile);
  tune_cmd->add_flag("--no-transfer", t->no_transfer,
                     "Do not seed each size with the fastest configs of the nearest sizes tuned before "
                     "(search.transfer), for an A/B comparison");
  tune_cmd->add_option("--seed", t->seed,
                       "Seed for random search and for the input data (default: the spec's, else 1)");
  tune_cmd->add_option("--device-index", t->device_index,
                       "Which device of the kernel's backend to tune on, by its index in `tunekit devices` (default: "
                       "a T1 file's Device.DeviceId, else 0; not under mpirun, where each rank takes its own). "
                       "The --device of select, emit, rules-report and replay is another thing: a device's name as the "
                       "results store it");
  tune_cmd->add_option("-j,--jobs", t->jobs, "Parallel builds (0, the default: one per core; at most 4096)");
  tune_cmd->add_option("-o,--out-dir", t->out_dir, "Folder for the results DB, CSV, JSON and the build cache")
      ->capture_default_str();
  tune_cmd->add_option("--db", t->db, "Results database (default: OUT_DIR/tunekit.db)");
  tune_cmd->add_option("--csv", t->csv, "CSV export (default: OUT_DIR/NAME.csv)");
  tune_cmd->add_option("--json", t->json, "JSON export (default: OUT_DIR/NAME.json)");
  tune_cmd->add_option("--html", t->html,
                       "HTML report with plots: the fastest configs, convergence, each parameter's values, the "
                       "failures (default: OUT_DIR/NAME.html)");
  tune_cmd->add_flag("--fresh", t->fresh,
                     "Rebuild and rerun everything instead of resuming from the DB and build cache");
  tune_cmd->add_flag("--retry-failed", t->retry_failed,
                     "Measure every stored failure again and keep the stored good trials (as ctest --rerun-failed). "
                     "Without it a resume measures again only the failures that were not the config's own (a killed "
                     "worker, a full disk) or that ran under other settings (timeout, tolerances, cache mode)");
  tune_cmd->add_flag("--keep-going", t->keep_going,
                     "Go on through configs that fail one after another for the machine's reason (a full disk, a "
                     "broken compiler, a device another process filled) instead of ending the run after ten in a "
                     "row; each is stored as the machine's failure, which the next run measures again");
  add_kernel_flags(tune_cmd, t->kernel);
  tune_cmd->add_option("--timeout", t->timeout, "Per-config run time limit, e.g. 10s (default: the spec's, else 60s)");
  tune_cmd->add_option(
      "--cache", t->cache,
      "cold (default): evict the kernel's data from the caches before each sample (CPU: its buffers, "
      "line by line; GPU: by overwriting a buffer larger than the L2, as triton's do_bench); "
      "cold-read: on a GPU, flush by reading that buffer, so no dirty lines are left for the kernel to "
      "write back (on a CPU, the same as cold); hot: don't flush");
  tune_cmd
      ->add_option("--properties", t->properties,
                   "Machine properties for the constraints from this JSON file (one device object of `tunekit "
                   "devices --json`), replacing this machine's: try a spec as on a machine with other caches "
                   "(the kernels still run here)")
      ->check(CLI::ExistingFile);
  tune_cmd->add_option("--early-stop", t->early_stop,
                       "FACTOR or off: cut a config short once its first samples are all slower than FACTOR times "
                       "the best so far at its size; it is recorded as 'slower' with those samples and never chosen "
                       "(default: the spec's measure.early_stop, else 3; only under objective: time, since it "
                       "compares times: off otherwise)");
  tune_cmd->add_option("--confirm", t->confirm,
                       fmt::format("N or off: at the end of each size, measure the N fastest configs (within {:.0f}% "
                                   "of the best) again side by side before naming the best (default: the spec's "
                                   "measure.confirm, else {})",
                                   100 * (kConfirmWithin - 1), MeasureSettings{}.confirm));
  tune_cmd->add_option("--entry", t->entry, "Bare sources: the function to call");
  tune_cmd->add_option(
      "--arg", t->args,
      "Bare sources: one argument, in call order: NAME:TYPE:SIZE[:FILL[:ROLE]] for a buffer "
      "(FILL random|normal|zeros|sequence|NUMBER|file=PATH (raw elements or .npy), empty for the default and "
      "for an out buffer: "
      "y:f32:N::out; ROLE in|out|inout|scratch) or NAME:TYPE=VALUE for a scalar. "
      "TYPE " +
          fmt::format("{}", fmt::join(names_in(element_type_names()), "|")) +
          "; SIZE and VALUE are expressions over sizes and parameters");
  tune_cmd->add_flag("--no-progress", t->no_progress, "Do not draw the progress bar");
  tune_cmd->add_flag("--no-rules", t->no_rules,
                     "Do not seed the search with the spec's matmul tile rules (search.rules), for an A/B comparison");
  tune_cmd->footer(
      "Prints a progress bar with ETA while it runs, then one line per config\n"
      "(\"No.3: 14.982 us, {BM: 64, ...}\", or its status: slower when the early\n"
      "stop cut it short; invalid, compile_error, resource_limit, launch_error,\n"
      "crash, timeout or wrong_result when it failed), the best config, its\n"
      "speedup over the default config, the verification outcome, and where the\n"
      "results went. A rerun resumes from the results DB.\n"
      "Ctrl-C or SIGTERM stops the run at once, dropping the trial in flight\n"
      "(measured on resume); what is done stays stored and reported, and the\n"
      "same command resumes it. A second signal, a second or more after the\n"
      "first, ends the process at once.\n"
      "Under mpirun, the sizes are spread over the ranks, one device each; rank 0\n"
      "keeps the DB and prints the report (README: MPI).\n"
      "Exit status: 0 if some config ran correctly; 1 for bad input (a spec error\n"
      "names file:line:column, a flag error names the flag, an unknown subcommand\n"
      "says so); 2 for other errors; 3 if no config ran correctly; 128+N when\n"
      "stopped by signal N (130 for Ctrl-C, 143 for SIGTERM).");

  return {tune_cmd, [t] { return run_tune(*t); }};
}

}  // namespace tunekit::cli
