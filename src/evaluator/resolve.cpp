#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/detail/npy.hpp"
#include "tunekit/evaluator.hpp"

namespace tunekit {

namespace {

// The NumPy dtype of an element type, as an .npy header writes it on a
// little-endian machine; none for bf16, which NumPy lacks.
std::optional<std::string> npy_descr(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return "<f4";
    case ElementType::f64:
      return "<f8";
    case ElementType::f16:
      return "<f2";
    case ElementType::bf16:
      return std::nullopt;
    case ElementType::i8:
      return "|i1";
    case ElementType::u8:
      return "|u1";
    case ElementType::i16:
      return "<i2";
    case ElementType::u16:
      return "<u2";
    case ElementType::i32:
      return "<i4";
    case ElementType::u32:
      return "<u4";
    case ElementType::i64:
      return "<i8";
    case ElementType::u64:
      return "<u8";
  }
  return std::nullopt;
}

// Where the data of a file fill starts, once the file is found to hold
// `count` elements of the argument's type: an .npy file's header must name
// that type in C order, and any other file is raw bytes, count of them.
void resolve_file_fill(const ArgumentSpec& a, ResolvedArgument& r) {
  namespace fs = std::filesystem;
  const std::string file = a.fill_file.string();
  auto fail = [&](const std::string& why) {
    throw InputError(a.fill_where, fmt::format("argument '{}' is filled from {}, which {}", a.name, file, why));
  };
  std::error_code ec;
  const std::uintmax_t bytes = fs::file_size(a.fill_file, ec);
  if (ec) fail("cannot be read: " + ec.message());
  const std::uint64_t element = size_of(a.type);
  std::uint64_t offset = 0;
  if (detail::is_npy(a.fill_file)) {
    detail::NpyHeader h;
    try {
      h = detail::read_npy_header(a.fill_file);
    } catch (const std::exception& e) {
      fail(e.what());
    }
    const auto want = npy_descr(a.type);
    if (!want)
      fail(fmt::format("is an .npy file, but NumPy has no {} type: give the raw bytes in a file of another name",
                       to_string(a.type)));
    // '=' is the machine's order (little-endian here), and '<' or '|' alike
    // for a one-byte type, to which no order applies.
    std::string descr = h.descr;
    if (!descr.empty() && (descr[0] == '=' || (element == 1 && descr[0] == '<'))) descr[0] = (*want)[0];
    if (descr != *want)
      fail(fmt::format("holds dtype '{}', but the argument is {} ('{}' in NumPy)", h.descr, to_string(a.type), *want));
    if (h.fortran_order) fail("is in Fortran order; save it in C order (numpy.ascontiguousarray)");
    if (h.count() != r.count) fail(fmt::format("holds {} elements, but the argument has {} here", h.count(), r.count));
    offset = h.data_offset;
  } else if (bytes != r.count * element) {
    fail(fmt::format("is {} bytes, but the argument's {} elements of {} are {}", bytes, r.count, to_string(a.type),
                     r.count * element));
  }
  if (bytes < offset + r.count * element) fail("is shorter than its header says");
  const auto changed = fs::last_write_time(a.fill_file, ec).time_since_epoch().count();
  r.fill_file = file;
  r.fill_offset = offset;
  r.fill_stamp = fmt::format("{}:{}", bytes, changed);
}

}  // namespace

std::vector<ResolvedArgument> resolve_arguments(const std::vector<ArgumentSpec>& args, const Bindings& env,
                                                const Config& config) {
  const auto reads_config = [&](const Expression& e) {
    const auto& names = e.variables();
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return config.find(n) != nullptr; });
  };
  std::vector<ResolvedArgument> out;
  out.reserve(args.size());
  for (const auto& a : args) {
    ResolvedArgument r;
    r.name = a.name;
    r.type = a.type;
    r.role = a.role;
    r.fill = a.fill;
    r.fill_value = a.fill_value;
    r.setup = a.setup;
    r.passed = a.passed;
    r.constant_memory = a.constant_memory;
    if (a.role == Role::tensor_map) {
      if (!a.tensor_map) throw InputError(a.where, fmt::format("tensor map argument '{}' has no description", a.name));
      const TensorMapSpec& t = *a.tensor_map;
      auto of = std::find_if(args.begin(), args.end(), [&](const ArgumentSpec& b) { return b.name == t.of; });
      if (of == args.end() || of->role == Role::scalar || of->role == Role::tensor_map)
        throw InputError(t.where,
                         fmt::format("tensor map '{}': 'of' must name a buffer argument, got '{}'", a.name, t.of));
      r.type = of->type;
      ResolvedTensorMap m;
      m.of = t.of;
      for (const auto& e : t.dims) m.dims.push_back(e.evaluate_int(env));
      for (const auto& e : t.box) m.box.push_back(e.evaluate_int(env));
      m.swizzle = t.swizzle;
      m.oob_nan = t.oob_nan;
      m.l2_promotion = t.l2_promotion;
      r.tensor_map = std::move(m);
    } else if (a.role == Role::scalar) {
      if (!a.value) throw InputError(a.where, fmt::format("scalar argument '{}' has no value", a.name));
      r.scalar = a.value->evaluate(env);
      if (r.scalar.is_string())
        throw InputError(a.value->where(), fmt::format("argument '{}' evaluates to a string", a.name));
      // A value its type cannot hold would reach the kernel wrapped around
      // (4294967312 as an i32 is 16).
      if (auto range = integer_range(a.type)) {
        const double v = r.scalar.to_double();
        // Nor may it lose a fraction on the way (N/3 is true division).
        if (!r.scalar.is_int() && std::isfinite(v) && v != std::floor(v))
          throw InputError(a.value->where(),
                           fmt::format("argument '{}' = {} is not a whole number, which its type {} needs (// divides "
                                       "to a whole number)",
                                       a.name, r.scalar.repr(), to_string(a.type)));
        const bool fits =
            r.scalar.is_int()
                ? (a.type == ElementType::u64 ? r.scalar.as_int() >= 0
                                              : r.scalar.as_int() >= range->first && r.scalar.as_int() <= range->second)
                : std::isfinite(v) && v >= static_cast<double>(range->first) && v <= static_cast<double>(range->second);
        if (!fits)
          throw InputError(a.value->where(), fmt::format("argument '{}' = {} does not fit its type {} ({} to {})",
                                                         a.name, r.scalar.repr(), to_string(a.type), range->first,
                                                         a.type == ElementType::u64 ? std::string("2^64-1")
                                                                                    : std::to_string(range->second)));
      }
    } else if (!a.shape.empty()) {
      std::int64_t n = 1;
      for (const auto& e : a.shape) {
        const std::int64_t d = e.evaluate_int(env);
        if (d < 0) throw InputError(e.where(), fmt::format("a dimension of argument '{}' is negative ({})", a.name, d));
        r.shape.push_back(d);
        n *= d;
      }
      r.count = static_cast<std::uint64_t>(n);
      r.sized_by_config = std::any_of(a.shape.begin(), a.shape.end(), reads_config);
    } else if (!a.setup.empty() && !a.size) {
      r.count = 0;  // the setup function makes it, whatever its size
    } else {
      if (!a.size) throw InputError(a.where, fmt::format("buffer argument '{}' has no size", a.name));
      const std::int64_t n = a.size->evaluate_int(env);
      if (n < 0) throw InputError(a.size->where(), fmt::format("size of argument '{}' is negative ({})", a.name, n));
      r.count = static_cast<std::uint64_t>(n);
      r.sized_by_config = reads_config(*a.size);
    }
    if (a.fill == Fill::file) resolve_file_fill(a, r);
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
  dims(launch.cluster, g.cluster, "cluster");
  if (launch.shared_memory) {
    const std::int64_t v = launch.shared_memory->evaluate_int(env);
    if (v < 0) throw InputError(launch.shared_memory->where(), fmt::format("shared_memory = {} is negative", v));
    g.shared_memory = static_cast<std::uint64_t>(v);
  }
  return g;
}

}  // namespace tunekit
