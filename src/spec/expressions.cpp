// The names a spec's expressions use (spec.hpp).
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

std::vector<const Expression*> trial_expressions(const Spec& spec) {
  std::vector<const Expression*> out;
  for (const auto& c : spec.constraints) out.push_back(&c);
  for (const LaunchSpec* l : {&spec.kernel.launch, &spec.reference.launch}) {
    for (const auto* list : {&l->grid, &l->block, &l->cluster})
      for (const auto& e : *list) out.push_back(&e);
    if (l->shared_memory) out.push_back(&*l->shared_memory);
  }
  for (const auto& a : spec.arguments) {
    if (a.size) out.push_back(&*a.size);
    if (a.value) out.push_back(&*a.value);
    for (const auto& e : a.shape) out.push_back(&e);
    if (a.tensor_map) {
      for (const auto& e : a.tensor_map->dims) out.push_back(&e);
      for (const auto& e : a.tensor_map->box) out.push_back(&e);
    }
  }
  return out;
}

void check_expression_names(const Spec& spec, const Bindings& known) {
  std::set<std::string> names;
  for (const auto& p : spec.parameters) names.insert(p.name);
  for (const auto& [k, v] : known) names.insert(k);
  for (const Expression* e : trial_expressions(spec))
    for (const auto& n : e->variables()) {
      if (names.count(n)) continue;
      std::vector<std::string> parameters, others;
      for (const auto& p : spec.parameters) parameters.push_back(p.name);
      for (const auto& [k, v] : known) others.push_back(k);
      throw InputError(e->where(), fmt::format("unknown name '{}' in '{}'{} (parameters: {}; sizes and machine "
                                               "properties: {})",
                                               n, e->text(), did_you_mean(n, {names.begin(), names.end()}),
                                               parameters.empty() ? "none" : fmt::format("{}", fmt::join(parameters, ", ")),
                                               others.empty() ? "none" : fmt::format("{}", fmt::join(others, ", "))));
    }
}

void check_parameter_names(const Spec& spec, const Bindings& properties) {
  for (const auto& param : spec.parameters)
    if (properties.count(param.name)) {
      std::vector<std::string> names;
      for (const auto& [k, v] : properties) names.push_back(k);
      throw InputError(param.where, fmt::format("parameter '{}' has the name of a property of the machine ({}); "
                                                "rename the parameter",
                                                param.name, fmt::join(names, ", ")));
    }
}

}  // namespace tunekit
