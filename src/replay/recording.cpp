// Reading recorded results: Kernel Tuner caches (original and T4, gzipped or
// not) and tunekit stores.
#include "tunekit/recording.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/detail/text.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

[[noreturn]] void fail(const fs::path& file, const std::string& why) { throw InputError({file.string()}, why); }

// The whole file, inflated when it is gzipped (zlib reads plain files as
// they are).
std::string read_contents(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) fail(file, "no such file");
  gzFile in = gzopen(file.c_str(), "rb");
  if (!in) fail(file, "cannot open: " + std::string(std::strerror(errno)));
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const int n = gzread(in, buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(in, &code);
      gzclose(in);
      fail(file, "cannot read it: " + why);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  // gzread reports a gzip stream cut short only as an end of file; gzclose's
  // status says whether the stream ended where it should.
  int code = 0;
  const bool direct = gzdirect(in) != 0;
  const std::string why = gzerror(in, &code);
  const int closed = gzclose(in);
  if (!direct && (code == Z_BUF_ERROR || closed == Z_BUF_ERROR))
    fail(file, "the gzip stream is truncated (" + (why.empty() ? std::string("unexpected end of file") : why) + ")");
  return out;
}

// Python's json writes a float nan or inf as NaN, Infinity or -Infinity,
// which JSON has no words for, and reads them back: a Kernel Tuner cache may
// hold them (a metric of a config that failed), and Kernel Tuner reads it.
// Each such word outside a string is replaced by a number of the same length,
// so that the parser's error places stay those of the file, written with an
// upper-case E, which Python never writes; the builder reads each one back as
// the float it stands for.
struct PythonWord {
  std::string_view word, stand_in;
  double value;
};
constexpr PythonWord kPythonWords[] = {
    {"NaN", "0E0", std::numeric_limits<double>::quiet_NaN()},
    {"-Infinity", "-1.0E+308", -std::numeric_limits<double>::infinity()},
    {"Infinity", "1.0E+308", std::numeric_limits<double>::infinity()},
};

// Replaces Python's words in `text`, unless a number there is already
// written as a stand-in (then the words stay, for the parser to refuse).
// Returns whether any was replaced.
bool replace_python_words(std::string& text) {
  std::vector<std::pair<std::size_t, const PythonWord*>> found;
  const auto number_char = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || (c != '\0' && std::strchr("+-.eE", c));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {  // past the string, and its escapes
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    const auto word = c != 'N' && c != 'I' && c != '-'
                          ? std::end(kPythonWords)
                          : std::find_if(std::begin(kPythonWords), std::end(kPythonWords), [&](const PythonWord& w) {
                              return text.compare(i, w.word.size(), w.word) == 0;
                            });
    if (word != std::end(kPythonWords)) {
      found.emplace_back(i, word);
      i += word->word.size() - 1;
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t end = i;
      while (end < text.size() && number_char(text[end])) ++end;
      const std::string_view number = std::string_view(text).substr(i, end - i);
      for (const PythonWord& w : kPythonWords)
        if (number == w.stand_in) return false;
      i = end - 1;
    }
  }
  for (const auto& [at, w] : found) text.replace(at, w->word.size(), w->stand_in);
  return !found.empty();
}

// Builds what Json::parse does (keys in the file's order; a key given twice
// keeps its first place and its last value), in time linear in the file.
// Json::parse finds each key among its object's keys before it by a scan, so
// a Kernel Tuner cache of n entries took n^2/2 comparisons (23 s at 117k
// entries); here an object of many keys finds them in a hash index.
class OrderedJsonBuilder {
 public:
  // `python_words`: the text's Python words were replaced (replace_python_words).
  OrderedJsonBuilder(Json& root, bool python_words) : root_(root), python_words_(python_words) {}

  bool null() { return put(nullptr), true; }
  bool boolean(bool v) { return put(v), true; }
  bool number_integer(Json::number_integer_t v) { return put(v), true; }
  bool number_unsigned(Json::number_unsigned_t v) { return put(v), true; }
  bool number_float(Json::number_float_t v, const std::string& written) {
    if (python_words_)
      for (const PythonWord& w : kPythonWords)
        if (written == w.stand_in) return put(w.value), true;
    return put(v), true;
  }
  bool string(std::string& v) { return put(std::move(v)), true; }
  bool binary(Json::binary_t& v) { return put(std::move(v)), true; }
  bool start_object(std::size_t) { return open(Json::value_t::object), true; }
  bool end_object() { return stack_.pop_back(), true; }
  bool start_array(std::size_t) { return open(Json::value_t::array), true; }
  bool end_array() { return stack_.pop_back(), true; }

  bool key(std::string& name) {
    Frame& top = stack_.back();
    auto& object = top.value->get_ref<Json::object_t&>();
    std::size_t at = object.size();
    if (top.index.empty() && object.size() < kScanned) {
      for (std::size_t i = 0; i < object.size(); ++i)
        if ((object.begin() + static_cast<std::ptrdiff_t>(i))->first == name) {
          at = i;
          break;
        }
    } else {
      if (top.index.empty())
        for (std::size_t i = 0; i < object.size(); ++i)
          top.index.emplace((object.begin() + static_cast<std::ptrdiff_t>(i))->first, i);
      at = top.index.try_emplace(name, object.size()).first->second;
    }
    if (at == object.size()) object.emplace_back(std::move(name), nullptr);
    element_ = &(object.begin() + static_cast<std::ptrdiff_t>(at))->second;
    return true;
  }

  // As Json::parse, the parser's own exception (parse_error, out_of_range).
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  // Objects of fewer keys are scanned, as Json::parse does.
  static constexpr std::size_t kScanned = 32;
  struct Frame {
    Json* value;
    std::unordered_map<std::string, std::size_t> index;  // key -> place, once it has kScanned keys
  };

  template <typename V>
  Json* put(V&& v) {
    if (stack_.empty()) {
      root_ = Json(std::forward<V>(v));
      return &root_;
    }
    Json& top = *stack_.back().value;
    if (top.is_array()) {
      auto& array = top.get_ref<Json::array_t&>();
      array.emplace_back(std::forward<V>(v));
      return &array.back();
    }
    *element_ = Json(std::forward<V>(v));
    return element_;
  }
  void open(Json::value_t type) { stack_.push_back(Frame{put(type), {}}); }

  Json& root_;
  bool python_words_;
  std::vector<Frame> stack_;
  Json* element_ = nullptr;  // the value of the key just read
};

Json parse_json(const std::string& text, bool python_words) {
  Json doc;
  OrderedJsonBuilder builder(doc, python_words);
  Json::sax_parse(text, &builder);
  return doc;
}

Value value_of(const Json& j, const fs::path& file, const std::string& what) {
  if (j.is_boolean()) return Value(static_cast<std::int64_t>(j.get<bool>()));
  if (j.is_number_integer()) return Value(j.get<std::int64_t>());
  if (j.is_number() && !std::isfinite(j.get<double>()))
    fail(file, fmt::format("{} is {}, not a value a parameter can take", what, j.get<double>()));
  if (j.is_number()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  fail(file, what + " is " + j.dump() + ", not a number or a string");
}

double number_or(const Json& obj, const char* key, double fallback = 0) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

Seconds ms(double v) { return Seconds(v / 1e3); }

// Kernel Tuner's error strings and T4's invalidity values.
std::optional<Status> kt_error_status(std::string_view s) {
  if (s == "InvalidConfig") return Status::invalid;
  if (s == "CompilationFailedConfig") return Status::compile_error;
  if (s == "RuntimeFailedConfig") return Status::launch_error;
  if (s == "ErrorConfig") return Status::launch_error;
  return std::nullopt;
}

// The numbers recorded besides the parameters and the time, by name, in the
// order first met; a result's list is padded with NaN where it has none.
class MetricTable {
 public:
  void set(RecordedResult& r, const std::string& name, double value) {
    auto [it, added] = index_.emplace(name, names_.size());
    if (added) names_.push_back(name);
    if (r.metrics.size() <= it->second) r.metrics.resize(it->second + 1, std::nan(""));
    r.metrics[it->second] = value;
  }
  std::vector<std::string> finish(std::vector<RecordedResult>& results) {
    for (auto& r : results) r.metrics.resize(names_.size(), std::nan(""));
    return std::move(names_);
  }

 private:
  std::vector<std::string> names_;
  std::map<std::string, std::size_t> index_;
};

// A recorded time of 0 or below measures nothing (a kernel that never ran,
// a broken timer), yet it would beat every real time and be taken for the
// optimum. Kernel Tuner 1.5 does take it so: its cost (get_result_cost) is
// the time itself, the lowest there is, and get_best_config names it best.
// A NaN (Python's json writes one) measures nothing either. Such a config
// counts as failed here instead, and the user hears where, once per
// recording. (A time of Infinity, as Kernel Tuner's 1e20, marks a failure
// and is no surprise: the callers fail it without a word.)
class UnmeasuredTimes {
 public:
  // Gives `r` the recorded time when it is positive; else marks it failed.
  void record(RecordedResult& r, Microseconds time, const std::string& where) {
    if (time.count() > 0) {
      r.time = time;
      return;
    }
    r.status = Status::launch_error;
    r.error = fmt::format("time {:g} ms, not a positive time", time.count() / 1e3);
    if (count_++ == 0) first_ = fmt::format("{} has time {:g} ms", where, time.count() / 1e3);
  }
  std::vector<std::string> warnings(const fs::path& file) const {
    if (count_ == 0) return {};
    return {fmt::format("{}: {}{}; a time of 0 or below, or NaN, measures nothing, so {} as failed", file.string(),
                        first_, count_ > 1 ? fmt::format(" (and {} more such times)", count_ - 1) : "",
                        count_ > 1 ? "they count" : "it counts")};
  }

 private:
  std::size_t count_ = 0;
  std::string first_;
};

std::optional<Status> t4_status(std::string_view s) {
  if (s == "correct") return Status::ok;
  if (s == "compile") return Status::compile_error;
  if (s == "runtime") return Status::launch_error;
  if (s == "constraints") return Status::invalid;
  if (s == "correctness") return Status::wrong_result;
  if (s == "timeout") return Status::timeout;
  return std::nullopt;
}

// Builds value lists as configs come in: Kernel Tuner's declared lists when
// it has them, else the values seen.
class ParameterTable {
 public:
  void declare(std::string name, std::vector<Value> values) {
    index_.emplace(name, params_.size());
    params_.push_back(Parameter{std::move(name), std::move(values), {}});
  }
  bool empty() const { return params_.empty(); }
  // The value index of `v` for parameter `name`, added when `grow`.
  std::optional<std::uint32_t> index(const std::string& name, const Value& v, bool grow) {
    auto it = index_.find(name);
    if (it == index_.end()) {
      if (!grow) return std::nullopt;
      declare(name, {});
      it = index_.find(name);
    }
    auto& values = params_[it->second].values;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i] == v) return static_cast<std::uint32_t>(i);
    if (!grow) return std::nullopt;
    values.push_back(v);
    return static_cast<std::uint32_t>(values.size() - 1);
  }
  std::size_t position(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? SIZE_MAX : it->second;
  }
  const std::vector<Parameter>& parameters() const { return params_; }

  // Values seen are sorted (numbers ascending, then strings), so that
  // "adjacent" means what it does for a declared list; results are remapped.
  void sort_values(std::vector<RecordedResult>& results) {
    std::vector<std::vector<std::uint32_t>> remap(params_.size());
    for (std::size_t p = 0; p < params_.size(); ++p) {
      auto& values = params_[p].values;
      std::vector<std::uint32_t> order(values.size());
      for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return values[a] < values[b]; });
      remap[p].resize(values.size());
      std::vector<Value> sorted;
      for (std::uint32_t i = 0; i < order.size(); ++i) {
        remap[p][order[i]] = i;
        sorted.push_back(values[order[i]]);
      }
      values = std::move(sorted);
    }
    for (auto& r : results)
      for (std::size_t p = 0; p < r.values.size(); ++p) r.values[p] = remap[p][r.values[p]];
  }

 private:
  std::vector<Parameter> params_;
  std::map<std::string, std::size_t> index_;
};

// One config's values, in the table's parameter order. With `grow`, values
// not in the table yet are added, and so are parameters while `first` (the
// first result, whose parameters every later one must name, no more).
std::vector<std::uint32_t> values_of(const Json& config, ParameterTable& table, bool grow, const fs::path& file,
                                     const std::string& where, bool first = false) {
  std::vector<std::uint32_t> out(table.parameters().size(), UINT32_MAX);
  for (const auto& [name, j] : config.items()) {
    const std::size_t p = table.position(name);
    if (p == SIZE_MAX && !grow) continue;  // a metric, "time", "times" ...
    if (p == SIZE_MAX && !first)
      fail(file, fmt::format("{} has parameter '{}', which the first result lacks: every result names the same "
                             "parameters",
                             where, name));
    const Value v = value_of(j, file, where + "'s " + name);
    auto ix = table.index(name, v, grow);
    if (!ix)
      fail(file, fmt::format("{} has {} = {}, which is not among the values of '{}' in tune_params", where, name,
                             v.repr(), name));
    if (out.size() < table.parameters().size()) out.resize(table.parameters().size(), UINT32_MAX);
    out[table.position(name)] = *ix;
  }
  for (std::size_t p = 0; p < out.size(); ++p)
    if (out[p] == UINT32_MAX)
      fail(file, fmt::format("{} has no value for parameter '{}'", where, table.parameters()[p].name));
  return out;
}

Recording read_kernel_tuner(const fs::path& file, const Json& doc) {
  const Json& cache = doc.at("cache");
  if (!cache.is_object()) fail(file, "its \"cache\" is not an object of results");
  ParameterTable table;
  std::vector<std::string> keys;
  if (auto k = doc.find("tune_params_keys"); k != doc.end() && k->is_array())
    for (const auto& n : *k) keys.push_back(n.get<std::string>());
  auto tp = doc.find("tune_params");
  if (tp == doc.end() || !tp->is_object())
    fail(file, "it has a \"cache\" but no \"tune_params\" (is it a Kernel Tuner cache?)");
  if (keys.empty())
    for (const auto& [name, v] : tp->items()) keys.push_back(name);
  for (const auto& name : keys) {
    auto values = tp->find(name);
    if (values == tp->end() || !values->is_array())
      fail(file, "tune_params has no list of values for '" + name + "' (named in tune_params_keys)");
    std::vector<Value> list;
    for (const auto& v : *values) list.push_back(value_of(v, file, "a value of tune_params['" + name + "']"));
    table.declare(name, std::move(list));
  }
  std::vector<RecordedResult> results;
  results.reserve(cache.size());
  MetricTable metrics;
  UnmeasuredTimes unmeasured;
  for (const auto& [key, entry] : cache.items()) {
    const std::string where = "cache entry \"" + key + "\"";
    if (!entry.is_object()) fail(file, where + " is not an object");
    RecordedResult r;
    r.values = values_of(entry, table, false, file, where);
    // Kernel Tuner marks a failure with its error's name in any field
    // (normally the objective's).
    for (const auto& [name, v] : entry.items())
      if (v.is_string()) {
        if (auto s = kt_error_status(v.get<std::string>())) {
          r.status = *s;
          r.error = v.get<std::string>();
        }
      } else if (v.is_number() && name != "time" && table.position(name) == SIZE_MAX) {
        metrics.set(r, name, v.get<double>());
      }
    if (r.error.empty()) {
      auto t = entry.find("time");
      if (t == entry.end()) fail(file, where + " has no \"time\"");
      if (!t->is_number()) fail(file, where + " has time " + t->dump() + ", neither a number nor an error name");
      const double v = t->get<double>();
      // Old caches write 1e20 for a config that failed.
      if (v >= 1e20) {
        r.status = Status::launch_error;
        r.error = std::isfinite(v) ? "time " + t->dump() : fmt::format("time {}", v);
      } else {
        unmeasured.record(r, Microseconds(v * 1e3), where);
      }
    }
    r.compile_time = ms(number_or(entry, "compile_time"));
    r.run_time = ms(number_or(entry, "benchmark_time") + number_or(entry, "verification_time"));
    // Kernel Tuner 1.x records all three for every config it runs; older
    // caches may lack them.
    std::vector<std::string> lacking;
    for (const char* key : {"compile_time", "verification_time", "benchmark_time"})
      if (auto it = entry.find(key); it == entry.end() || !it->is_number()) lacking.emplace_back(key);
    r.missing_times = detail::join(lacking);
    results.push_back(std::move(r));
  }
  std::string kernel =
      doc.contains("kernel_name") && doc["kernel_name"].is_string() ? doc["kernel_name"].get<std::string>() : "";
  std::string device =
      doc.contains("device_name") && doc["device_name"].is_string() ? doc["device_name"].get<std::string>() : "";
  // Kernel Tuner 1.5 writes its list of objectives, earlier ones a name.
  std::vector<std::string> tuned_for;
  if (auto o = doc.find("objective"); o != doc.end()) {
    if (o->is_string()) tuned_for.push_back(o->get<std::string>());
    else if (o->is_array())
      for (const Json& name : *o)
        if (name.is_string()) tuned_for.push_back(name.get<std::string>());
  }
  auto names = metrics.finish(results);
  return Recording(file, Recording::Format::kernel_tuner, std::move(kernel), std::move(device), {}, table.parameters(),
                   std::move(results), {}, std::move(names), std::move(tuned_for), unmeasured.warnings(file));
}

// A T4 file's results, one recording per problem size: T4 has no field for
// it, so a file of tunekit's (the t4 output writer) names each result's in
// `problem_size`; a file without it is one recording.
std::vector<Recording> read_t4(const fs::path& file, const Json& doc) {
  const Json& list = doc.at("results");
  if (!list.is_array()) fail(file, "its \"results\" is not a list (is it a T4 results file?)");
  if (auto v = doc.find("schema_version");
      v != doc.end() && !(v->is_string() && v->get<std::string>().rfind("1.", 0) == 0))
    fail(file, "its schema_version " + v->dump() + " is not one tunekit reads (1.x)");
  // Times in the file's unit ("miliseconds", as Kernel Tuner spells it, when
  // it says none), in microseconds here.
  double us_per_unit = 1e3;
  if (auto meta = doc.find("metadata"); meta != doc.end() && meta->is_object() && meta->contains("timeunit")) {
    const Json& unit = (*meta)["timeunit"];
    const std::string name = unit.is_string() ? unit.get<std::string>() : unit.dump();
    if (name == "miliseconds" || name == "milliseconds" || name == "ms") us_per_unit = 1e3;
    else if (name == "seconds" || name == "s") us_per_unit = 1e6;
    else if (name == "microseconds" || name == "us") us_per_unit = 1;
    else
      fail(file,
           "its metadata.timeunit \"" + name +
               "\" is not a unit tunekit reads (milliseconds, as Kernel Tuner writes it, seconds or microseconds)");
  }
  const auto in_unit = [&](double v) { return Seconds(v * us_per_unit / 1e6); };
  struct Group {
    Bindings size;
    ParameterTable table;
    std::vector<RecordedResult> results;
    MetricTable metrics;
    UnmeasuredTimes unmeasured;
  };
  std::map<std::string, Group> groups;  // by size
  std::size_t i = 0;
  for (const Json& entry : list) {
    const std::string where = fmt::format("results[{}]", i++);
    if (!entry.is_object()) fail(file, where + " is not an object");
    auto config = entry.find("configuration");
    if (config == entry.end() || !config->is_object()) fail(file, where + " has no \"configuration\" object");
    Bindings size;
    if (auto s = entry.find("problem_size"); s != entry.end() && s->is_object())
      for (const auto& [name, v] : s->items()) size[name] = value_of(v, file, where + ".problem_size's " + name);
    auto [at, added] = groups.try_emplace(size_key(size));
    Group& g = at->second;
    if (added) g.size = std::move(size);
    ParameterTable& table = g.table;
    MetricTable& metrics = g.metrics;
    RecordedResult r;
    r.values = values_of(*config, table, true, file, where + ".configuration", g.results.empty());
    const std::string invalidity = entry.contains("invalidity") && entry["invalidity"].is_string()
                                       ? entry["invalidity"].get<std::string>()
                                       : "correct";
    auto status = t4_status(invalidity);
    if (!status)
      fail(file, where + " has invalidity \"" + invalidity +
                     "\" (T4 allows correct, compile, runtime, correctness, constraints, timeout)");
    r.status = *status;
    // The objective: "time" among the measurements (its unit is the file's, milliseconds).
    std::optional<double> time;
    if (auto m = entry.find("measurements"); m != entry.end() && m->is_array()) {
      for (const auto& x : *m) {
        if (x.is_object() && x.value("name", "") == "time" && x.contains("value")) {
          if (x["value"].is_number()) {
            time = x["value"].get<double>();
          } else if (auto error =
                         x["value"].is_string() ? kt_error_status(x["value"].get<std::string>()) : std::nullopt) {
            if (r.status == Status::ok) r.status = *error;
            r.error = x["value"].get<std::string>();
          } else {
            fail(file, where + " has time " + x["value"].dump() + ", neither a number nor an error name");
          }
        } else if (x.is_object() && x.contains("name") && x["name"].is_string() && x.contains("value") &&
                   x["value"].is_number()) {
          metrics.set(r, x["name"].get<std::string>(), x["value"].get<double>());
        }
      }
    }
    if (r.status == Status::ok) {
      if (!time) fail(file, where + " is correct but has no \"time\" measurement");
      if (*time != std::numeric_limits<double>::infinity()) {
        g.unmeasured.record(r, Microseconds(*time * us_per_unit), where);
      } else {
        r.status = Status::launch_error;
        r.error = fmt::format("time {}", *time);
      }
    } else if (r.error.empty()) {
      r.error = invalidity;
    }
    if (auto t = entry.find("times"); t != entry.end() && t->is_object()) {
      const auto has = [&](const char* key) { return t->contains(key) && (*t)[key].is_number(); };
      r.compile_time = in_unit(number_or(*t, "compilation", number_or(*t, "compilation_time")));
      // Kernel Tuner's benchmark time (its cache's benchmark_time) where the
      // file has it; else the samples alone, which leave out warm-up.
      double run = number_or(*t, "validation");
      bool benchmarked = true;
      if (auto b = t->find("benchmark"); b != t->end() && b->is_number()) {
        run += b->get<double>();
      } else if (auto rt = t->find("runtimes"); rt != t->end() && rt->is_array()) {
        for (const auto& x : *rt)
          if (x.is_number()) run += x.get<double>();
      } else {
        // A failed config may have no samples to record: older Kernel Tuner
        // T4 files write no runtimes for it.
        benchmarked = r.status != Status::ok;
      }
      r.run_time = in_unit(run);
      // The three parts of the cost, as Kernel Tuner's T4 writer names them.
      std::vector<std::string> lacking;
      if (!has("compilation") && !has("compilation_time")) lacking.emplace_back("times.compilation");
      if (!has("validation")) lacking.emplace_back("times.validation");
      if (!benchmarked) lacking.emplace_back("times.benchmark");
      r.missing_times = detail::join(lacking);
    } else {
      r.missing_times = "times";
    }
    g.results.push_back(std::move(r));
  }
  // T4 names each result's objectives; the first result's say what the run
  // was tuned for.
  std::vector<std::string> tuned_for;
  if (!list.empty() && list[0].is_object())
    if (auto o = list[0].find("objectives"); o != list[0].end() && o->is_array())
      for (const Json& name : *o)
        if (name.is_string()) tuned_for.push_back(name.get<std::string>());
  // tunekit's t4 writer adds the machine a store would keep.
  std::string machine;
  if (auto m = doc.find("tunekit_machine"); m != doc.end() && m->is_object()) machine = m->dump();
  std::vector<Recording> out;
  for (auto& [key, g] : groups) {
    g.table.sort_values(g.results);
    auto names = g.metrics.finish(g.results);
    out.emplace_back(file, Recording::Format::kernel_tuner_t4, "", "", g.size, g.table.parameters(),
                     std::move(g.results), machine, std::move(names), tuned_for, g.unmeasured.warnings(file));
  }
  if (out.empty())
    out.emplace_back(file, Recording::Format::kernel_tuner_t4, "", "", Bindings{}, std::vector<Parameter>{},
                     std::vector<RecordedResult>{});
  return out;
}

std::string describe(const std::string& kernel, const std::string& device, const Bindings& size) {
  // A T4 file names neither: say what is known.
  std::string s = kernel.empty() ? "a kernel" : "kernel '" + kernel + "'";
  if (!device.empty()) s += " on '" + device + "'";
  if (!size.empty()) s += " at " + size_key(size);
  return s;
}

// One (kernel, device, size) a store holds.
struct HeldRecording {
  std::string kernel, device;
  Bindings size;
};

// Why `filter` matches none of what a store holds: the fields that match
// nothing on their own (else all of them, which match only apart), and what
// it does hold, so the user can pick.
std::string no_match(const RecordingFilter& filter, const std::vector<HeldRecording>& held) {
  const auto any = [&](auto matches) { return std::any_of(held.begin(), held.end(), matches); };
  std::vector<std::string> unmatched;
  if (!filter.kernel.empty() && !any([&](const HeldRecording& h) { return h.kernel == filter.kernel; }))
    unmatched.push_back("of kernel '" + filter.kernel + "'");
  if (!filter.device.empty() && !any([&](const HeldRecording& h) { return h.device == filter.device; }))
    unmatched.push_back("on device '" + filter.device + "'");
  if (filter.size && !any([&](const HeldRecording& h) { return size_key(h.size) == size_key(*filter.size); }))
    unmatched.push_back("at " + size_key(*filter.size));
  std::string why;
  if (!unmatched.empty()) {
    why = "it holds no trials " + detail::join(unmatched, " and none ");
  } else {
    std::vector<std::string> together;
    if (!filter.kernel.empty()) together.push_back("of kernel '" + filter.kernel + "'");
    if (!filter.device.empty()) together.push_back("on device '" + filter.device + "'");
    if (filter.size) together.push_back("at " + size_key(*filter.size));
    why = "it holds no trials " + detail::join(together, " ") + " (each matches some trials, but not together)";
  }
  std::vector<std::string> names;
  for (const auto& h : held) names.push_back(describe(h.kernel, h.device, h.size));
  return why + "; what it holds: " + detail::join(names, "; ");
}

std::vector<Recording> read_store(const fs::path& file, const RecordingFilter& filter) {
  std::vector<TrialRecord> trials;
  try {
    // Read-only: a replay changes nothing, and the DB may be on storage it
    // cannot write (an archive, another user's results), as report's is.
    trials = Store(file, Store::Access::read_only).all();
  } catch (const std::exception& e) {
    fail(file, std::string("cannot read it as a tunekit results database: ") + e.what());
  }
  struct Group {
    std::string kernel, device;
    Bindings size;
    std::string machine;
    ParameterTable table;
    std::vector<RecordedResult> results;
    std::set<std::string> keys;
    std::size_t repeated = 0;  // configs stored again, by another tune of the kernel
    UnmeasuredTimes unmeasured;
  };
  std::map<std::string, Group> groups;  // by kernel, device, size
  std::vector<HeldRecording> held;      // in the order first stored
  std::set<std::string> held_keys;
  for (const TrialRecord& t : trials) {
    // CCCL's base variant ({TUNE_BASE: 1}) is no config of the space a
    // strategy searches; a replay does not measure it.
    if (is_base_trial(t)) continue;
    const std::string key = t.kernel + '\x1f' + t.device + '\x1f' + size_key(t.size);
    if (held_keys.insert(key).second) held.push_back({t.kernel, t.device, t.size});
    if (!filter.kernel.empty() && t.kernel != filter.kernel) continue;
    if (!filter.device.empty() && t.device != filter.device) continue;
    if (filter.size && size_key(*filter.size) != size_key(t.size)) continue;
    Group& g = groups[key];
    g.kernel = t.kernel;
    g.device = t.device;
    g.size = t.size;
    if (g.machine.empty()) g.machine = t.machine;
    // A trial is stored once per spec hash: keep the first of a config.
    if (!g.keys.insert(t.config.key()).second) {
      ++g.repeated;
      continue;
    }
    RecordedResult r;
    for (const auto& [name, v] : t.config) {
      const auto ix = *g.table.index(name, v, true);
      const std::size_t p = g.table.position(name);
      if (r.values.size() <= p) r.values.resize(p + 1, UINT32_MAX);
      r.values[p] = ix;
    }
    r.status = t.status;
    r.error = t.error;
    // A trial cut short by the early stop ran correctly, and the median of
    // its few samples is a real time (a bad one): the T4 export records it
    // as a correct result with that time, and a replay of the DB takes it as
    // a replay of that export does.
    if (t.status == Status::slower) {
      r.status = Status::ok;
      r.error.clear();
    }
    if (r.status == Status::ok)
      g.unmeasured.record(r, t.stats.median,
                          "the trial of " + t.config.str() + (t.size.empty() ? "" : " at " + size_key(t.size)));
    r.compile_time = t.build_time;
    // The trial's whole evaluation where the store has it (schema 6 on);
    // before, only its samples, which leave out warm-up, verification and
    // the worker's round trip (on the H200, a 4096^3 GEMM's samples are a
    // tenth of its trial's evaluation).
    if (t.eval_time.count() > 0) {
      r.run_time = t.eval_time;
    } else {
      Microseconds run{0};
      for (auto s : t.samples) run += s;
      r.run_time = std::chrono::duration_cast<Seconds>(run);
    }
    g.results.push_back(std::move(r));
  }
  if (held.empty()) fail(file, "it holds no trials");
  if (groups.empty()) fail(file, no_match(filter, held));
  std::vector<Recording> out;
  for (auto& [key, g] : groups) {
    const std::size_t n = g.table.parameters().size();
    for (const auto& r : g.results)
      if (r.values.size() != n || std::count(r.values.begin(), r.values.end(), UINT32_MAX))
        fail(file, fmt::format("kernel '{}' at {} has trials with different parameters", g.kernel, size_key(g.size)));
    g.table.sort_values(g.results);
    std::vector<std::string> warnings = g.unmeasured.warnings(file);
    if (g.repeated)
      warnings.push_back(fmt::format(
          "{}: {} of kernel '{}' at {} {} recorded by more than one tune of it (another input seed, cache mode or "
          "setting): the first stored of each is replayed",
          file.string(), g.repeated == 1 ? "1 config" : fmt::format("{} configs", g.repeated), g.kernel,
          size_key(g.size), g.repeated == 1 ? "is" : "are"));
    out.emplace_back(file, Recording::Format::tunekit, g.kernel, g.device, g.size, g.table.parameters(),
                     std::move(g.results), g.machine, std::vector<std::string>{}, std::vector<std::string>{},
                     std::move(warnings));
  }
  return out;
}

std::string describe(const Recording& r) { return describe(r.kernel(), r.device(), r.size()); }

}  // namespace

std::string_view to_string(Recording::Format f) {
  switch (f) {
    case Recording::Format::kernel_tuner:
      return "kernel_tuner";
    case Recording::Format::kernel_tuner_t4:
      return "kernel_tuner_t4";
    case Recording::Format::tunekit:
      return "tunekit";
  }
  return "?";
}

namespace {
std::string pack(const std::vector<std::uint32_t>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(std::uint32_t));
}
}  // namespace

Recording::Recording(fs::path file, Format format, std::string kernel, std::string device, Bindings size,
                     std::vector<Parameter> parameters, std::vector<RecordedResult> results, std::string machine,
                     std::vector<std::string> metric_names, std::vector<std::string> tuned_for,
                     std::vector<std::string> warnings)
    : file_(std::move(file)),
      format_(format),
      kernel_(std::move(kernel)),
      device_(std::move(device)),
      size_(std::move(size)),
      machine_(std::move(machine)),
      parameters_(std::move(parameters)),
      results_(std::move(results)),
      metric_names_(std::move(metric_names)),
      tuned_for_(std::move(tuned_for)),
      warnings_(std::move(warnings)) {
  by_key_.reserve(results_.size());
  // A config recorded twice: the later entry, as a Kernel Tuner cache's JSON
  // object keeps its last key, and a warning that says so.
  std::size_t twice = 0;
  std::string first;
  for (std::size_t i = 0; i < results_.size(); ++i) {
    auto [at, fresh] = by_key_.try_emplace(pack(results_[i].values), i);
    if (fresh) continue;
    if (twice++ == 0) first = config_of(results_[i]).str();
    at->second = i;
  }
  if (!twice) return;
  warnings_.push_back(
      fmt::format("{}: {} config{} recorded more than once ({} the first); the last entry of each "
                  "is replayed",
                  file_.string(), twice, twice == 1 ? " is" : "s are", first));
  // The earlier entries go: nothing (the optimum, the counts) may read them.
  std::vector<RecordedResult> kept;
  kept.reserve(by_key_.size());
  for (std::size_t i = 0; i < results_.size(); ++i)
    if (by_key_.at(pack(results_[i].values)) == i) kept.push_back(std::move(results_[i]));
  results_ = std::move(kept);
  by_key_.clear();
  for (std::size_t i = 0; i < results_.size(); ++i) by_key_.emplace(pack(results_[i].values), i);
}

std::size_t Recording::ok_count() const {
  return static_cast<std::size_t>(
      std::count_if(results_.begin(), results_.end(), [](const RecordedResult& r) { return r.status == Status::ok; }));
}

const RecordedResult* Recording::find(const Config& config) const {
  std::vector<std::uint32_t> values(parameters_.size());
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    const Value* v = config.find(parameters_[p].name);
    if (!v) return nullptr;
    const auto& list = parameters_[p].values;
    auto it = std::find(list.begin(), list.end(), *v);
    if (it == list.end()) return nullptr;
    values[p] = static_cast<std::uint32_t>(it - list.begin());
  }
  auto it = by_key_.find(pack(values));
  return it == by_key_.end() ? nullptr : &results_[it->second];
}

Config Recording::config_of(const RecordedResult& r) const {
  std::vector<std::pair<std::string, Value>> entries;
  for (std::size_t p = 0; p < parameters_.size(); ++p)
    entries.emplace_back(parameters_[p].name, parameters_[p].values[r.values[p]]);
  return Config(std::move(entries));
}

std::vector<Recording> load_recordings(const fs::path& file, const RecordingFilter& filter) {
  std::string text = read_contents(file);
  std::vector<Recording> out;
  if (text.rfind(std::string("SQLite format 3\0", 16), 0) == 0) {
    out = read_store(file, filter);
  } else {
    Json doc;
    const bool python_words = replace_python_words(text);
    try {
      doc = parse_json(text, python_words);
    } catch (const Json::parse_error& first) {
      // Kernel Tuner appends to an open cache ("...},") and closes it at the
      // end of a run; it reads a cache left open by closing it.
      std::string closed = text;
      while (!closed.empty() && std::isspace(static_cast<unsigned char>(closed.back()))) closed.pop_back();
      bool recovered = false;
      // Open after its last entry ("},"), or before its first ("cache": {).
      const bool after_entry = !closed.empty() && closed.back() == ',';
      const std::size_t key_end =
          closed.size() < 2 ? std::string::npos : closed.find_last_not_of(" \t\r\n", closed.size() - 2);
      const bool before_first =
          !closed.empty() && closed.back() == '{' && key_end != std::string::npos && closed[key_end] == ':';
      if ((after_entry || before_first) && closed.find("\"cache\"") != std::string::npos) {
        if (after_entry) closed.pop_back();
        closed += "}\n}";
        try {
          doc = parse_json(closed, python_words);
          recovered = true;
        } catch (const Json::parse_error&) {
        }
      }
      if (!recovered) {
        if (text.empty()) fail(file, "it is empty");
        const auto p = detail::json_error_place(text, first.byte, first.what());
        // Python's words stay only beside a number written as their stand-in.
        const std::size_t at = first.byte > 0 ? first.byte - 1 : 0;
        const std::size_t word = text.find_last_not_of("NaInfity-", at) + 1;
        const std::string_view here = std::string_view(text).substr(word);
        if (here.starts_with("NaN") || here.starts_with("Infinity") || here.starts_with("-Infinity"))
          throw InputError(SourceLocation{file.string(), p.line, p.column},
                           "it holds NaN or Infinity, which tunekit reads as Python does only where no number is "
                           "written 0E0, 1.0E+308 or -1.0E+308 (its stand-ins for them); write such a number "
                           "otherwise (0.0, 1e308)");
        throw InputError(SourceLocation{file.string(), p.line, p.column},
                         "it is not valid JSON (truncated?): " + p.message);
      }
    }
    if (!doc.is_object()) fail(file, "it is not a JSON object (expected a Kernel Tuner cache or T4 results file)");
    if (doc.contains("cache")) out.push_back(read_kernel_tuner(file, doc));
    else if (doc.contains("results")) out = read_t4(file, doc);
    else fail(file, "it is neither a Kernel Tuner cache (no \"cache\" key) nor a T4 results file (no \"results\" key)");
    const Recording& r = out.back();
    if (!filter.kernel.empty() && !r.kernel().empty() && r.kernel() != filter.kernel)
      fail(file, "it records kernel '" + r.kernel() + "', not '" + filter.kernel + "'");
    if (!filter.device.empty() && r.device() != filter.device)
      fail(file, "it records device '" + r.device() + "', not '" + filter.device + "'");
    // A T4 file that names its sizes (problem_size): the one asked for.
    if (filter.size &&
        std::any_of(out.begin(), out.end(), [](const Recording& each) { return !each.size().empty(); })) {
      std::vector<std::string> sizes;
      for (const auto& each : out) sizes.push_back(size_key(each.size()));
      std::erase_if(out, [&](const Recording& each) { return size_key(each.size()) != size_key(*filter.size); });
      if (out.empty())
        fail(file,
             fmt::format("it records no results at {} (it has {})", size_key(*filter.size), detail::join(sizes, "; ")));
    }
  }
  for (const Recording& r : out) {
    if (r.results().empty()) fail(file, "it records no configs (" + describe(r) + ")");
    if (r.ok_count() == 0)
      fail(file, fmt::format("none of its {} configs succeeded ({}): there is nothing to replay", r.results().size(),
                             describe(r)));
  }
  return out;
}

Recording load_recording(const fs::path& file, const RecordingFilter& filter) {
  std::vector<Recording> all = load_recordings(file, filter);
  if (all.size() == 1) return std::move(all.front());
  std::vector<std::string> names;
  for (const auto& r : all) names.push_back(describe(r));
  fail(file, fmt::format("it holds {} recordings; pick one (kernel, device, size): {}", all.size(),
                         detail::join(names, "; ")));
}

std::vector<Recording> recordings_of_kernel(std::vector<Recording> recordings, const std::string& kernel) {
  std::set<std::string> kernels;
  for (const auto& r : recordings) kernels.insert(r.kernel());
  if (kernels.size() < 2) return recordings;
  std::vector<Recording> mine;
  for (auto& r : recordings)
    if (r.kernel() == kernel) mine.push_back(std::move(r));
  if (mine.empty())
    fail(recordings.front().file(),
         fmt::format("it records kernels {}, none named '{}' as the spec",
                     detail::join(std::vector<std::string>(kernels.begin(), kernels.end())), kernel));
  return mine;
}

void require_recorded_cost(const Recording& recording, const RecordedResult& result) {
  if (result.missing_times.empty()) return;
  fail(recording.file(),
       fmt::format("{}{} has no recorded {}: a time budget counts each evaluation's recorded compile, verification "
                   "and benchmark times, and would count this config's as 0 (Kernel Tuner refuses a time limit on "
                   "such a cache too); give a budget of evaluations instead (--max-evals or --max-fraction)",
                   recording.config_of(result).str(),
                   recording.size().empty() ? "" : " at " + size_key(recording.size()), result.missing_times));
}

// ---------------------------------------------------------------- ReplayTable

void check_parameters(const Recording& recording, const std::vector<std::string>& names) {
  std::vector<std::string> recorded, lacking, extra;
  for (const auto& p : recording.parameters()) recorded.push_back(p.name);
  for (const auto& n : names)
    if (std::find(recorded.begin(), recorded.end(), n) == recorded.end()) lacking.push_back(n);
  for (const auto& p : recording.parameters())
    if (std::find(names.begin(), names.end(), p.name) == names.end() && p.values.size() > 1) extra.push_back(p.name);
  if (lacking.empty() && extra.empty()) return;
  std::string msg = "its parameters do not match the space's (a recording of another kernel?):";
  if (!lacking.empty()) msg += " the recording has no " + detail::join(lacking) + ";";
  if (!extra.empty()) msg += " the space has no " + detail::join(extra) + ";";
  msg += " recorded: " + detail::join(recorded) + "; space: " + detail::join(names);
  fail(recording.file(), msg);
}

namespace {
constexpr std::uint64_t kDenseLimit = std::uint64_t{1} << 24;
}

namespace {

// Each recorded result's value by an objective other than the time (NaN:
// none), or InputError when nothing gives it.
std::vector<double> objective_values(const Recording& recording, const ReplayObjective& o) {
  const auto& results = recording.results();
  std::vector<double> out(results.size(), std::nan(""));
  if (std::any_of(o.metrics.begin(), o.metrics.end(), [&](const Metric& m) { return m.name == o.objective.name; })) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!results[i].time) continue;
      TrialRecord t;
      t.status = Status::ok;
      t.config = recording.config_of(results[i]);
      t.size = o.size;
      t.stats.median = *results[i].time;
      out[i] = objective_value(o.objective, o.metrics, t).value_or(std::nan(""));
    }
    return out;
  }
  const auto& names = recording.metric_names();
  auto it = std::find(names.begin(), names.end(), o.objective.name);
  if (it == names.end()) {
    std::vector<std::string> known{"time"};
    for (const auto& m : o.metrics) known.push_back(m.name);
    known.insert(known.end(), names.begin(), names.end());
    const SourceLocation where =
        o.objective.where.file.empty() ? SourceLocation{recording.file().string()} : o.objective.where;
    throw InputError(
        where, fmt::format("the objective '{}' is neither recorded in {} nor a metric{} (known: {})", o.objective.name,
                           recording.file().string(), did_you_mean(o.objective.name, known), detail::join(known)));
  }
  const auto k = static_cast<std::size_t>(it - names.begin());
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].status == Status::ok) out[i] = results[i].metrics[k];
  return out;
}

}  // namespace

ReplayTable::ReplayTable(const Recording& recording, const Space& space, const ReplayObjective& objective)
    : recording_(&recording), space_(space), objective_(objective.objective) {
  if (!objective_.is_time()) values_ = objective_values(recording, objective);
  const auto& rparams = recording.parameters();
  const auto& sparams = space.parameters();
  std::vector<std::string> rnames, snames;
  for (const auto& p : rparams) rnames.push_back(p.name);
  for (const auto& p : sparams) snames.push_back(p.name);
  check_parameters(recording, snames);
  // Space parameter -> recording parameter.
  std::vector<std::size_t> from(sparams.size());
  for (std::size_t s = 0; s < sparams.size(); ++s)
    from[s] = static_cast<std::size_t>(std::find(rnames.begin(), rnames.end(), sparams[s].name) - rnames.begin());
  to_space_.assign(rparams.size(), {});
  for (std::size_t r = 0; r < rparams.size(); ++r) to_space_[r].assign(rparams[r].values.size(), -1);
  // A value the recording lacks is no error by itself: a spec's constraints
  // may rule it out at the recorded size (GROUP_M = 16 where M has 16 row
  // tiles), so only a valid config that needs it is missing (missing()).
  for (std::size_t s = 0; s < sparams.size(); ++s) {
    const auto& rp = rparams[from[s]];
    for (std::size_t v = 0; v < sparams[s].values.size(); ++v) {
      auto it = std::find(rp.values.begin(), rp.values.end(), sparams[s].values[v]);
      if (it != rp.values.end())
        to_space_[from[s]][static_cast<std::size_t>(it - rp.values.begin())] = static_cast<std::int64_t>(v);
    }
  }
  if (!space_.indexable()) return;  // looked up by config (find) instead
  const std::uint64_t n = space_.size();
  const bool dense = n <= kDenseLimit;
  if (dense) dense_.assign(static_cast<std::size_t>(n), -1);
  std::vector<std::uint32_t> ix(sparams.size());
  std::uint64_t mapped = 0;
  std::optional<double> best;  // the optimum's value
  const auto& results = recording.results();
  for (std::size_t i = 0; i < results.size(); ++i) {
    bool inside = true;
    for (std::size_t s = 0; s < sparams.size() && inside; ++s) {
      const std::int64_t v = to_space_[from[s]][results[i].values[from[s]]];
      inside = v >= 0;
      ix[s] = static_cast<std::uint32_t>(v);
    }
    if (!inside) continue;
    // A parameter the space does not have must hold its one value.
    auto rank = space_.index_of(std::span<const std::uint32_t>(ix));
    if (!rank) continue;  // recorded, but the space's constraints exclude it
    if (dense) {
      if (dense_[*rank] >= 0) continue;
      dense_[*rank] = static_cast<std::int32_t>(i);
    } else if (!sparse_.emplace(*rank, static_cast<std::uint32_t>(i)).second) {
      continue;
    }
    ++mapped;
    if (auto v = value(results[i]); v && (!best || objective_better(objective_, *v, *best))) {
      best = v;
      optimum_ = *rank;
    }
  }
  missing_ = n - mapped;
}

const RecordedResult* ReplayTable::at(std::uint64_t index) const {
  if (!dense_.empty() || sparse_.empty()) {
    if (index >= dense_.size() || dense_[index] < 0) return nullptr;
    return &recording_->results()[static_cast<std::size_t>(dense_[index])];
  }
  auto it = sparse_.find(index);
  return it == sparse_.end() ? nullptr : &recording_->results()[it->second];
}

const RecordedResult* ReplayTable::find(const Config& config) const {
  if (space_.indexable()) {
    auto rank = space_.index_of(config);
    return rank ? at(*rank) : nullptr;
  }
  return space_.contains(config) ? recording_->find(config) : nullptr;
}

std::optional<Config> ReplayTable::first_missing() const {
  if (missing_ == 0) return std::nullopt;
  std::optional<Config> out;
  std::uint64_t i = 0;
  space_.for_each([&](std::span<const std::uint32_t> ix) {
    if (!at(i++)) {
      out = space_.config_at(ix);
      return false;
    }
    return true;
  });
  return out;
}

void ReplayTable::require_complete(SpaceFrom space_from) const {
  const auto c = first_missing();
  if (!c) return;
  // A value the recording holds as another type ('16' for 16) is another
  // value: the likeliest cause where a T1 file or a spec gives the space.
  for (const Parameter& p : recording_->parameters()) {
    const Value* v = c->find(p.name);
    if (!v || p.listed(*v)) continue;
    for (const Value& recorded : p.values)
      if (recorded.str() == v->str())
        fail(recording_->file(),
             fmt::format("it lacks {} of the space's {} valid configs, such as {}: it records {} = {}, not {}; give "
                         "the space's values as the recording has them",
                         missing_, space_.size(), c->str(), p.name, recorded.repr(), v->repr()));
  }
  // A tunekit DB's space is its spec's: its constraints are what rule the
  // unrecorded configs out. A Kernel Tuner cache's restrictions are in its
  // T1 file.
  const char* advice =
      space_from == SpaceFrom::spec
          ? "a tune of another space (the spec's parameters or constraints changed since?), or one that was not "
            "exhaustive"
      : space_from == SpaceFrom::t1 ? "a recording of another space, or a T1 file of another kernel?"
      : recording_->format() == Recording::Format::tunekit
          ? "a tune of another space, or not exhaustive? give the spec it was tuned with, --spec"
          : "a recording of another space? give the kernel's restrictions, e.g. with its T1 file";
  fail(recording_->file(), fmt::format("it lacks {} of the space's {} valid configs, such as {} ({})", missing_,
                                       space_.size(), c->str(), advice));
}

std::optional<Microseconds> ReplayTable::optimum_time() const {
  if (!optimum_) return std::nullopt;
  return at(*optimum_)->time;
}

std::optional<double> ReplayTable::value(const RecordedResult& result) const {
  if (objective_.is_time()) return result.time ? std::optional<double>(result.time->count()) : std::nullopt;
  const double v = values_[static_cast<std::size_t>(&result - recording_->results().data())];
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> ReplayTable::optimum_value() const {
  if (!optimum_) return std::nullopt;
  return value(*at(*optimum_));
}

}  // namespace tunekit
