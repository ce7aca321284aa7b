// Rank 0 coordinates, every rank serves (detail/job.hpp).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builder/detail/compiler.hpp"
#include "core/detail/hash.hpp"
#include "core/detail/process.hpp"
#include "distribute/detail/job.hpp"
#include "store/detail/json_value.hpp"
#include "store/detail/kernel_claim.hpp"
#include "store/detail/write_ahead_log.hpp"
#include "tunekit/error.hpp"
#include "tunekit/objective.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The fastest trials of each other size that an assignment carries, for
// transfer: as many as the tuner remembers of a size.
constexpr std::size_t kKnownPerSize = 16;

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "an unnamed host";
}

// An error as it crosses to rank 0: a spec's error keeps its location.
ojson error_to_json(const std::exception& e) {
  if (const auto* input = dynamic_cast<const InputError*>(&e))
    return {{"input", true},
            {"file", input->where().file},
            {"line", input->where().line},
            {"column", input->where().column},
            {"message", input->message()}};
  return {{"input", false}, {"message", e.what()}};
}

[[noreturn]] void throw_error(const ojson& e) {
  const std::string message = e.at("message").get<std::string>();
  if (e.at("input").get<bool>())
    throw InputError({e.at("file").get<std::string>(), e.at("line").get<int>(), e.at("column").get<int>()}, message);
  throw std::runtime_error(message);
}

std::string message_of(const ojson& e) {
  if (!e.at("input").get<bool>()) return e.at("message").get<std::string>();
  return InputError({e.at("file").get<std::string>(), e.at("line").get<int>(), e.at("column").get<int>()},
                    e.at("message").get<std::string>())
      .what();
}

std::string trial_key(const TrialRecord& t) { return size_key(t.size) + '\n' + t.config.key(); }

// A rank's scratch folder in the temporary directory (not the output
// folder, which may be a network file system, where SQLite's locks fail),
// named by host and process: a temporary directory may be shared by hosts
// (a cluster's job scratch) or containers.
fs::path scratch_folder(const fs::path& temp, const std::string& host, pid_t pid, int rank) {
  return temp / fmt::format("tunekit-{}-{}-rank-{}", host, pid, rank);
}

// The scratch folders of this host's ranks that died without removing theirs
// (SIGKILL, the launcher's abort): their process is gone. Each holds the
// trials rank 0 sent for a size, megabytes a job.
void remove_orphaned_scratch(const fs::path& temp, const std::string& host) {
  const std::string ours = fmt::format("tunekit-{}-", host);
  std::error_code ec;
  for (fs::directory_iterator it(temp, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(ours)) continue;
    const std::string rest = name.substr(ours.size());
    const auto digits = rest.find_first_not_of("0123456789");
    if (digits == 0 || digits > 9 || digits == std::string::npos || !rest.substr(digits).starts_with("-rank-"))
      continue;
    // ESRCH: no such process here. EPERM: another user's, alive.
    if (::kill(static_cast<pid_t>(std::stol(rest.substr(0, digits))), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

// How long an idle rank sleeps between looks for its next message: a
// blocking receive spins a core, and it must notice a stop of its own.
constexpr auto kIdlePoll = std::chrono::milliseconds(2);

}  // namespace

// A rank started with another spec or source would store its trials beside
// rank 0's and have its bests reported as theirs.
std::string tune_identity(const Spec& spec, int device) {
  Hasher h;
  h.add(spec_hash(spec, device));
  for (const auto& p : spec.parameters) {
    h.add(p.name).add(p.values.size());
    for (const auto& v : p.values) h.add(v.repr());
  }
  for (const auto& c : spec.constraints) h.add(c.text());
  h.add(spec.configs.size());
  for (const auto& c : spec.configs) h.add(c.key());
  h.add(spec.sizes.size());
  for (const auto& size : spec.sizes) h.add(size_key(size));
  h.add(spec.objective.name).add(static_cast<std::uint64_t>(spec.objective.maximize));
  return h.hex();
}

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* value = std::getenv(name); value && *value) return std::atoi(value);
  return 0;
}

int launched_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* value = std::getenv(name); value && *value) return std::atoi(value);
  return 0;
}

std::optional<JobEnd> end_before_tune(const std::vector<int>& statuses, int rank) {
  const auto first = std::find_if(statuses.begin(), statuses.end(), [](int s) { return s != 0; });
  if (first == statuses.end()) return std::nullopt;
  const auto speaker = static_cast<int>(first - statuses.begin());
  const int own =
      rank >= 0 && static_cast<std::size_t>(rank) < statuses.size() ? statuses[static_cast<std::size_t>(rank)] : 0;
  return JobEnd{rank == speaker, own != 0 ? own : *first};
}

void serve(Link& link, const Spec& spec, const TuneOptions& options) {
  const int rank = link.rank();
  auto send = [&](Message::Kind kind, const ojson& body) {
    link.send({kind, rank, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  };
  auto until_stopped = [&] {
    while (link.receive().kind != Message::Kind::stop) {
    }
  };
  // Each rank's scratch files are its own; the builds are the job's, so a
  // variant one rank built serves every rank.
  TuneOptions mine = options;
  mine.out_dir = options.out_dir / "ranks" / fmt::format("rank-{}", rank);
  mine.build_dir = options.out_dir / "cache";
  // Rank 0 sends only what this run may reuse; a fresh run still rebuilds.
  mine.fresh = false;
  mine.rebuild = options.fresh;
  const std::string host = host_name();
  fs::path scratch;
  // One for every size this rank tunes: its worker process starts once.
  std::optional<TuningRig> rig;
  try {
    const TuningTarget& target = rig.emplace(spec, mine).target();
    mine.rig = &*rig;
    const fs::path temp = detail::temp_folder();
    remove_orphaned_scratch(temp, host);
    scratch = scratch_folder(temp, host, ::getpid(), rank);
    fs::create_directories(scratch);
    send(Message::Kind::hello, {{"host", host},
                                {"device", target.machine.device},
                                {"measures_on_host", target.measures_on_host},
                                {"tune", tune_identity(spec, mine.device)},
                                {"compiler", detail::kernel_compiler_identity(spec, mine.device)}});
  } catch (const std::exception& e) {
    send(Message::Kind::hello, {{"host", host}, {"error", error_to_json(e)}});
    until_stopped();
    return;
  }
  // A message polled for while tuning that is not a halt, kept for the loop.
  std::optional<Message> held;
  // Whether rank 0 knows this rank was stopped: by its halt, or by the
  // rank's report of a size that the stop ended.
  bool stop_told = false;
  auto next = [&] {
    for (;;) {
      std::optional<Message> m = std::exchange(held, std::nullopt);
      if (!m) m = link.poll();
      if (!m) {
        // Stopped (a signal) while waiting for a size: the job's stop.
        if (stop_requested() && !stop_told) {
          stop_told = true;
          send(Message::Kind::stopped, ojson::object());
        }
        std::this_thread::sleep_for(kIdlePoll);
        continue;
      }
      if (m->kind != Message::Kind::halt) return std::move(*m);
      stop_told = true;
      request_stop();  // between sizes: the next, if any, ends at once
    }
  };
  for (Message m = next(); m.kind == Message::Kind::assign; m = next()) {
    const ojson assignment = ojson::parse(m.body);
    const std::size_t index = assignment.at("index").get<std::size_t>();
    Spec one = spec;
    one.sizes = {bindings_from_json(assignment.at("size"))};
    one.output.db = scratch / fmt::format("size-{}.db", index);
    try {
      {
        Store known(one.output.db);
        for (const auto& t : assignment.at("known")) {
          TrialRecord r = trial_from_json(t);
          known.put(r);
        }
      }
      mine.on_stored = [&](const TrialRecord& t, bool exclusive) {
        send(Message::Kind::trial, {{"index", index}, {"exclusive", exclusive}, {"trial", trial_to_json(t)}});
      };
      TuneReport r = tune(one, mine, [&](const ProgressEvent& e) {
        send(Message::Kind::progress,
             {{"index", index}, {"done", e.done}, {"total", e.total.value_or(e.done)}, {"current", e.current}});
        // The job stops (rank 0 or another rank was): as a signal here
        // would, dropping the trial in flight. Looked for as the tune
        // reports its progress, on the thread that calls MPI.
        if (!held)
          if (auto polled = link.poll()) {
            if (polled->kind != Message::Kind::halt) {
              held = std::move(polled);
            } else {
              stop_told = true;
              request_stop();
            }
          }
      });
      // Rank 0 judges the noise over every size of the job.
      if (auto noise = noise_warning(r)) std::erase(r.warnings, *noise);
      ojson sizes = ojson::array();
      for (const auto& s : r.sizes) sizes.push_back(size_report_to_json(s));
      send(Message::Kind::done, {{"index", index},
                                 {"sizes", std::move(sizes)},
                                 {"warnings", r.warnings},
                                 {"seeded_by", r.seeded_by},
                                 {"resumed", r.resumed},
                                 {"retried", r.retried},
                                 {"measured_again_after_kill", r.measured_again_after_kill},
                                 {"interrupted", r.interrupted},
                                 {"build", r.build.count()},
                                 {"build_wait", r.build_wait.count()},
                                 {"measure", r.measure.count()},
                                 {"device_busy", r.device_busy.count()},
                                 {"flush", r.flush.count()},
                                 {"verify", r.verify.count()}});
      stop_told = stop_told || r.interrupted;
    } catch (const std::exception& e) {
      // A stop while the size was planned (its space counted, its
      // reference built) ends it with an error: the stop's, not the rank's.
      stop_told = stop_told || stop_requested();
      send(Message::Kind::failed, {{"index", index}, {"error", error_to_json(e)}, {"stopped", stop_requested()}});
    }
    std::error_code ec;
    for (const char* tail : {"", "-wal", "-shm"}) fs::remove(one.output.db.string() + tail, ec);
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
}

TuneReport coordinate(Transport& transport, const Spec& spec, const TuneOptions& options,
                      const ProgressCallback& progress) {
  const auto start = Clock::now();
  const int ranks = transport.ranks();
  TuneReport report = untuned_report(spec, options);
  Store store(report.db);
  const KernelClaim claim(report.db, report.spec_hash, spec.sizes);
  if (auto w = claim.announce()) report.warnings.push_back(*w);
  const std::string identity = tune_identity(spec, options.device);
  const std::string own_compiler = detail::kernel_compiler_identity(spec, options.device);

  std::vector<std::optional<SizeReport>> tuned(spec.sizes.size());
  std::deque<std::size_t> pending;
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) pending.push_back(i);
  std::map<int, std::size_t> busy;  // rank -> the size it tunes
  std::deque<int> idle;             // ranks waiting for a size, longest first
  std::map<int, std::string> hosts;
  std::map<std::string, std::vector<int>> on_host;  // the ranks whose timings take each host's cores
  std::vector<std::pair<int, ojson>> early;  // hellos heard before rank 0's, whose machine is the job's
  bool heard_rank0 = false;
  int heard = 0, retired = 0;
  std::set<int> stopped, worked;
  std::optional<ojson> fatal;      // rank 0 cannot tune, or the spec is wrong: the job ends with it
  std::set<std::string> this_run;  // the trials stored by this run (a fresh run reuses no others)
  std::optional<Microseconds> best;
  // Per size a rank has begun: its trials so far and what it plans (its
  // final count once done). The job's total counts each size not begun as
  // the mean of those begun, as tune()'s counts each size's plan.
  struct Count {
    std::size_t done = 0, planned = 0;
  };
  std::map<std::size_t, Count> counts;
  auto show = [&](std::string current) {
    if (!progress || counts.empty()) return;
    std::size_t done = 0, planned = 0;
    for (const auto& [index, c] : counts) {
      done += c.done;
      planned += c.planned;
    }
    const std::size_t unbegun = spec.sizes.size() - std::min(counts.size(), spec.sizes.size());
    planned += (planned * unbegun + counts.size() / 2) / counts.size();
    ProgressEvent e;
    e.done = done;
    e.total = std::max(done, planned);
    e.elapsed = Clock::now() - start;
    e.best = best;
    e.current = std::move(current);
    e.time_bounded = spec.search.max_time.has_value();  // each size's tune may end before its plan
    progress(e);
  };

  auto stop = [&](int rank) {
    if (stopped.insert(rank).second) transport.send({Message::Kind::stop, rank, "{}"});
  };
  // The job stops before its sizes are done when rank 0 is asked to (a
  // signal) or any rank is: a batch system signals one node before it ends
  // the job, and a rank handed sizes while stopped would fail each at once.
  // Every busy rank ends its size, dropping its trial in flight (as a
  // signal of its own would).
  bool halting = false;
  auto halt = [&] {
    if (halting) return;
    halting = true;
    for (const auto& [rank, index] : busy) transport.send({Message::Kind::halt, rank, "{}"});
  };
  auto stopping = [&] { return halting || stop_requested(); };
  auto who = [&](int rank) { return fmt::format("rank {} ({})", rank, hosts[rank]); };
  // A rank stopped by a signal of its own (not by rank 0's halt).
  auto rank_stopped = [&](int rank, const std::string& during) {
    if (!stopping())
      report.warnings.push_back(
          fmt::format("{} was stopped (a signal) {}: the job stopped with it, every rank "
                      "dropping its trial in flight; the same command resumes it",
                      who(rank), during));
    report.interrupted = true;
    halt();
  };
  auto retire = [&](int rank, const std::string& why) {
    report.warnings.push_back(why);
    ++retired;
    stop(rank);
  };

  // What the store knows that a rank tuning size `index` can use: the
  // size's own trials (a resume) and the fastest of every other (transfer).
  auto known = [&](std::size_t index) {
    const std::string own = size_key(spec.sizes[index]);
    std::map<std::string, std::vector<TrialRecord>> others;
    ojson out = ojson::array();
    for (auto& t : store.trials(report.spec_hash)) {
      if (t.device != report.device || (options.fresh && !this_run.count(trial_key(t)))) continue;
      if (size_key(t.size) == own) out.push_back(trial_to_json(t));
      else if (t.status == Status::ok && !is_base_trial(t)) others[size_key(t.size)].push_back(std::move(t));
    }
    auto cost = [&](const TrialRecord& t) {
      return objective_cost(spec.objective, spec.metrics, t).value_or(std::numeric_limits<double>::infinity());
    };
    for (auto& [size, list] : others) {
      std::stable_sort(list.begin(), list.end(),
                       [&](const TrialRecord& a, const TrialRecord& b) { return cost(a) < cost(b); });
      for (std::size_t i = 0; i < list.size() && i < kKnownPerSize; ++i) out.push_back(trial_to_json(list[i]));
    }
    return out;
  };
  auto assign = [&] {
    while (!idle.empty() && !pending.empty() && !fatal && !stopping()) {
      const int rank = idle.front();
      idle.pop_front();
      const std::size_t index = pending.front();
      pending.pop_front();
      busy[rank] = index;
      const ojson body{{"index", index}, {"size", bindings_to_json(spec.sizes[index])}, {"known", known(index)}};
      transport.send(
          {Message::Kind::assign, rank, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
    }
  };
  auto welcome = [&](int rank, const ojson& body) {
    if (body.contains("error")) {
      if (rank == 0) fatal = body.at("error");
      else retire(rank, fmt::format("{} cannot tune: {}; it tunes nothing", who(rank), message_of(body.at("error"))));
      return;
    }
    // The compiler's identity (its release) is part of the kernel's, so a
    // rank on a host with another compiler release would store its trials as
    // another kernel's: say that, not that the command differed.
    if (const std::string compiler = body.value("compiler", ""); rank != 0 && compiler != own_compiler)
      return retire(rank, fmt::format("{}'s compiler is not rank 0's ({} against {}): it tunes nothing, as its "
                                      "trials would be another kernel's (give every rank the same compiler release)",
                                      who(rank), compiler.empty() ? "none found" : compiler,
                                      own_compiler.empty() ? "none found" : own_compiler));
    if (body.value("tune", "") != identity)
      return retire(rank, fmt::format("{} was started with another spec, kernel source, space or sizes than rank 0 "
                                      "({}): it tunes nothing, so that its trials are not stored as this tune's "
                                      "(give every rank the same command)",
                                      who(rank), spec.file.string()));
    const std::string device = body.at("device").get<std::string>();
    if (rank == 0) report.device = device;
    if (device != report.device)
      return retire(rank, fmt::format("{} tunes on {}, not on rank 0's {}: it tunes nothing, so that no size's best "
                                      "is picked across two machines (run one job per machine kind)",
                                      who(rank), device, report.device));
    idle.push_back(rank);
    if (body.value("measures_on_host", false)) on_host[hosts[rank]].push_back(rank);
  };

  auto ended = [&] {
    if (heard < ranks || !busy.empty()) return false;
    return pending.empty() || fatal || stopping() || retired == ranks;
  };
  while (!ended()) {
    if (stop_requested()) halt();
    const auto m = transport.receive(std::chrono::milliseconds(100));
    if (!m) continue;
    const ojson body = ojson::parse(m->body);
    switch (m->kind) {
      case Message::Kind::hello: {
        ++heard;
        hosts[m->rank] = body.value("host", "an unnamed host");
        if (m->rank != 0 && !heard_rank0) {
          early.emplace_back(m->rank, body);
          break;
        }
        welcome(m->rank, body);
        if (m->rank == 0) {
          heard_rank0 = true;
          for (const auto& [rank, hello] : early) welcome(rank, hello);
          early.clear();
        }
        break;
      }
      case Message::Kind::trial: {
        TrialRecord t = trial_from_json(body.at("trial"));
        t.id = 0;  // the rank's scratch store's; the store's own is found by the trial's key
        const bool exclusive = body.at("exclusive").get<bool>();
        store.put(t, exclusive);
        if (options.on_stored) options.on_stored(t, exclusive);
        this_run.insert(trial_key(t));
        if (t.status == Status::ok && !is_base_trial(t) && (!best || t.stats.median < *best)) best = t.stats.median;
        break;
      }
      case Message::Kind::progress: {
        Count& c = counts[body.at("index").get<std::size_t>()];
        c.done = body.at("done").get<std::size_t>();
        c.planned = body.at("total").get<std::size_t>();
        show(fmt::format("rank {}: {}", m->rank, body.at("current").get<std::string>()));
        break;
      }
      case Message::Kind::done: {
        const std::size_t index = busy.at(m->rank);
        busy.erase(m->rank);
        worked.insert(m->rank);
        if (auto c = counts.find(index); c != counts.end()) c->second.planned = c->second.done;
        show(fmt::format("rank {}: size {} tuned", m->rank, size_key(spec.sizes[index])));
        for (const auto& s : body.at("sizes")) {
          SizeReport sr = size_report_from_json(s);
          for (auto& t : sr.trials)
            if (auto stored = store.find(t.spec_hash, t.device, t.size, t.config)) t.id = stored->id;
          tuned[index] = std::move(sr);
        }
        for (const auto& w : body.at("warnings")) {
          auto text = w.get<std::string>();
          if (std::find(report.warnings.begin(), report.warnings.end(), text) == report.warnings.end())
            report.warnings.push_back(std::move(text));
        }
        if (report.seeded_by.empty()) report.seeded_by = body.at("seeded_by").get<std::vector<std::string>>();
        report.resumed += body.at("resumed").get<std::size_t>();
        report.retried += body.at("retried").get<std::size_t>();
        report.measured_again_after_kill += body.at("measured_again_after_kill").get<std::size_t>();
        if (body.at("interrupted").get<bool>())
          rank_stopped(m->rank, fmt::format("while it tuned size {}", size_key(spec.sizes[index])));
        report.build += Seconds(body.at("build").get<double>());
        report.build_wait += Seconds(body.at("build_wait").get<double>());
        report.measure += Seconds(body.at("measure").get<double>());
        report.device_busy += Seconds(body.at("device_busy").get<double>());
        report.flush += Seconds(body.at("flush").get<double>());
        report.verify += Seconds(body.at("verify").get<double>());
        if (!tuned[index] && !report.interrupted) pending.push_front(index);
        idle.push_back(m->rank);
        break;
      }
      case Message::Kind::failed: {
        const std::size_t index = busy.at(m->rank);
        busy.erase(m->rank);
        const ojson& error = body.at("error");
        if (error.at("input").get<bool>()) {
          if (!fatal) fatal = error;
          break;
        }
        pending.push_front(index);
        if (body.value("stopped", false)) {
          rank_stopped(m->rank, fmt::format("while it planned size {}", size_key(spec.sizes[index])));
          break;
        }
        if (stopping()) {  // no size is handed out any more: the rank need not be retired
          report.warnings.push_back(fmt::format("{} could not tune size {}: {}", who(m->rank),
                                                size_key(spec.sizes[index]), message_of(error)));
          break;
        }
        retire(m->rank, fmt::format("{} could not tune size {}: {}; it tunes nothing more, and the size went to "
                                    "another rank",
                                    who(m->rank), size_key(spec.sizes[index]), message_of(error)));
        break;
      }
      case Message::Kind::stopped:
        rank_stopped(m->rank, "while it waited for a size");
        break;
      default:
        throw std::runtime_error(fmt::format("rank {} sent a message rank 0 does not take", m->rank));
    }
    assign();
  }
  for (int rank = 0; rank < ranks; ++rank) stop(rank);
  if (fatal) throw_error(*fatal);
  for (const auto& [host, sharing] : on_host)
    if (sharing.size() > 1)
      report.warnings.push_back(fmt::format(
          "ranks {} ran on one host ({}) and time their kernels on its cores: each measured while the others built "
          "and ran, so their timings disturb each other; run one rank per host (mpirun --map-by ppr:1:node)",
          fmt::join(sharing, ", "), host));

  for (auto& s : tuned)
    if (s) report.sizes.push_back(std::move(*s));
  report.interrupted |= stopping() && !pending.empty();
  if (!pending.empty() && !report.interrupted) {
    std::string why;
    for (const auto& w : report.warnings) why += "\n  " + w;
    throw std::runtime_error(fmt::format("no rank could tune {} of the {} sizes:{}", pending.size(),
                                         spec.sizes.size(), why));
  }
  if (auto w = noise_warning(report)) report.warnings.push_back(*w);
  // The job's store is this rank's to close, as a tune's is the tuner's.
  if (auto w = detail::fold_write_ahead_log(report.db)) report.warnings.push_back(*w);
  report.ranks = std::max<std::size_t>(worked.size(), 1);
  report.wall = Clock::now() - start;
  return report;
}

}  // namespace tunekit::detail
