#include "tuner/detail/failure_reuse.hpp"

#include <charconv>
#include <map>
#include <optional>
#include <string>

namespace tunekit::detail {
namespace {

using Settings = std::map<std::string, std::string, std::less<>>;

// settings_key()'s words, `name=value` each; nullopt for any other text.
std::optional<Settings> words_of(std::string_view key) {
  Settings out;
  while (!key.empty()) {
    const auto end = key.find(' ');
    const std::string_view word = key.substr(0, end);
    key = end == std::string_view::npos ? std::string_view{} : key.substr(end + 1);
    if (word.empty()) continue;
    const auto eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    out.emplace(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
  }
  return out;
}

// A limit's seconds ("2s", "0.5s"); nullopt for anything else.
std::optional<double> seconds_of(std::string_view v) {
  if (!v.ends_with('s')) return std::nullopt;
  v.remove_suffix(1);
  double s = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return s;
}

const std::string* find(const Settings& s, std::string_view name) {
  const auto it = s.find(name);
  return it == s.end() ? nullptr : &it->second;
}

bool same(const Settings& then, const Settings& now, std::string_view name) {
  const std::string* a = find(then, name);
  const std::string* b = find(now, name);
  return a == b || (a && b && *a == *b);
}

// A failure for want of time under a limit still fails under one no longer
// than it. A limit one key has and the other lacks is the backend's
// default, which is not known here: only the same key stands then.
bool no_longer(const std::string* a, const std::string* b) {
  if (!a || !b) return a == b;
  const auto was = seconds_of(*a), is = seconds_of(*b);
  return was && is ? *is <= *was : *a == *b;
}

bool no_longer(const Settings& then, const Settings& now, std::string_view name) {
  return no_longer(find(then, name), find(now, name));
}

// The limit on a trial's run: an application's run_timeout where it has
// one, which alone bounds its runs (the command backend times each run by
// run_timeout, else by the timeout; `tunekit tune --timeout` sets both), so
// a measure.timeout edited beside it changes nothing; else the timeout.
const std::string* run_limit(const Settings& s) {
  if (const std::string* fixed = find(s, "run_timeout")) return fixed;
  return find(s, "timeout");
}

}  // namespace

bool failure_stands(Status status, std::string_view then_key, std::string_view now_key) {
  if (then_key.empty()) return false;
  const auto then = words_of(then_key), now = words_of(now_key);
  if (!then || !now) return then_key == now_key;
  switch (status) {
    case Status::timeout:
      // The limit covers the warm-up and the sampling (and a cold cache's
      // flushes): a shorter one that leaves more of itself to the kernel
      // might not run out, so those must be the same.
      return no_longer(run_limit(*then), run_limit(*now)) && same(*then, *now, "cache") &&
             same(*then, *now, "warmup") && same(*then, *now, "max_time") && same(*then, *now, "min_samples");
    case Status::compile_error:
      return no_longer(*then, *now, "build_timeout");
    case Status::wrong_result:
      return same(*then, *now, "atol") && same(*then, *now, "rtol");
    case Status::crash:
    case Status::launch_error:
    case Status::resource_limit:
      return true;
    default:
      return then_key == now_key;
  }
}

}  // namespace tunekit::detail
