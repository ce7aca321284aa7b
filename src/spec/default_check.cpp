// Why a spec's default config is not valid here (spec.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/detail/text.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

namespace {

std::string list_values(const std::vector<Value>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v.repr());  // '8' and 8 look apart
  return "[" + fmt::format("{}", fmt::join(out, ", ")) + "]";
}

// `T * W <= max_threads and S > 2` fails for S alone on every machine: one
// of its top-level terms, with the default and the size put in, is false
// with no machine property left to decide it.
bool fails_on_every_machine(const Expression& constraint, const Bindings& fixed) {
  for (const Expression& term : constraint.conjuncts()) {
    const Expression rest = term.bind(fixed);
    if (rest.variables().empty() && !rest.test({})) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> default_config_problem(const Spec& spec, const Bindings& size,
                                                  const Bindings& machine_properties) {
  if (!spec.default_config) return std::nullopt;
  const Config& d = *spec.default_config;
  const std::string head = (spec.default_config_where.line ? spec.default_config_where.str() + ": " : std::string()) +
                           "the default " + d.str();
  for (const auto& p : spec.parameters) {
    const Value* v = d.find(p.name);
    if (!v) return fmt::format("{} gives no value for {}", head, p.name);
    bool listed = false;
    for (const auto& x : p.values) listed = listed || x == *v;
    if (!listed)
      return fmt::format("{} is outside its lists: {} = {} is not among {}'s values {}{}", head, p.name, v->repr(),
                         p.name, list_values(p.values), p.where.line ? " (listed at " + p.where.str() + ")" : "");
  }
  Bindings fixed = size;  // what the machine does not give: a size named like a property wins, as in the tuner
  for (const auto& [k, v] : d) fixed[k] = v;
  Bindings env = machine_properties;
  for (const auto& [k, v] : fixed) env[k] = v;
  for (const auto& c : spec.constraints) {
    std::vector<Value> values;
    std::vector<std::string> shown, machine;
    bool bound = true;
    for (const auto& name : c.variables()) {
      auto it = env.find(name);
      if (it == env.end()) {
        bound = false;
        break;
      }
      values.push_back(it->second);
      const bool from_machine = !d.find(name) && !size.count(name) && machine_properties.count(name);
      (from_machine ? machine : shown).push_back(name + " = " + detail::shown_value(it->second));
    }
    if (!bound || c.test(values)) continue;
    if (!machine.empty() && fails_on_every_machine(c, fixed)) machine.clear();
    std::string with;
    if (!shown.empty()) with += fmt::format("{}", fmt::join(shown, ", "));
    if (!machine.empty())
      with += (with.empty() ? "" : " and ") + fmt::format("the machine's {}", fmt::join(machine, ", "));
    return fmt::format("{} breaks the constraint `{}`{}{}{}", head, c.text(),
                       c.where().line ? " (" + c.where().str() + ")" : "", with.empty() ? "" : " with " + with,
                       size.empty() ? "" : " at size " + detail::shown_bindings(size)) +
           (machine.empty() ? "" : "; it depends on the machine, so give a default valid on the machines you target");
  }
  return std::nullopt;
}

}  // namespace tunekit
