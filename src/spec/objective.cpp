// The `metrics` and `objective` sections.
#include "spec/detail/loader.hpp"

namespace tunekit::spec_detail {

namespace {
constexpr const char* kTimeNames[] = {"time_s", "time_us"};
}

void Loader::metrics(const Item& it, Spec& s) const {
  Map m = map(it, {}, "a mapping of metric names to expressions, e.g. {gflops: \"2*M*N*K / time_s / 1e9\"}");
  // What a metric may use: the sizes, the parameters and the measured time.
  std::vector<std::string> known(std::begin(kTimeNames), std::end(kTimeNames));
  for (const auto& [name, where] : size_names_) known.push_back(name);
  for (const auto& p : s.parameters) known.push_back(p.name);
  // In a metric, time_s is the measured time: a size or parameter so named
  // would be read as the time, silently.
  for (const char* time : kTimeNames) {
    if (auto sz = size_names_.find(time); sz != size_names_.end())
      fail(sz->second, fmt::format("size '{}' has the name a metric reads the measured time by; rename it", time));
    for (const auto& p : s.parameters)
      if (p.name == time)
        fail(p.where, fmt::format("parameter '{}' has the name a metric reads the measured time by; rename it", time));
  }
  for (const Entry& e : m.entries) {
    if (!is_identifier(e.key))
      fail(loc(e.key_node),
           "metric name '" + e.key + "' is not a valid name (letters, digits and '_', not starting with a digit)");
    if (e.key == "time" || std::find(known.begin(), known.end(), e.key) != known.end())
      fail(loc(e.key_node),
           "metric '" + e.key + "' has the name of a " +
               (e.key == "time" || e.key == "time_s" || e.key == "time_us" ? std::string("measured time")
                                                                           : "size or parameter") +
               "; give it another name");
    const Item value = child(m, e);
    Expression expr = expression_of(value, "an expression over sizes, parameters and time_s or time_us");
    for (const auto& name : expr.variables())
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string msg =
            "metric '" + e.key + "' uses '" + name + "', which is neither a size, a parameter, time_s nor time_us";
        if (auto near = closest_match(name, known)) msg += "; did you mean '" + *near + "'?";
        fail(content_loc(value), msg);
      }
    s.metrics.push_back(Metric{e.key, std::move(expr)});
  }
}

void Loader::objective(const Item& it, Spec& s) const {
  const std::string expected = "'time', or {minimize: METRIC} or {maximize: METRIC}";
  Objective o;
  o.where = content_loc(it);
  const bool scalar = it.node.IsScalar();
  if (scalar) {
    o.name = string_of(it, expected);
  } else if (it.node.IsMap()) {
    Map m = map(it, {"minimize", "maximize"}, expected);
    if (m.entries.size() != 1) fail(it.where, display(it.path) + " must be " + expected + " (one key)");
    o.maximize = m.entries[0].key == "maximize";
    // A new Item, not an assignment to a copy of `it`: assigning a
    // YAML::Node writes through to the node it refers to.
    const Item name = child(m, m.entries[0]);
    o.name = string_of(name, "a metric name");
    o.where = content_loc(name);
  } else {
    wrong_type(it, expected);
  }
  if (o.is_time()) {
    if (o.maximize) fail(o.where, "time can only be minimised: 'objective: time' (or name a metric to maximise)");
    s.objective = o;
    return;
  }
  std::vector<std::string> names{"time"};
  for (const auto& m : s.metrics) names.push_back(m.name);
  if (std::find(names.begin(), names.end(), o.name) == names.end()) {
    std::string msg = "objective '" + o.name + "' is neither 'time' nor a metric of 'metrics'";
    if (auto near = closest_match(o.name, names)) msg += "; did you mean '" + *near + "'?";
    msg += " (known: " + join(names) + ")";
    fail(o.where, msg);
  }
  if (scalar)
    fail(o.where, "say which way is better: 'objective: {maximize: " + o.name + "}' or '{minimize: " + o.name + "}'");
  s.objective = o;
}

}  // namespace tunekit::spec_detail
