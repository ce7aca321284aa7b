#include "tunekit/objective.hpp"

#include <cmath>

namespace tunekit {

std::string Objective::describe() const {
  if (is_time()) return "time (lower is better)";
  return name + (maximize ? " (higher is better)" : " (lower is better)");
}

std::optional<std::string> early_stop_conflict(const Objective& objective) {
  if (objective.is_time()) return std::nullopt;
  return "the early stop compares times, and the objective is " + objective.describe() +
         ", by which a config slower in time can still be the best";
}

Bindings metric_bindings(const TrialRecord& trial) {
  Bindings b = trial.size;
  for (const auto& [k, v] : trial.config) b[k] = v;
  const double us = trial.stats.median.count();
  b["time_us"] = Value(us);
  b["time_s"] = Value(us * 1e-6);
  return b;
}

namespace {

std::optional<double> evaluate_metric(const Metric& m, const Bindings& env) {
  std::vector<Value> values;
  values.reserve(m.expression.variables().size());
  for (const auto& name : m.expression.variables()) {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;  // the loader checks names; an old trial may lack one
    values.push_back(it->second);
  }
  auto v = m.expression.evaluate(values);
  if (!v || v->is_string()) return std::nullopt;
  const double d = v->to_double();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

}  // namespace

std::optional<std::string> metric_problem(const Metric& m, const TrialRecord& trial) {
  const Bindings env = metric_bindings(trial);
  if (evaluate_metric(m, env)) return std::nullopt;
  Value v;
  try {
    v = m.expression.evaluate(env);  // the cold path, which says why
  } catch (const InputError& e) {
    return e.message();
  }
  if (v.is_string()) return "it gives the string " + v.repr() + ", not a number";
  return "it gives " + v.repr() + ", not a finite number";
}

std::vector<std::pair<std::string, std::optional<double>>> metric_values(const std::vector<Metric>& metrics,
                                                                         const TrialRecord& trial) {
  std::vector<std::pair<std::string, std::optional<double>>> out;
  if (trial.status != Status::ok || metrics.empty()) return out;
  const Bindings env = metric_bindings(trial);
  for (const auto& m : metrics) out.emplace_back(m.name, evaluate_metric(m, env));
  return out;
}

std::optional<double> objective_value(const Objective& objective, const std::vector<Metric>& metrics,
                                      const TrialRecord& trial) {
  if (trial.status != Status::ok) return std::nullopt;
  if (objective.is_time()) return trial.stats.median.count();
  for (const auto& m : metrics)
    if (m.name == objective.name) return evaluate_metric(m, metric_bindings(trial));
  return std::nullopt;
}

std::optional<double> objective_cost(const Objective& objective, const std::vector<Metric>& metrics,
                                     const TrialRecord& trial) {
  auto v = objective_value(objective, metrics, trial);
  if (!v) return std::nullopt;
  return objective.maximize ? -*v : *v;
}

std::optional<double> search_cost(const Objective& objective, double value) {
  if (!(value > 0) || !std::isfinite(value)) return std::nullopt;
  const double cost = objective.maximize ? 1 / value : value;
  return std::isfinite(cost) && cost > 0 ? std::optional<double>(cost) : std::nullopt;
}

bool objective_better(const Objective& objective, double candidate, double incumbent) {
  return objective.maximize ? candidate > incumbent : candidate < incumbent;
}

std::optional<double> objective_gain(const Objective& objective, double baseline, double candidate) {
  if (!(baseline > 0) || !(candidate > 0) || !std::isfinite(baseline) || !std::isfinite(candidate)) return std::nullopt;
  return objective.maximize ? candidate / baseline : baseline / candidate;
}

}  // namespace tunekit
