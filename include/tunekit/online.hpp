#pragma once
// Online tuning, header-only: a program asks for the config of the problem
// size at hand. Tuned sizes come from a JSON file (as `tunekit emit --json`
// writes it); a size seen for the first time is tuned through a callback,
// when allowed, and saved to the same file, so the next run starts tuned.
// This is how Triton's key-based autotune and KTT's online tuning work.
//
// Needs only the standard library, POSIX (a lock while saving) and nlohmann/json.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunekit::online {

// A size's value: an integer, or a float for an axis such as a sparsity of
// 0.5 (the header `tunekit emit` writes takes such an axis as a double).
class SizeValue {
 public:
  SizeValue() = default;  // the int 0, so that size[name] = value compiles
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  SizeValue(T v) : v_(static_cast<std::int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  SizeValue(T v) : v_(static_cast<double>(v)) {}

  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  // Throws std::runtime_error, naming the value, for a float.
  std::int64_t as_int() const {
    if (!is_int()) throw std::runtime_error("tunekit::online: the size " + str() + " is not an integer");
    return std::get<std::int64_t>(v_);
  }
  double as_float() const { return is_int() ? static_cast<double>(std::get<std::int64_t>(v_)) : std::get<double>(v_); }
  // Integer sizes, the common case, read as the std::int64_t that Size held
  // before it held floats too.
  operator std::int64_t() const { return as_int(); }

  // As JSON writes it: 1024, 0.5.
  std::string str() const { return to_json().dump(); }
  nlohmann::ordered_json to_json() const {
    return std::visit([](auto v) { return nlohmann::ordered_json(v); }, v_);
  }

  // By value: 2 and 2.0 are one point of an axis, as in the header, which
  // converts its arguments to the axis's type.
  friend bool operator==(const SizeValue& a, const SizeValue& b) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  friend bool operator!=(const SizeValue& a, const SizeValue& b) { return !(a == b); }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  friend bool operator==(const SizeValue& a, T b) {
    return a == SizeValue(b);
  }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  friend bool operator!=(const SizeValue& a, T b) {
    return !(a == SizeValue(b));
  }
  friend std::ostream& operator<<(std::ostream& out, const SizeValue& v) { return out << v.str(); }

 private:
  std::variant<std::int64_t, double> v_;
};

using Size = std::map<std::string, SizeValue>;  // problem size: name -> value

// A parameter's value, typed as the file holds it: an int, a float or a
// string (`tunekit emit --json` writes all three).
class ParamValue {
 public:
  ParamValue() = default;  // the int 0, as before, so that params[name] = value compiles
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  ParamValue(T v) : v_(static_cast<std::int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  ParamValue(T v) : v_(static_cast<double>(v)) {}
  ParamValue(std::string v) : v_(std::move(v)) {}
  ParamValue(const char* v) : v_(std::string(v)) {}

  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }

  // Each throws std::runtime_error, naming the value, for another type (an
  // int reads as a float too).
  std::int64_t as_int() const {
    if (!is_int()) throw std::runtime_error("tunekit::online: the parameter value " + str() + " is not an integer");
    return std::get<std::int64_t>(v_);
  }
  double as_float() const {
    if (is_int()) return static_cast<double>(std::get<std::int64_t>(v_));
    if (!is_float()) throw std::runtime_error("tunekit::online: the parameter value " + str() + " is not a number");
    return std::get<double>(v_);
  }
  const std::string& as_string() const {
    if (!is_string()) throw std::runtime_error("tunekit::online: the parameter value " + str() + " is not a string");
    return std::get<std::string>(v_);
  }
  // Integer parameters, the common case, read as the std::int64_t that
  // Params held before it held floats and strings too.
  operator std::int64_t() const { return as_int(); }

  // As JSON writes it: 64, 1.25, "row".
  std::string str() const { return to_json().dump(); }
  nlohmann::ordered_json to_json() const {
    return std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, v_);
  }

  // 1 and 1.0 differ: the file holds them as different types.
  friend bool operator==(const ParamValue& a, const ParamValue& b) { return a.v_ == b.v_; }
  friend bool operator!=(const ParamValue& a, const ParamValue& b) { return !(a == b); }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  friend bool operator==(const ParamValue& a, T b) {
    return a == ParamValue(b);
  }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  friend bool operator!=(const ParamValue& a, T b) {
    return !(a == ParamValue(b));
  }
  friend std::ostream& operator<<(std::ostream& out, const ParamValue& v) { return out << v.str(); }

 private:
  std::variant<std::int64_t, double, std::string> v_;
};

using Params = std::map<std::string, ParamValue>;  // a config: parameter -> value

// The tuning file cannot be read, parsed, understood or written. line and
// column (1-based) locate malformed JSON; 0 where no place in the file is to blame.
class FileError : public std::runtime_error {
 public:
  FileError(std::filesystem::path file, int line, int column, const std::string& message)
      : std::runtime_error(where(file, line, column) + ": " + message),
        file_(std::move(file)),
        line_(line),
        column_(column) {}
  const std::filesystem::path& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  static std::string where(const std::filesystem::path& file, int line, int column) {
    std::string out = file.string();
    if (line > 0) out += ":" + std::to_string(line);
    if (line > 0 && column > 0) out += ":" + std::to_string(column);
    return out;
  }
  std::filesystem::path file_;
  int line_, column_;
};

// get() has no config to give for a size: the file holds none that the
// spec's checks allow there, and the size may not be tuned.
class NoConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
  // Reads `file` if it exists. Throws FileError when it cannot be read, is
  // not JSON (with the line and column) or not the format `tunekit emit
  // --json` writes.
  explicit Tuner(std::filesystem::path file, Mode mode = Mode::tune_on_first_sight)
      : file_(std::move(file)), mode_(mode) {
    load();
  }

  // The config for `size`. `tune(size)` returns the best params and their
  // time in microseconds; it is called at most once per size and file.
  // Saving the file keeps everything else in it as it was.
  // Throws std::invalid_argument when `size` names other sizes than the
  // file's (a typo would get some entry's config, or be tuned and saved
  // under a name no later call asks for), and NoConfigError when the size
  // is not tuned here and nearest() has no config for it.
  Choice get(const Size& size, const std::function<std::pair<Params, double>(const Size&)>& tune) {
    std::lock_guard lock(mutex_);
    check_names_locked(size);
    if (auto p = find_locked(size)) return {*p, Choice::Source::stored};
    if (mode_ == Mode::tune_on_first_sight && tune) {
      auto [params, time_us] = tune(size);
      nlohmann::ordered_json entry, sizes = nlohmann::ordered_json::object(), config = nlohmann::ordered_json::object();
      for (const auto& [k, v] : size) sizes[k] = v.to_json();
      entry["size"] = sizes;
      for (const auto& [k, v] : params) config[k] = v.to_json();
      entry["config"] = config;
      entry["time_us"] = time_us;
      doc_["entries"].push_back(entry);
      entries_.push_back({size, params});
      save_locked();
      return {params, Choice::Source::tuned};
    }
    if (auto p = nearest_locked(size)) return {*p, Choice::Source::nearest};
    const std::string untunable =
        mode_ == Mode::lookup_only ? "tuning is not allowed (Mode::lookup_only)" : "no tuning callback was given";
    if (entries_.empty())
      throw NoConfigError("tunekit::online: " + file_.string() + " has no tuned config, and " + untunable);
    throw NoConfigError("tunekit::online: " + file_.string() + " has no config for " + text_of(size) +
                        ": the spec's checks it carries allow none of its tuned configs at this untuned size, and " +
                        untunable);
  }

  std::optional<Params> find(const Size& size) const {
    std::lock_guard lock(mutex_);
    return find_locked(size);
  }

  // The rule of the header `tunekit emit` writes: the tuned size nearest in
  // log space (the smallest product over the axes, in the file's size_order,
  // of max(a, b) / min(a, b), values below 1 counting as 1, or on an axis of
  // floats those below the smallest positive double as it; ties to the
  // earlier entry), among the configs the file's checks allow at `size`,
  // with the pinned parameters computed from `size`. nullopt where the
  // checks allow none (the header's <kernel>_has_config is false there), or
  // the file has no entries: the nearest with its pins computed would be a
  // config no build had. get() then throws NoConfigError.
  // Throws FileError for a file with checks or pins but not their trees (an
  // older tunekit's): its config could be one the constraints reject.
  // Throws std::invalid_argument as get() does.
  std::optional<Params> nearest(const Size& size) const {
    std::lock_guard lock(mutex_);
    check_names_locked(size);
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
  };

  FileError error(const std::string& message) const { return FileError(file_, 0, 0, message); }

  Entry entry_of(const nlohmann::ordered_json& e, const std::string& which) const {
    if (!e.is_object() || !e.contains("size") || !e["size"].is_object() || !e.contains("config") ||
        !e["config"].is_object())
      throw error(which + " is not an object with a \"size\" and a \"config\" object");
    Entry entry;
    for (const auto& [k, v] : e["size"].items()) {
      if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
        entry.size[k] = v.get<std::int64_t>();
      else if (v.is_number_float()) entry.size[k] = v.get<double>();
      else throw error(which + ": size " + k + " is " + v.dump() + "; expected a 64-bit integer or a float");
    }
    for (const auto& [k, v] : e["config"].items()) {
      if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
        entry.params.emplace(k, v.get<std::int64_t>());
      else if (v.is_number_float()) entry.params.emplace(k, v.get<double>());
      else if (v.is_string()) entry.params.emplace(k, v.get<std::string>());
      else throw error(which + ": parameter " + k + " is " + v.dump() + "; expected an integer, a float or a string");
    }
    return entry;
  }

  void load() {
    std::error_code ec;
    if (!std::filesystem::exists(file_, ec) && !ec) {
      // A new file: what get() saves to it when it tunes.
      doc_ = {{"kernel", ""}, {"selection", "online"}, {"entries", nlohmann::ordered_json::array()}};
      return;
    }
    std::ifstream in(file_, std::ios::binary);
    const std::string s = in ? std::string(std::istreambuf_iterator<char>(in), {}) : std::string();
    if (!in || in.bad())
      throw error("cannot be read" + (ec ? ": " + ec.message() : std::string()) +
                  "; expected the JSON that `tunekit emit --json` writes");
    try {
      doc_ = nlohmann::ordered_json::parse(s);
    } catch (const nlohmann::json::parse_error& e) {
      // The place nlohmann stopped at: e.byte characters read.
      int line = 1, column = 0;
      for (std::size_t i = 0; i < std::min<std::size_t>(e.byte, s.size()); ++i) {
        if (s[i] == '\n') ++line, column = 0;
        else ++column;
      }
      std::string why = e.what();  // "[json.exception...] parse error at line 1, column 2: WHY"
      if (auto at = why.find("column "); at != std::string::npos && why.find(": ", at) != std::string::npos)
        why = why.substr(why.find(": ", at) + 2);
      throw FileError(file_, line, std::max(column, 1), "malformed JSON: " + why);
    }
    if (!doc_.is_object() || !doc_.contains("entries") || !doc_["entries"].is_array())
      throw error("expected an object with an \"entries\" array, as `tunekit emit --json` writes");
    std::size_t index = 0;
    for (const auto& e : doc_["entries"]) entries_.push_back(entry_of(e, "entry " + std::to_string(++index)));
    if (doc_.contains("size_order"))
      for (const auto& n : doc_["size_order"])
        if (n.is_string()) size_order_.push_back(n.get<std::string>());
    // The header's rule for an untuned size: its checks and pins, as trees
    // (emit_json writes them beside their text).
    if (doc_.contains("checks") && doc_["checks"].contains("constraints") && !doc_["checks"]["constraints"].empty()) {
      const auto& checks = doc_["checks"];
      if (!checks.contains("trees") || !checks["trees"].is_array() ||
          checks["trees"].size() != checks["constraints"].size())
        rule_missing_ = "checks.constraints";
      else checks_.assign(checks["trees"].begin(), checks["trees"].end());
    }
    if (doc_.contains("pinned") && !doc_["pinned"].empty()) {
      if (!doc_.contains("pinned_trees") || !doc_["pinned_trees"].is_object() ||
          doc_["pinned_trees"].size() != doc_["pinned"].size())
        rule_missing_ += (rule_missing_.empty() ? "" : " and ") + std::string("pinned");
      else
        for (const auto& [name, tree] : doc_["pinned_trees"].items()) pins_.emplace_back(name, tree);
    }
  }

  // The size's names against the file's: its size_order, else its first
  // entry's (a new file's first size sets them).
  void check_names_locked(const Size& size) const {
    std::vector<std::string> known = size_order_;
    if (known.empty() && !entries_.empty())
      for (const auto& [n, v] : entries_.front().size) known.push_back(n);
    if (known.empty()) return;
    std::vector<std::string> given;
    for (const auto& [n, v] : size) given.push_back(n);
    std::vector<std::string> sorted = known;
    std::sort(sorted.begin(), sorted.end());
    if (given == sorted) {  // a std::map's keys are sorted
      // A float for an axis the file holds as integers: the header's
      // argument there is an integer, and the Python module refuses it too.
      for (const auto& [n, v] : size)
        if (v.is_float() && !entries_.empty() && std::all_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
              const auto it = e.size.find(n);
              return it == e.size.end() || it->second.is_int();
            }))
          throw std::invalid_argument("tunekit::online: size " + n + " is " + v.str() + ", but " + file_.string() +
                                      " holds " + n + " as integers; give an integer");
      return;
    }
    auto list = [](const std::vector<std::string>& names) {
      std::string out;
      for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
      return out.empty() ? std::string("none") : out;
    };
    throw std::invalid_argument("tunekit::online: a size that names " + list(given) + ", but the sizes of " +
                                file_.string() + " name " + list(known));
  }

  std::optional<Params> find_locked(const Size& size) const {
    for (const auto& e : entries_)
      if (e.size == size) return e.params;
    return std::nullopt;
  }

  std::optional<Params> nearest_locked(const Size& size) const {
    if (entries_.empty()) return std::nullopt;
    if (!rule_missing_.empty())
      throw error("has " + rule_missing_ +
                  " but not the trees this reader evaluates, so the nearest tuned "
                  "config could be one the spec's constraints reject; emit the file again with this tunekit "
                  "(`tunekit emit SPEC --json FILE`)");
    // The header's argument order, which its product of ratios follows.
    std::vector<std::string> names;
    for (const auto& n : size_order_)
      if (size.count(n)) names.push_back(n);
    for (const auto& [n, v] : size)
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    // An axis of floats (a sparsity) is floored at the smallest positive
    // double, not at 1, which would make all its values one; the header
    // holds such an axis as doubles where any tuned value is one.
    std::map<std::string, double> floor;
    for (const auto& n : names) {
      const bool floats = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
        const auto it = e.size.find(n);
        return it != e.size.end() && it->second.is_float();
      });
      floor[n] = floats ? std::numeric_limits<double>::min() : 1.0;
    }
    const std::size_t none = entries_.size();
    std::size_t best = none, allowed = none;
    double best_d = 0, allowed_d = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      double d = 1;
      for (const auto& n : names) {
        auto it = e.size.find(n);
        if (it == e.size.end()) continue;
        double a = it->second.as_float(), b = size.at(n).as_float();
        const double low = floor.at(n);
        a = a < low ? low : a;
        b = b < low ? low : b;
        d *= a > b ? a / b : b / a;
      }
      if (best == none || d < best_d) best = i, best_d = d;
      if (!checks_.empty() && allowed_locked(pinned_locked(e.params, size), size) && (allowed == none || d < allowed_d))
        allowed = i, allowed_d = d;
    }
    if (checks_.empty()) return pinned_locked(entries_[best].params, size);
    if (allowed == none) return std::nullopt;
    return pinned_locked(entries_[allowed].params, size);
  }

  static std::string text_of(const Size& size) {
    std::string out;
    for (const auto& [n, v] : size) out += (out.empty() ? "" : ", ") + n + "=" + v.str();
    return "{" + out + "}";
  }

  Params pinned_locked(Params params, const Size& size) const {
    for (const auto& [name, tree] : pins_) params.insert_or_assign(name, eval(tree, params, size));
    return params;
  }

  bool allowed_locked(const Params& params, const Size& size) const {
    for (const auto& c : checks_)
      if (!eval(c, params, size)) return false;
    return true;
  }

  // Evaluates a tree of Expression::to_tree with the generated header's
  // integer semantics: 64-bit, wrapping, floor division and modulo, 0 for a
  // division by zero.
  std::int64_t eval(const nlohmann::ordered_json& t, const Params& c, const Size& size) const {
    if (t.is_number_integer()) return t.get<std::int64_t>();
    if (!t.is_array() || t.empty() || !t[0].is_string())
      throw error("a check or pin has a malformed tree: " + t.dump());
    const std::string op = t[0].get<std::string>();
    auto arg = [&](std::size_t k) {
      if (k >= t.size()) throw error("a check or pin has a malformed tree: " + t.dump());
      return eval(t[k], c, size);
    };
    using U = std::uint64_t;
    auto wrap = [](U v) { return static_cast<std::int64_t>(v); };
    auto floordiv = [](std::int64_t a, std::int64_t b) -> std::int64_t {
      if (b == 0) return 0;
      if (a == INT64_MIN && b == -1) return INT64_MIN;
      const std::int64_t q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    };
    if (op == "size" || op == "param") {
      const std::string name = t.size() == 2 && t[1].is_string() ? t[1].get<std::string>() : std::string();
      if (op == "size") {
        // emit writes no check or pin over a float axis (the header's are integer C++).
        if (auto s = size.find(name); s != size.end() && s->second.is_int()) return s->second.as_int();
        throw error("a check or pin reads size '" + name + "', which the size asked for lacks or holds as a float");
      }
      if (auto p = c.find(name); p != c.end() && p->second.is_int()) return p->second.as_int();
      throw error("a check reads parameter '" + name + "', which a config lacks or holds as other than an integer");
    }
    if (op == "-" && t.size() == 2) return wrap(U(0) - U(arg(1)));
    if (op == "~") return ~arg(1);
    if (op == "not") return !arg(1);
    if (op == "abs") {
      const std::int64_t a = arg(1);
      return a < 0 ? wrap(U(0) - U(a)) : a;
    }
    if (op == "and" || op == "or") {  // Python's: the first falsy (truthy) operand, else the last
      for (std::size_t k = 1; k + 1 < t.size(); ++k) {
        const std::int64_t v = arg(k);
        if ((op == "and") == !v) return v;
      }
      return arg(t.size() - 1);
    }
    if (op == "if") return arg(1) ? arg(2) : arg(3);
    if (op == "min" || op == "max") {  // pairwise from the left: the first of equal extremes
      std::int64_t acc = arg(1);
      for (std::size_t k = 2; k < t.size(); ++k) {
        const std::int64_t b = arg(k);
        if (op == "min" ? b < acc : b > acc) acc = b;
      }
      return acc;
    }
    if (op == "cmp") {  // a Python chain: [a, op, b, op, c ...]
      std::int64_t a = arg(1);
      for (std::size_t k = 2; k + 1 < t.size(); k += 2) {
        const std::string cmp = t[k].is_string() ? t[k].get<std::string>() : std::string();
        bool holds;
        if (cmp == "in" || cmp == "not in") {
          const auto& list = t[k + 1];
          if (!list.is_array() || list.empty() || list[0] != "list")
            throw error("a check has a malformed 'in': " + t.dump());
          bool any = false;
          for (std::size_t i = 1; i < list.size() && !any; ++i) any = eval(list[i], c, size) == a;
          holds = (cmp == "in") == any;
          if (!holds) return 0;
          continue;  // a list ends the chain (to_tree refuses more)
        }
        const std::int64_t b = arg(k + 1);
        if (cmp == "==") holds = a == b;
        else if (cmp == "!=") holds = a != b;
        else if (cmp == "<") holds = a < b;
        else if (cmp == "<=") holds = a <= b;
        else if (cmp == ">") holds = a > b;
        else if (cmp == ">=") holds = a >= b;
        else throw error("a check has an unknown comparison '" + cmp + "'; written by a newer tunekit?");
        if (!holds) return 0;
        a = b;
      }
      return 1;
    }
    const std::int64_t a = arg(1), b = arg(2);
    if (op == "+") return wrap(U(a) + U(b));
    if (op == "-") return wrap(U(a) - U(b));
    if (op == "*") return wrap(U(a) * U(b));
    if (op == "//") return floordiv(a, b);
    if (op == "%") return b == 0 ? 0 : wrap(U(a) - U(floordiv(a, b)) * U(b));
    if (op == "ceil_div") return wrap(U(0) - U(floordiv(wrap(U(0) - U(a)), b)));
    if (op == "&") return a & b;
    if (op == "|") return a | b;
    if (op == "^") return a ^ b;
    if (op == "<<") return wrap(U(a) * (U(1) << b));  // b in 0..62 (to_tree refuses others)
    if (op == ">>") return floordiv(a, std::int64_t{1} << b);
    throw error("a check or pin has an unknown operation '" + op + "'; written by a newer tunekit?");
  }

  // Processes that tune into one file each save what they tuned: under a
  // lock (FILE.lock), each reads the file again and keeps the entries other
  // processes saved since it was read, so none is lost.
  void save_locked() {
    if (file_.has_parent_path()) {
      std::error_code ec;
      std::filesystem::create_directories(file_.parent_path(), ec);
      if (ec) throw error("cannot create its folder: " + ec.message());
    }
    const std::string lock_path = file_.string() + ".lock";
    const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0) throw error("cannot be saved: cannot open its lock file " + lock_path);
    struct Unlock {
      int fd;
      ~Unlock() { ::close(fd); }  // closing releases the lock
    } unlock{lock};
    while (::flock(lock, LOCK_EX) != 0)
      if (errno != EINTR) throw error("cannot be saved: cannot lock " + lock_path);
    merge_saved_locked();
    // Write then rename: a program killed mid-save leaves the old file whole.
    // The name is this process's and this object's own.
    const std::filesystem::path tmp = file_.string() + "." + std::to_string(::getpid()) + "." +
                                      std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".tmp";
    {
      std::ofstream out(tmp);
      out << doc_.dump(2) << "\n";
      out.close();
      if (!out) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw error("cannot be saved: writing " + tmp.string() + " failed");
      }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, file_, ec);
    if (ec) throw error("cannot be saved: renaming " + tmp.string() + " to it failed: " + ec.message());
  }

  // The entries the file on disk holds for sizes this object has none for
  // (saved by another process since this one read it), added to this one.
  void merge_saved_locked() {
    std::ifstream in(file_, std::ios::binary);
    if (!in) return;
    const auto saved =
        nlohmann::ordered_json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
    if (!saved.is_object() || !saved.contains("entries") || !saved["entries"].is_array()) return;
    for (const auto& e : saved["entries"]) {
      if (!e.is_object() || !e.contains("size")) continue;
      const bool have = std::any_of(doc_["entries"].begin(), doc_["entries"].end(),
                                    [&](const nlohmann::ordered_json& mine) { return mine["size"] == e["size"]; });
      if (have) continue;
      try {
        entries_.push_back(entry_of(e, "an entry another process saved"));
        doc_["entries"].push_back(e);
      } catch (const FileError&) {
      }
    }
  }

  std::filesystem::path file_;
  Mode mode_;
  nlohmann::ordered_json doc_;  // the file as read: saved back whole, with the entries tuned here added
  std::vector<Entry> entries_;
  std::vector<std::string> size_order_;
  std::vector<nlohmann::ordered_json> checks_;                        // checks.trees
  std::vector<std::pair<std::string, nlohmann::ordered_json>> pins_;  // pinned_trees
  std::string rule_missing_;  // what the file has without its trees (an older tunekit's)
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
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    const double median = t[t.size() / 2];
    if (best.second < 0 || median < best.second) best = {p, median};
  }
  return best;
}

}  // namespace tunekit::online
