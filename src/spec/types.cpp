// Names of the spec's enumerations.
#include <cstdint>

#include "tunekit/spec.hpp"

namespace tunekit {

std::string_view to_string(ElementType t) {
  switch (t) {
    case ElementType::f32: return "f32";
    case ElementType::f64: return "f64";
    case ElementType::i8: return "i8";
    case ElementType::i16: return "i16";
    case ElementType::i32: return "i32";
    case ElementType::i64: return "i64";
    case ElementType::u8: return "u8";
    case ElementType::u16: return "u16";
    case ElementType::u32: return "u32";
    case ElementType::u64: return "u64";
  }
  return "?";
}

std::optional<ElementType> element_type_from_string(std::string_view s) {
  static constexpr ElementType all[] = {ElementType::f32, ElementType::f64, ElementType::i8,  ElementType::i16,
                                        ElementType::i32, ElementType::i64, ElementType::u8,  ElementType::u16,
                                        ElementType::u32, ElementType::u64};
  for (ElementType t : all)
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::size_t size_of(ElementType t) {
  switch (t) {
    case ElementType::f32: return sizeof(float);
    case ElementType::f64: return sizeof(double);
    case ElementType::i8: return sizeof(std::int8_t);
    case ElementType::i16: return sizeof(std::int16_t);
    case ElementType::i32: return sizeof(std::int32_t);
    case ElementType::i64: return sizeof(std::int64_t);
    case ElementType::u8: return sizeof(std::uint8_t);
    case ElementType::u16: return sizeof(std::uint16_t);
    case ElementType::u32: return sizeof(std::uint32_t);
    case ElementType::u64: return sizeof(std::uint64_t);
  }
  return 0;
}

const char* c_type_name(ElementType t) {
  switch (t) {
    case ElementType::f32: return "float";
    case ElementType::f64: return "double";
    case ElementType::i8: return "int8_t";
    case ElementType::i16: return "int16_t";
    case ElementType::i32: return "int32_t";
    case ElementType::i64: return "int64_t";
    case ElementType::u8: return "uint8_t";
    case ElementType::u16: return "uint16_t";
    case ElementType::u32: return "uint32_t";
    case ElementType::u64: return "uint64_t";
  }
  return "void";
}

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
  }
  return "?";
}

}  // namespace tunekit
