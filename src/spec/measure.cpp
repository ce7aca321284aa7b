// The `tolerance`, `measure` and `output` sections.
#include "spec/detail/loader.hpp"

#include "tunekit/output.hpp"

namespace tunekit::spec_detail {

void Loader::tolerance(const Item& it, Spec& s) const {
  Map t = map(it, {"atol", "rtol"}, "a mapping {atol: number, rtol: number}");
  if (auto x = get(t, "atol")) s.tolerance.atol = non_negative(*x);
  if (auto x = get(t, "rtol")) s.tolerance.rtol = non_negative(*x);
}

void Loader::measure(const Item& it, Spec& s) const {
  Map t = map(it, {"warmup", "min_samples", "max_samples", "max_time", "noise", "cache", "timeout", "early_stop",
                   "confirm", "confirm_rounds", "graph"});
  MeasureSettings& ms = s.measure;
  if (auto x = get(t, "warmup")) ms.warmup = std::chrono::duration_cast<Microseconds>(duration_of(*x, false));
  if (auto x = get(t, "min_samples")) ms.min_samples = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
  if (auto x = get(t, "max_samples")) ms.max_samples = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
  if (ms.min_samples > ms.max_samples) {
    auto x = get(t, "max_samples");
    Item at = x ? *x : *get(t, "min_samples");
    fail(content_loc(at), "'measure.min_samples' (" + std::to_string(ms.min_samples) +
                              ") exceeds 'measure.max_samples' (" + std::to_string(ms.max_samples) + ")");
  }
  if (auto x = get(t, "max_time")) ms.max_time = duration_of(*x, true);
  if (auto x = get(t, "noise")) {
    ms.target_noise = non_negative(*x);
    // A share of the median: 5 would ask for 500%, which every measurement meets.
    if (ms.target_noise >= 1)
      fail(content_loc(*x), display(x->path) + " is the relative noise to reach, a share below 1 (0.02 is 2%; 0: no "
                                                "target), got " + x->node.Scalar());
  }
  if (auto x = get(t, "cache")) ms.cache = enum_of(*x, cache_mode_names());
  if (auto x = get(t, "timeout")) ms.timeout = duration_of(*x, true);
  if (auto x = get(t, "early_stop")) {
    if (!x->node.IsScalar()) wrong_type(*x, "a factor > 1 or off");
    try {
      ms.early_stop = parse_early_stop(x->node.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(content_loc(*x), display(x->path) + ": " + e.what());
    }
    // The objective is read first (Loader::load).
    if (auto why = early_stop_conflict(s.objective); why && ms.early_stop > 0)
      fail(content_loc(*x), display(x->path) + " turns the early stop on, but " + *why +
                                "; expected off (or leave it out: under this objective every config is measured "
                                "in full)");
  }
  if (auto x = get(t, "confirm")) {
    // As early_stop reads its off (no, and false as YAML writes it).
    const bool off = x->node.IsScalar() && is_plain(x->node) &&
                     (is_boolean(*x) ? !value_of(*x).truthy() : x->node.Scalar() == "off" || x->node.Scalar() == "no");
    ms.confirm =
        off ? 0 : static_cast<std::size_t>(int_of(*x, 0, "a count of the fastest configs to measure again, or off"));
  }
  if (auto x = get(t, "confirm_rounds")) ms.confirm_rounds = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
  // An application's timeout bounds each run of its program, not the trial.
  if (!backend_for_language(s.kernel.language).kernel.application)
    if (auto why = sampling_outlasts_timeout(ms)) {
      // At the timeout's key, else at the longer of the two times that the
      // default timeout cannot hold (the defaults fit: one of them is set).
      const bool sampling_longer = ms.max_time >= ms.warmup;
      auto x = get(t, "timeout");
      for (const char* key : {sampling_longer ? "max_time" : "warmup", sampling_longer ? "warmup" : "max_time"})
        if (!x) x = get(t, key);
      fail(content_loc(*x), "'measure.warmup', 'measure.max_time' and 'measure.timeout': " + *why);
    }
  if (auto x = get(t, "graph")) {
    if (!backend_for_language(s.kernel.language).kernel.tensors)
      fail(loc(t.find("graph")->key_node), "'measure.graph' applies to " + languages_with(&KernelTraits::tensors) +
                                               " kernels (the CUDA worker replays graphs of short kernels by itself)");
    ms.graph = enum_of<bool>(*x, {{"true", true}, {"false", false}});
  }
}

void Loader::output(const Item& it, Spec& s) const {
  std::vector<std::string> keys{"db"};
  for (const WriterInfo& w : writers().entries())
    if (w.writes_file) keys.push_back(w.name);
  Map t = map(it, keys);
  for (const Entry& e : t.entries) {
    const Item value = child(t, e);
    // `csv: true` asks for the writer's default file and `json: false` (or
    // off) for none: a file named "true" is never what was meant, nor one
    // named "yes" (YAML 1.1's true), which is refused rather than guessed.
    const bool plain = is_plain(value.node) && value.node.IsScalar();
    if (plain && (value.node.Scalar() == "yes" || value.node.Scalar() == "no" || value.node.Scalar() == "on"))
      fail(content_loc(value), fmt::format("'output.{}': '{}' is no file name here; expected true (the writer's "
                                           "default file), false (none) or a path (quoted, for a file named {})",
                                           e.key, value.node.Scalar(), value.node.Scalar()));
    if (plain && (is_boolean(value) || value.node.Scalar() == "off")) {
      const bool on = is_boolean(value) && value_of(value).truthy();
      if (e.key == "db") {
        if (!on)
          fail(content_loc(value),
               "'output.db' cannot be false: every tune keeps its trials in a store; give a file path, or leave the "
               "key out for <out-dir>/tunekit.db");
        continue;
      }
      if (on) s.output.files[e.key] = std::filesystem::path();
      else s.output.off.insert(e.key);
      continue;
    }
    const std::string file = string_of(value, "a file path, true (the writer's default file) or false (none)");
    s.output.where[e.key] = content_loc(value);
    if (e.key == "db") s.output.db = file;
    else s.output.files[e.key] = file;
  }
}

}  // namespace tunekit::spec_detail
