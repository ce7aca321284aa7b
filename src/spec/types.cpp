// Names of the spec's enumerations.
#include <array>
#include <cstdint>
#include <iterator>

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

constexpr Named<Fill> kFills[] = {
    {Fill::random, "random"}, {Fill::constant, "constant"}, {Fill::sequence, "sequence"}, {Fill::zeros, "zeros"}};
constexpr Named<Role> kRoles[] = {{Role::in, "in"},
                                  {Role::out, "out"},
                                  {Role::inout, "inout"},
                                  {Role::scalar, "scalar"},
                                  {Role::tensor_map, "tensor_map"}};
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
}  // namespace tunekit
