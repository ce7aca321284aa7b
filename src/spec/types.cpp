// Names of the spec's enumerations, and the ranges of the element types.
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

#include "tunekit/spec.hpp"

namespace tunekit {

namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;
  std::size_t bytes;
  const char* c_name;  // what a CPU kernel's scalar parameter is declared as
};

// f16 and bf16 are stored as their 16-bit patterns on the host.
constexpr TypeInfo kTypes[] = {
    {ElementType::f32, "f32", 4, "float"},    {ElementType::f64, "f64", 8, "double"},
    {ElementType::f16, "f16", 2, "_Float16"}, {ElementType::bf16, "bf16", 2, "uint16_t"},
    {ElementType::i8, "i8", 1, "int8_t"},     {ElementType::i16, "i16", 2, "int16_t"},
    {ElementType::i32, "i32", 4, "int32_t"},  {ElementType::i64, "i64", 8, "int64_t"},
    {ElementType::u8, "u8", 1, "uint8_t"},    {ElementType::u16, "u16", 2, "uint16_t"},
    {ElementType::u32, "u32", 4, "uint32_t"}, {ElementType::u64, "u64", 8, "uint64_t"},
};

constexpr auto kTypeNames = [] {
  std::array<Named<ElementType>, std::size(kTypes)> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = {kTypes[i].type, kTypes[i].name};
  return out;
}();

constexpr Named<Fill> kFills[] = {{Fill::random, "random"},     {Fill::normal, "normal"}, {Fill::constant, "constant"},
                                  {Fill::sequence, "sequence"}, {Fill::zeros, "zeros"},   {Fill::file, "file"}};
constexpr Named<Role> kRoles[] = {{Role::in, "in"},         {Role::out, "out"},
                                  {Role::inout, "inout"},   {Role::scratch, "scratch"},
                                  {Role::scalar, "scalar"}, {Role::tensor_map, "tensor_map"}};
constexpr Named<Injection> kInjections[] = {{Injection::automatic, "auto"},
                                            {Injection::defines, "defines"},
                                            {Injection::tunable_lines, "tunable"},
                                            {Injection::range_defines, "range"},
                                            {Injection::defines, "none"}};

const TypeInfo& info(ElementType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];
}

}  // namespace

std::string_view to_string(ElementType t) { return info(t).name; }

std::optional<ElementType> element_type_from_string(std::string_view s) { return value_named(element_type_names(), s); }

NameTable<ElementType> element_type_names() { return kTypeNames; }
NameTable<Fill> fill_names() { return kFills; }
NameTable<Role> role_names() { return kRoles; }
NameTable<Injection> injection_names() { return kInjections; }

std::size_t size_of(ElementType t) { return info(t).bytes; }

const char* c_type_name(ElementType t) { return info(t).c_name; }

std::string_view to_string(Fill f) { return name_of(fill_names(), f); }

std::string_view to_string(Role r) { return name_of(role_names(), r); }

}  // namespace tunekit

namespace tunekit {
bool is_floating(ElementType t) {
  return t == ElementType::f32 || t == ElementType::f64 || t == ElementType::f16 || t == ElementType::bf16;
}

std::optional<std::pair<std::int64_t, std::int64_t>> integer_range(ElementType t) {
  switch (t) {
    case ElementType::i8:
      return std::pair<std::int64_t, std::int64_t>{INT8_MIN, INT8_MAX};
    case ElementType::i16:
      return std::pair<std::int64_t, std::int64_t>{INT16_MIN, INT16_MAX};
    case ElementType::i32:
      return std::pair<std::int64_t, std::int64_t>{INT32_MIN, INT32_MAX};
    case ElementType::i64:
      return std::pair<std::int64_t, std::int64_t>{INT64_MIN, INT64_MAX};
    case ElementType::u8:
      return std::pair<std::int64_t, std::int64_t>{0, UINT8_MAX};
    case ElementType::u16:
      return std::pair<std::int64_t, std::int64_t>{0, UINT16_MAX};
    case ElementType::u32:
      return std::pair<std::int64_t, std::int64_t>{0, UINT32_MAX};
    case ElementType::u64:
      return std::pair<std::int64_t, std::int64_t>{0, INT64_MAX};
    default:
      return std::nullopt;
  }
}

std::optional<std::string> fill_misfit(ElementType t, Fill f, double value) {
  if (f == Fill::normal && integer_range(t))
    return fmt::format(
        "normal values are floating-point, and a buffer of {} holds integers (random gives it "
        "integers in [0, 100))",
        to_string(t));
  if (f != Fill::constant && f != Fill::sequence) return std::nullopt;
  if (!std::isfinite(value)) return fmt::format("{} is not a finite number", value);
  if (auto range = integer_range(t)) {
    if (value != std::floor(value))
      return fmt::format("{} is not a whole number, which a buffer of {} needs", value, to_string(t));
    // A sequence's later values depend on the buffer's length: only its
    // start is checked here.
    if (value < static_cast<double>(range->first) || value > static_cast<double>(range->second))
      return fmt::format("{} does not fit {} ({} to {})", value, to_string(t), range->first,
                         t == ElementType::u64 ? std::string("2^64-1") : std::to_string(range->second));
    return std::nullopt;
  }
  const double largest = t == ElementType::f16 ? 65504.0 : t == ElementType::f32 || t == ElementType::bf16 ? 3.4e38 : 0;
  if (largest > 0 && std::abs(value) > largest)
    return fmt::format("{} does not fit {} (at most {:g} in magnitude)", value, to_string(t), largest);
  return std::nullopt;
}
}  // namespace tunekit
