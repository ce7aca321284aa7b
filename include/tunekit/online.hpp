#pragma once
// Online tuning, header-only: a program asks for the config of the problem
// size at hand. Tuned sizes come from a JSON file (as `tunekit emit --json`
// writes it); a size seen for the first time is tuned through a callback,
// when allowed, and saved to the same file, so the next run starts tuned.
// This is how Triton's key-based autotune and KTT's online tuning work.
//
// Needs only the standard library and nlohmann/json.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunekit::online {

using Size = std::map<std::string, std::int64_t>;    // problem size: name -> value
using Params = std::map<std::string, std::int64_t>;  // a config: parameter -> value

enum class Mode {
  lookup_only,          // never tune: unknown sizes get the nearest tuned size's config
  tune_on_first_sight,  // tune unknown sizes through the callback, then save
};

struct Choice {
  Params params;
  enum class Source { stored, tuned, nearest } source = Source::stored;
};

class Tuner {
 public:
  explicit Tuner(std::filesystem::path file, Mode mode = Mode::tune_on_first_sight)
      : file_(std::move(file)), mode_(mode) {
    std::ifstream in(file_);
    if (!in) return;
    const auto j = nlohmann::json::parse(in);
    kernel_ = j.value("kernel", std::string());
    for (const auto& e : j.at("entries")) {
      Entry entry;
      for (const auto& [k, v] : e.at("size").items()) entry.size[k] = v.get<std::int64_t>();
      for (const auto& [k, v] : e.at("config").items())
        if (v.is_number()) entry.params[k] = v.get<std::int64_t>();
      if (e.contains("time_us") && e["time_us"].is_number()) entry.time_us = e["time_us"].get<double>();
      entries_.push_back(std::move(entry));
    }
  }

  // The config for `size`. `tune(size)` returns the best params and their
  // time in microseconds; it is called at most once per size and file.
  Choice get(const Size& size, const std::function<std::pair<Params, double>(const Size&)>& tune) {
    std::lock_guard lock(mutex_);
    if (auto p = find_locked(size)) return {*p, Choice::Source::stored};
    if (mode_ == Mode::tune_on_first_sight && tune) {
      auto [params, time_us] = tune(size);
      entries_.push_back({size, params, time_us});
      save_locked();
      return {params, Choice::Source::tuned};
    }
    if (auto p = nearest_locked(size)) return {*p, Choice::Source::nearest};
    throw std::runtime_error("tunekit::online: no tuned config, and tuning is not allowed");
  }

  std::optional<Params> find(const Size& size) const {
    std::lock_guard lock(mutex_);
    return find_locked(size);
  }

  // The rule of `tunekit emit`: the tuned size nearest in log space (the
  // smallest product over the axes of max(a, b) / min(a, b)).
  std::optional<Params> nearest(const Size& size) const {
    std::lock_guard lock(mutex_);
    return nearest_locked(size);
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    Size size;
    Params params;
    std::optional<double> time_us;
  };

  std::optional<Params> find_locked(const Size& size) const {
    for (const auto& e : entries_)
      if (e.size == size) return e.params;
    return std::nullopt;
  }

  std::optional<Params> nearest_locked(const Size& size) const {
    const Entry* best = nullptr;
    double best_d = 0;
    for (const auto& e : entries_) {
      double d = 1;
      for (const auto& [k, v] : size) {
        auto it = e.size.find(k);
        if (it == e.size.end()) continue;
        const double a = v < 1 ? 1.0 : static_cast<double>(v),
                     b = it->second < 1 ? 1.0 : static_cast<double>(it->second);
        d *= a > b ? a / b : b / a;
      }
      if (!best || d < best_d) best = &e, best_d = d;
    }
    if (!best) return std::nullopt;
    return best->params;
  }

  void save_locked() const {
    nlohmann::ordered_json j;
    j["kernel"] = kernel_;
    j["selection"] = "online";
    j["entries"] = nlohmann::ordered_json::array();
    for (const auto& e : entries_) {
      nlohmann::ordered_json entry;
      entry["size"] = e.size;
      entry["config"] = e.params;
      entry["time_us"] = e.time_us ? nlohmann::ordered_json(*e.time_us) : nlohmann::ordered_json(nullptr);
      j["entries"].push_back(entry);
    }
    if (file_.has_parent_path()) std::filesystem::create_directories(file_.parent_path());
    // Write then rename: a program killed mid-save leaves the old file whole.
    const auto tmp = file_.string() + ".tmp";
    std::ofstream(tmp) << j.dump(2) << "\n";
    std::filesystem::rename(tmp, file_);
  }

  std::filesystem::path file_;
  Mode mode_;
  std::string kernel_;
  std::vector<Entry> entries_;
  mutable std::mutex mutex_;
};

// A ready-made tuning callback body: times `run(params)` for each candidate
// (median of `repeats` after one warm-up call) and returns the fastest.
inline std::pair<Params, double> fastest(const std::vector<Params>& candidates,
                                         const std::function<void(const Params&)>& run, int repeats = 5) {
  std::pair<Params, double> best{{}, -1};
  for (const auto& p : candidates) {
    run(p);
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      run(p);
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    const double median = t[t.size() / 2];
    if (best.second < 0 || median < best.second) best = {p, median};
  }
  return best;
}

}  // namespace tunekit::online
