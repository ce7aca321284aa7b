#include <signal.h>

#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/command/detail/command_backend.hpp"
#include "core/detail/process.hpp"
#include "evaluator/detail/killed_from_outside.hpp"

namespace tunekit::command {

namespace fs = std::filesystem;

namespace {

// A number spelled out in full ("12.5", "3e2", " 7 "); nullopt otherwise,
// with `out_of_range` set for a number a double cannot hold ("1e999").
std::optional<double> parse_number(std::string_view text, bool* out_of_range = nullptr) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  const std::string s(text);
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  if (!std::isfinite(d)) {
    // "inf" and "nan" are words, not numbers out of range.
    if (out_of_range) *out_of_range = std::isdigit(static_cast<unsigned char>(s.back())) != 0;
    return std::nullopt;
  }
  return d;
}

// Why a time of `number` (as printed, e.g. "1e999") cannot be read, `where`
// it was found.
std::string out_of_range(std::string_view number, std::string_view where) {
  return fmt::format("the number {} {} is out of range for a double", number, where);
}

// The token where nlohmann's parser stopped with error `id`: it takes a
// number beyond a double's range for an error of the document (406), and
// only its SAX interface says which number that was.
class ParseError final : public nlohmann::json_sax<nlohmann::json> {
 public:
  int id = 0;
  std::string token;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string& last_token, const nlohmann::json::exception& e) override {
    id = e.id;
    token = last_token;
    return false;
  }
};
constexpr int kNumberOverflow = 406;  // nlohmann's out_of_range.406

// The value at a dotted path: "a.b.c", with array elements as "[2]" or ".2".
const nlohmann::json* walk(const nlohmann::json& root, const std::string& path) {
  const nlohmann::json* j = &root;
  std::size_t i = 0;
  auto index = [&](std::size_t n) -> bool {
    if (!j->is_array() || n >= j->size()) return false;
    j = &(*j)[n];
    return true;
  };
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      continue;
    }
    if (path[i] == '[') {
      const auto close = path.find(']', i);
      if (close == std::string::npos) return nullptr;
      auto n = parse_number(std::string_view(path).substr(i + 1, close - i - 1));
      if (!n || *n < 0 || *n != std::floor(*n) || !index(static_cast<std::size_t>(*n))) return nullptr;
      i = close + 1;
      continue;
    }
    std::size_t end = path.find_first_of(".[", i);
    if (end == std::string::npos) end = path.size();
    const std::string key = path.substr(i, end - i);
    if (j->is_object()) {
      auto it = j->find(key);
      if (it == j->end()) return nullptr;
      j = &*it;
    } else if (j->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
      if (!index(std::stoul(key))) return nullptr;
    } else {
      return nullptr;
    }
    i = end;
  }
  return j;
}

std::optional<double> number_at(const nlohmann::json& doc, const std::string& path, std::string& why) {
  const nlohmann::json* j = walk(doc, path);
  if (!j) {
    why = "the JSON output has no '" + path + "'";
    return std::nullopt;
  }
  if (j->is_number()) return j->get<double>();
  bool too_large = false;
  if (j->is_string())
    if (auto d = parse_number(j->get<std::string>(), &too_large)) return d;
  why = too_large ? out_of_range(j->get<std::string>(), "at '" + path + "' in the JSON output")
                  : "'" + path + "' in the JSON output is " + j->dump() + ", not a number";
  return std::nullopt;
}

std::optional<double> read_json(const std::string& path, const std::string& output, std::string& why) {
  // The whole output, else its JSON lines from the last one up, else the
  // span from the first '{' to the last '}'.
  std::vector<std::string> candidates{output};
  std::size_t end = output.size();
  while (end > 0) {
    std::size_t begin = output.rfind('\n', end - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::string line = output.substr(begin, end - begin);
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && (line[first] == '{' || line[first] == '[')) candidates.push_back(line);
    end = begin == 0 ? 0 : begin - 1;
  }
  if (auto open = output.find('{'), close = output.rfind('}');
      open != std::string::npos && close != std::string::npos && open < close)
    candidates.push_back(output.substr(open, close - open + 1));
  bool parsed = false;
  std::string first_why;
  std::string overflow;  // a number no double holds, which stopped a candidate from parsing
  for (const auto& text : candidates) {
    auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      ParseError error;
      nlohmann::json::sax_parse(text, &error);
      if (error.id == kNumberOverflow && overflow.empty()) overflow = error.token;
      continue;
    }
    parsed = true;
    std::string w;
    if (auto d = number_at(doc, path, w)) return d;
    if (first_why.empty()) first_why = w;
  }
  // A document that held the time in a number too large is the likelier
  // reason than another document without it.
  if (!overflow.empty()) why = out_of_range(overflow, "in the JSON output");
  else why = parsed ? first_why : "the output holds no JSON document";
  return std::nullopt;
}

// libstdc++'s regex search backtracked by recursion, one call per character
// a quantifier takes (a line of 30k digits overflowed tunekit's stack), and
// it can backtrack exponentially on a pattern such as `(a+)+x`. Its automaton
// mode (an extension) keeps a set of states instead, for the same matches,
// and hands a pattern with back-references to the backtracking search.
constexpr std::regex::flag_type kRegexFlags = std::regex::ECMAScript
#if defined(__GLIBCXX__)
                                              | std::regex_constants::__polynomial
#endif
    ;
// Either way a search takes time quadratic in a line's length where the
// pattern starts a match at every character (`([0-9.]+) us` over a progress
// bar of dots: 0.25 s for 4 KiB). So it keeps to what a time line needs: the
// lines from the last one up, since the last match wins, each in its first
// and last kRegexLineEnd bytes, and no more than kRegexSearched bytes in all.
constexpr std::size_t kRegexLineEnd = 1 << 9;
constexpr std::size_t kRegexSearched = 1 << 18;

std::optional<double> read_regex(const std::string& pattern, const std::string& output, std::string& why) {
  std::regex re;
  try {
    re = std::regex(pattern, kRegexFlags);
  } catch (const std::regex_error& e) {
    why = "bad regular expression '" + pattern + "': " + e.what();
    return std::nullopt;
  }
  std::optional<std::string> text;
  auto search = [&](std::string_view part) {
    for (std::regex_iterator<std::string_view::const_iterator> it(part.begin(), part.end(), re), stop; it != stop;
         ++it) {
      const auto& m = *it;
      text = m[re.mark_count() >= 1 && m[1].matched ? 1 : 0].str();
    }
  };
  const std::string_view all(output);
  std::size_t end = all.size(), searched = 0;
  bool cut = false;
  while (!text) {
    if (searched >= kRegexSearched) {
      cut = end > 0;
      break;
    }
    const std::size_t nl = end == 0 ? std::string_view::npos : all.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    const std::string_view line = all.substr(begin, end - begin);
    if (line.size() <= 2 * kRegexLineEnd) {
      search(line);
    } else {  // the tail's match is the later one
      search(line.substr(0, kRegexLineEnd));
      std::optional<std::string> head = std::move(text);
      text.reset();
      search(line.substr(line.size() - kRegexLineEnd));
      if (!text) text = std::move(head);
    }
    searched += std::min(line.size(), 2 * kRegexLineEnd) + 1;
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  if (!text) {
    why = "the regex '" + pattern + "' matches nothing in the output" +
          (cut ? fmt::format(" (searched from its last line up, {} KiB of it)", kRegexSearched >> 10) : "");
    return std::nullopt;
  }
  bool too_large = false;
  if (auto d = parse_number(*text, &too_large)) return d;
  why = too_large ? out_of_range(*text, "that the regex '" + pattern + "' matched")
                  : "the regex '" + pattern + "' matched '" + *text + "', which is not a number";
  return std::nullopt;
}

// A failed run ends the trial with this status.
struct RunFailure {
  Status status;
  std::string error;
  Fault fault = Fault::none;
  bool interrupted = false;
  int killed_by = 0;  // a signal from outside (the OOM killer's, a user's) that ended the run
};

}  // namespace

std::optional<double> read_time_us(const TimeSource& time, const std::string& output, std::string& why) {
  std::optional<double> v;
  switch (time.kind) {
    case TimeSource::Kind::wall:
      why = "wall time is measured, not read";
      return std::nullopt;
    case TimeSource::Kind::regex:
      v = read_regex(time.pattern, output, why);
      break;
    case TimeSource::Kind::json:
      v = read_json(time.pattern, output, why);
      break;
  }
  if (!v) return std::nullopt;
  if (*v < 0) {
    why = fmt::format("the reported time {} is negative", *v);
    return std::nullopt;
  }
  // Zero would win every comparison: no real run takes no time.
  if (!(*v > 0) || !std::isfinite(*v)) {
    why = fmt::format("the reported time {} is not a positive number (a run that takes no time measured nothing)", *v);
    return std::nullopt;
  }
  // Nor does one of less than a picosecond (1e-320 passes the test above,
  // and would win).
  const double us = *v * time.to_us;
  if (us < 1e-6) {
    why = fmt::format("the reported time {} is less than a picosecond: no run takes so little", *v);
    return std::nullopt;
  }
  return us;
}

CommandEvaluator::CommandEvaluator(ApplicationSpec app) : app_(std::move(app)) {}

TrialResult CommandEvaluator::evaluate(const TrialRequest& rq) {
  return detail::measure_unless_killed_twice([&](int& killed_by) { return evaluate_once(rq, killed_by); }, "run");
}

TrialResult CommandEvaluator::evaluate_once(const TrialRequest& rq, int& killed_by) {
  killed_by = 0;
  TrialResult result;
  Variant v;
  v.source = rq.artifact.path;
  v.dir = rq.artifact.path.parent_path();
  v.binary = v.dir / "app";
  v.key = rq.artifact.hash;
  std::vector<std::string> argv;
  try {
    argv = expand_argv(app_.run, placeholder_values(v, rq.values));
  } catch (const std::exception& e) {
    result.status = Status::launch_error;
    result.error = std::string("the run command: ") + e.what();
    return result;
  }
  const Seconds timeout = app_.run_timeout.value_or(rq.measure.timeout);
  const std::string shown = detail::shell_quote(argv);

  auto run_once = [&]() -> Microseconds {
    detail::ProcessResult p;
    try {
      p = detail::run_process(argv, timeout, app_.workdir);
    } catch (const std::system_error& e) {
      // A program the build did not make is the config's failure; a machine
      // out of processes, memory or descriptors is not.
      const int code = e.code().value();
      const bool machine = code == EAGAIN || code == ENOMEM || code == EMFILE || code == ENFILE;
      throw RunFailure{Status::launch_error, fmt::format("cannot run the program: {}\n$ {}", e.what(), shown),
                       machine ? Fault::environment : Fault::none};
    } catch (const std::exception& e) {
      throw RunFailure{Status::launch_error, fmt::format("cannot run the program: {}\n$ {}", e.what(), shown),
                       Fault::environment};
    }
    auto failure = [&](Status s, const std::string& why) {
      const std::string said = first_output_line(p.output);
      return RunFailure{s, fmt::format("{}{}\n$ {}   (in {})\n{}", why, said.empty() ? "" : ": " + said, shown,
                                       app_.workdir.string(), output_tail(p.output))};
    };
    if (p.interrupted) throw RunFailure{Status::launch_error, "stopped", Fault::environment, true};
    if (p.timed_out)
      throw failure(Status::timeout, fmt::format("run timed out after {:.3g} s; killed", timeout.count()));
    if (p.signal) {
      RunFailure f = failure(Status::crash, "run killed by " + detail::describe_signal(p.signal));
      // The OOM killer's and a user's signals: not the config's doing.
      if (detail::signal_from_outside(p.signal)) {
        f.fault = Fault::environment;
        f.killed_by = p.signal;
      }
      throw f;
    }
    if (p.exit_code != 0) throw failure(Status::crash, fmt::format("run exited with code {}", p.exit_code));
    if (app_.time.kind == TimeSource::Kind::wall) return std::chrono::duration_cast<Microseconds>(p.wall);
    std::string why;
    auto us = read_time_us(app_.time, p.output, why);
    if (!us && p.output_dropped > 0)
      why += fmt::format(
          " (of its output, {} bytes in the middle were not kept, only the first and the last {} MiB: "
          "print the time near the start or the end)",
          p.output_dropped, detail::kKeptOutputBytes >> 20);
    if (!us) {
      // The first line of the error is what the console shows.
      RunFailure f{Status::launch_error, fmt::format("no time in the output: {}\n$ {}   (in {})\n{}", why, shown,
                                                     app_.workdir.string(), output_tail(p.output))};
      throw f;
    }
    return Microseconds(*us);
  };

  try {
    // Warm-up: collect_samples makes one run whose time it discards; the
    // others are made here. With no warm-up that run's time is kept as the
    // first sample, so every run counts once.
    for (std::size_t i = 1; i < app_.warmup; ++i) (void)run_once();
    MeasureSettings s = rq.measure;
    s.warmup = Microseconds(0);
    std::optional<Microseconds> banked;
    bool warm = false;
    auto sample = [&]() -> Microseconds {
      if (!warm) {
        warm = true;
        const Microseconds t = run_once();
        if (app_.warmup == 0) banked = t;
        return t;
      }
      if (banked) {
        const Microseconds t = *banked;
        banked.reset();
        return t;
      }
      return run_once();
    };
    // Every run is a fresh process: there is no cache to flush.
    Sampling sampled = collect_samples(s, {}, sample);
    if (sampled.cut_short) result.status = Status::slower;
    result.samples = std::move(sampled.samples);
  } catch (const RunFailure& f) {
    result.status = f.status;
    result.error = f.error;
    result.fault = f.fault;
    result.interrupted = f.interrupted;
    killed_by = f.killed_by;
    result.samples.clear();
    return result;
  }
  result.stats = summarize(result.samples);
  for (auto d : result.samples) result.device_busy += d;
  return result;
}

}  // namespace tunekit::command
