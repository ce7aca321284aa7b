// The replay backend: trials answered from recorded results (recording.hpp)
// instead of run, for `tunekit tune --replay FILE`. It serves no kernel
// language; the tuner picks it when TuneOptions::replay names a recording.
// Building is a no-op; the evaluator looks the trial's size and config up
// (a recorded failure is the trial's status), and the backend's clock
// advances by each served trial's recorded compile and run time, which is
// what search.max_time counts here.
#include <algorithm>
#include <fstream>
#include <string_view>
#include <vector>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/detail/registry.hpp"
#include "core/detail/hash.hpp"
#include "tunekit/measure.hpp"
#include "tunekit/recording.hpp"
#include "tunekit/spec.hpp"

namespace tunekit::replay {

namespace {

struct Shared {
  std::vector<Recording> recordings;
  std::mutex mutex;
  Seconds clock{0};
};

// The recording of a size: a store's recording names its size; a Kernel
// Tuner cache, which records one unnamed size, fits any.
const Recording* recording_of(const Shared& shared, const Bindings& values) {
  for (const Recording& r : shared.recordings)
    if (std::all_of(r.size().begin(), r.size().end(), [&](const auto& kv) {
          auto it = values.find(kv.first);
          return it != values.end() && it->second == kv.second;
        }))
      return &r;
  return nullptr;
}

class ReplayBuilder final : public Builder {
 public:
  BuildResult build(const BuildInput& input) override {
    BuildResult r;
    r.artifact.hash = "replay:" + input.config.key();
    r.cached = true;
    return r;
  }
};

class ReplayEvaluator final : public Evaluator {
 public:
  explicit ReplayEvaluator(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

  TrialResult evaluate(const TrialRequest& rq) override {
    const Recording& rec = recording_for(rq.values);
    std::vector<std::pair<std::string, Value>> entries;
    for (const auto& p : rec.parameters()) {
      auto it = rq.values.find(p.name);
      if (it == rq.values.end())
        throw InputError(
            {rec.file().string()},
            fmt::format("it records parameter '{}', which the spec does not have (a recording of another kernel?)",
                        p.name));
      entries.emplace_back(p.name, it->second);
    }
    const Config config(std::move(entries));
    const RecordedResult* r = rec.find(config);
    if (!r)
      throw InputError({rec.file().string()}, fmt::format("the recording lacks {}{}", config.str(),
                                                          rec.size().empty() ? "" : " at " + size_key(rec.size())));
    TrialResult out;
    out.status = r->status;
    out.error = r->error;
    out.recorded = TrialResult::Recorded{r->compile_time, r->run_time};
    if (r->time) {
      out.samples = {*r->time};
      out.stats = summarize(out.samples);
      // The early stop, as a live tune applies it: a recorded time past this
      // run's bar is a trial cut short (its time kept as its few samples'
      // would be), which nothing names best. A trial the recording holds as
      // cut short is judged again here, against this run's bar.
      if (out.status == Status::ok)
        if (auto bar = early_stop_bar(rq.measure); bar && *r->time > *bar) out.status = Status::slower;
    }
    // The recorded run time is the backend's clock (search.max_time), not
    // device time of this run.
    std::lock_guard lock(shared_->mutex);
    shared_->clock += r->cost();
    return out;
  }

 private:
  const Recording& recording_for(const Bindings& values) const {
    if (const Recording* r = recording_of(*shared_, values)) return *r;
    const Recording& any = shared_->recordings.front();
    std::vector<std::string> sizes;
    for (const Recording& r : shared_->recordings) sizes.push_back(size_key(r.size()));
    throw InputError({any.file().string()},
                     fmt::format("it records no trials at this size (it has: {})", fmt::join(sizes, "; ")));
  }

  std::shared_ptr<Shared> shared_;
};

// The first 12 hex digits of a hash of the file's bytes.
std::string content_hash(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  ::tunekit::detail::Hasher h;
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0)
    h.add(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  return h.hex().substr(0, 12);
}

class ReplayBackend final : public Backend {
 public:
  explicit ReplayBackend(const BackendOptions& options)
      : shared_(std::make_shared<Shared>()), time_budget_(options.spec && options.spec->search.max_time) {
    if (options.recording.empty())
      throw std::runtime_error("the replay backend needs a recording (tunekit tune --replay FILE)");
    // A store may hold several kernels: the spec's, by its name.
    shared_->recordings = recordings_of_kernel(load_recordings(options.recording), options.recording_kernel);
    if (!options.parameters.empty())
      for (const auto& r : shared_->recordings) check_parameters(r, options.parameters);
    const Recording& first = shared_->recordings.front();
    std::string device = first.device().empty() ? options.recording.filename().string() : first.device();
    for (const auto& r : shared_->recordings)
      if (r.device() != first.device())
        throw InputError({options.recording.string()},
                         fmt::format("it records several devices ('{}', '{}'); replay one device's results",
                                     first.device(), r.device()));
    if (!first.machine().empty()) {
      try {
        machine_ = machine_from_json(first.machine());
      } catch (const std::exception&) {
        machine_ = {};
      }
    }
    // The recording's own bytes name it too: a tune of another recording of
    // the same device (a cache measured again, a file edited) into the same
    // store must not resume this one's trials.
    machine_.device = fmt::format("replay: {} (recording {})", device, content_hash(options.recording));
  }
  std::string_view name() const override { return "replay"; }
  const MachineInfo& machine() const override { return machine_; }
  std::unique_ptr<Builder> make_builder() override { return std::make_unique<ReplayBuilder>(); }
  std::unique_ptr<Evaluator> make_evaluator() override { return std::make_unique<ReplayEvaluator>(shared_); }
  bool measures_while_building() const override { return false; }
  std::optional<Seconds> clock() const override {
    std::lock_guard lock(shared_->mutex);
    return shared_->clock;
  }
  // Every size to tune has its recording, and the recording every config
  // the tune may run there (with its times, under a time budget), checked
  // before the first size is tuned: else the run ended midway, at the first
  // lacking config the search happened to propose, so whether it failed
  // depended on the seed. A Kernel Tuner cache's one unnamed size fits any.
  void check_sizes(const std::vector<SizeToServe>& sizes) const override {
    std::vector<std::string> missing, held;
    for (const Recording& r : shared_->recordings) held.push_back(size_key(r.size()));
    for (const SizeToServe& s : sizes)
      if (!recording_of(s.size)) missing.push_back(size_key(s.size));
    if (!missing.empty())
      throw InputError({shared_->recordings.front().file().string()},
                       fmt::format("it records no trials at {} of the spec's sizes: {} (it has: {})", missing.size(),
                                   fmt::join(missing, "; "), fmt::join(held, "; ")));
    for (const SizeToServe& s : sizes) {
      const Recording& rec = *recording_of(s.size);
      // The first lacking config is enough to name: counting them all could
      // walk a space far larger than any recording.
      std::optional<Config> lacking;
      s.for_each_config([&](const Config& c) {
        const RecordedResult* r = rec.find(c);
        if (r && time_budget_) require_recorded_cost(rec, *r);
        if (r) return true;
        lacking = c;
        return false;
      });
      if (lacking)
        throw InputError({rec.file().string()},
                         fmt::format("it lacks {}{}, a config this tune may run (a recording of another space, or of "
                                     "a tune that was not exhaustive? `tunekit tune --replay` needs each valid config "
                                     "of the spec's space, as `tunekit replay` does)",
                                     lacking->str(), rec.size().empty() ? "" : " at " + size_key(rec.size())));
    }
  }
  std::vector<std::string> warnings() const override {
    std::vector<std::string> out;
    for (const auto& r : shared_->recordings) out.insert(out.end(), r.warnings().begin(), r.warnings().end());
    return out;
  }

 private:
  const Recording* recording_of(const Bindings& size) const { return replay::recording_of(*shared_, size); }

  std::shared_ptr<Shared> shared_;
  // search.max_time, which counts each served trial's recorded times: a
  // config whose file lacks some is refused before the first size.
  bool time_budget_;
  MachineInfo machine_;
};

}  // namespace

BackendInfo backend_info() {
  BackendInfo b;
  b.name = "replay";
  b.summary =
      "recorded results instead of runs (`tunekit tune --replay FILE`): Kernel Tuner caches (original or "
      "T4, gzipped or not) or a tunekit results DB; a recorded failure is the trial's status, and "
      "search.max_time counts the recorded compile and run times";
  b.make = [](const BackendOptions& o) -> std::unique_ptr<Backend> { return std::make_unique<ReplayBackend>(o); };
  b.list_devices = [] {
    return DeviceListing{"replay", {}, "serves recorded results: tunekit tune --replay FILE, tunekit replay FILE"};
  };
  return b;
}

}  // namespace tunekit::replay
