#include <fmt/format.h>

#include "tunekit/evaluator.hpp"

namespace tunekit {

std::vector<ResolvedArgument> resolve_arguments(const std::vector<ArgumentSpec>& args, const Bindings& env) {
  std::vector<ResolvedArgument> out;
  out.reserve(args.size());
  for (const auto& a : args) {
    ResolvedArgument r;
    r.name = a.name;
    r.type = a.type;
    r.role = a.role;
    r.fill = a.fill;
    r.fill_value = a.fill_value;
    if (a.role == Role::scalar) {
      if (!a.value) throw InputError(a.where, fmt::format("scalar argument '{}' has no value", a.name));
      r.scalar = a.value->evaluate(env);
      if (r.scalar.is_string())
        throw InputError(a.value->where(), fmt::format("argument '{}' evaluates to a string", a.name));
    } else {
      if (!a.size) throw InputError(a.where, fmt::format("buffer argument '{}' has no size", a.name));
      const std::int64_t n = a.size->evaluate_int(env);
      if (n < 0)
        throw InputError(a.size->where(), fmt::format("size of argument '{}' is negative ({})", a.name, n));
      r.count = static_cast<std::uint64_t>(n);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tunekit

namespace tunekit {

LaunchGeometry resolve_launch(const LaunchSpec& launch, const Bindings& env) {
  LaunchGeometry g;
  auto dims = [&](const std::vector<Expression>& exprs, std::array<std::uint64_t, 3>& out, const char* what) {
    for (std::size_t i = 0; i < exprs.size() && i < 3; ++i) {
      const std::int64_t v = exprs[i].evaluate_int(env);
      if (v <= 0) throw InputError(exprs[i].where(), fmt::format("{}[{}] = {} must be positive", what, i, v));
      out[i] = static_cast<std::uint64_t>(v);
    }
  };
  dims(launch.grid, g.grid, "grid");
  dims(launch.block, g.block, "block");
  if (launch.shared_memory) {
    const std::int64_t v = launch.shared_memory->evaluate_int(env);
    if (v < 0) throw InputError(launch.shared_memory->where(), fmt::format("shared_memory = {} is negative", v));
    g.shared_memory = static_cast<std::uint64_t>(v);
  }
  return g;
}

}  // namespace tunekit
