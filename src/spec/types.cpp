// Names of the spec's enumerations.
#include <cstdint>

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
    {ElementType::f32, "f32", 4, "float"},      {ElementType::f64, "f64", 8, "double"},
    {ElementType::f16, "f16", 2, "_Float16"},   {ElementType::bf16, "bf16", 2, "uint16_t"},
    {ElementType::i8, "i8", 1, "int8_t"},       {ElementType::i16, "i16", 2, "int16_t"},
    {ElementType::i32, "i32", 4, "int32_t"},    {ElementType::i64, "i64", 8, "int64_t"},
    {ElementType::u8, "u8", 1, "uint8_t"},      {ElementType::u16, "u16", 2, "uint16_t"},
    {ElementType::u32, "u32", 4, "uint32_t"},   {ElementType::u64, "u64", 8, "uint64_t"},
};

const TypeInfo& info(ElementType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];
}

}  // namespace

std::string_view to_string(ElementType t) { return info(t).name; }

std::optional<ElementType> element_type_from_string(std::string_view s) {
  for (const auto& i : kTypes)
    if (i.name == s) return i.type;
  return std::nullopt;
}

std::size_t size_of(ElementType t) { return info(t).bytes; }

const char* c_type_name(ElementType t) { return info(t).c_name; }

std::string_view to_string(Fill f) {
  switch (f) {
    case Fill::random: return "random";
    case Fill::constant: return "constant";
    case Fill::sequence: return "sequence";
    case Fill::zeros: return "zeros";
  }
  return "?";
}

std::string_view to_string(Role r) {
  switch (r) {
    case Role::in: return "in";
    case Role::out: return "out";
    case Role::inout: return "inout";
    case Role::scalar: return "scalar";
    case Role::tensor_map: return "tensor_map";
  }
  return "?";
}

}  // namespace tunekit

namespace tunekit {
bool is_floating(ElementType t) {
  return t == ElementType::f32 || t == ElementType::f64 || t == ElementType::f16 || t == ElementType::bf16;
}
}  // namespace tunekit
