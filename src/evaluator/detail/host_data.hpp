#pragma once
// Argument data on the host, shared by every backend's worker: inputs are
// generated here (then copied to a device where there is one), outputs are
// poisoned before a verified run and compared with the reference after.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

// 16-bit floats are stored as bit patterns; these convert through float.
struct Half {
  std::uint16_t bits;
};
struct BFloat16 {
  std::uint16_t bits;
};

inline float to_float(Half h) {
  const std::uint32_t sign = (h.bits & 0x8000u) << 16;
  std::uint32_t exp = (h.bits >> 10) & 0x1f, man = h.bits & 0x3ffu, out;
  if (exp == 0) {
    if (man == 0) out = sign;
    else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) {
        man <<= 1;
        --exp;
      }
      out = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (man << 13);
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

inline Half to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return {static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0))};
  if (abs >= 0x477ff000u) return {static_cast<std::uint16_t>(sign | 0x7c00u)};  // overflow -> inf
  if (abs < 0x38800000u) {  // subnormal or zero: round to nearest even in the subnormal grid
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // 2^24: units of the smallest subnormal
    auto q = static_cast<std::uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(q);
    if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
    return {static_cast<std::uint16_t>(sign | q)};
  }
  std::uint32_t mant = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even
  return {static_cast<std::uint16_t>(sign | ((mant - 0x38000000u) >> 13))};
}

inline float to_float(BFloat16 b) {
  const std::uint32_t x = static_cast<std::uint32_t>(b.bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

inline BFloat16 to_bfloat16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((x >> 16) | 0x40u)};  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);                                                              // round to nearest even
  return {static_cast<std::uint16_t>(x >> 16)};
}

// Calls f(T{}) with the host storage type of `t`.
template <class F>
void with_type(ElementType t, F&& f) {
  switch (t) {
    case ElementType::f32:
      f(float{});
      break;
    case ElementType::f64:
      f(double{});
      break;
    case ElementType::f16:
      f(Half{});
      break;
    case ElementType::bf16:
      f(BFloat16{});
      break;
    case ElementType::i8:
      f(std::int8_t{});
      break;
    case ElementType::i16:
      f(std::int16_t{});
      break;
    case ElementType::i32:
      f(std::int32_t{});
      break;
    case ElementType::i64:
      f(std::int64_t{});
      break;
    case ElementType::u8:
      f(std::uint8_t{});
      break;
    case ElementType::u16:
      f(std::uint16_t{});
      break;
    case ElementType::u32:
      f(std::uint32_t{});
      break;
    case ElementType::u64:
      f(std::uint64_t{});
      break;
  }
}

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return to_float(v);
  else return static_cast<double>(v);
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half>) return to_half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <class T>
constexpr bool is_float_storage = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Fills `count` elements as the argument says. Random floats are uniform in
// [-1, 1), random integers in [0, 100), normal floats standard normal (as
// numpy.random.randn, Kernel Tuner's fill); the stream depends only on `seed`.
inline void fill(void* data, const ResolvedArgument& a, std::uint64_t seed) {
  if (a.fill == Fill::file) return;  // a file's bytes: HostArguments reads them
  with_type(a.type, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(data);
    std::uint64_t state = seed;
    for (std::uint64_t i = 0; i < a.count; ++i) {
      double v = 0;
      switch (a.fill) {
        case Fill::zeros:
          v = 0;
          break;
        case Fill::constant:
          v = a.fill_value;
          break;
        case Fill::sequence:
          v = a.fill_value + static_cast<double>(i);
          break;
        case Fill::random:
          if constexpr (is_float_storage<T>) v = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
          else v = static_cast<double>(splitmix64(state) % 100);
          break;
        case Fill::normal: {
          // Box-Muller; u1 in (0, 1], so the log is finite.
          const double u1 = static_cast<double>((splitmix64(state) >> 11) + 1) * 0x1.0p-53;
          const double u2 = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
          v = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
          break;
        }
        case Fill::file:  // returned above
          break;
      }
      p[i] = from_double<T>(v);
    }
  });
}

// An `out` buffer is poisoned before every verified run instead of filled:
// its fill would never be seen. Every worker and `tunekit resolve` ask here.
inline bool starts_poisoned(Role role) { return role == Role::out; }

inline constexpr unsigned char kIntegerPoisonByte = 0xA5;

// NaN for floats, 0xA5 bytes for integers: an element the kernel never
// writes cannot pass verification by luck.
inline void poison(void* data, ElementType type, std::uint64_t count) {
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(data);
    if constexpr (is_float_storage<T>) {
      const T nan = from_double<T>(std::numeric_limits<double>::quiet_NaN());
      for (std::uint64_t i = 0; i < count; ++i) p[i] = nan;
    } else {
      std::memset(static_cast<void*>(p), kIntegerPoisonByte, count * sizeof(T));
    }
  });
}

// What poison() writes for `type`, for a reader: "nan" or "0xa5 bytes".
inline std::string poison_text(ElementType type) {
  std::string text;
  with_type(type, [&](auto zero) {
    if constexpr (is_float_storage<decltype(zero)>) text = "nan";
    else text = fmt::format("{:#x} bytes", kIntegerPoisonByte);
  });
  return text;
}

// The scalar's bytes, in the argument's type, for a kernel parameter.
inline std::uint64_t scalar_bits(const ResolvedArgument& a) {
  std::uint64_t bits = 0;
  with_type(a.type, [&](auto zero) {
    using T = decltype(zero);
    // if constexpr: a 16-bit float has no conversion from an integer (clang
    // checks both arms of a conditional expression).
    T v;
    if constexpr (is_float_storage<T>) v = from_double<T>(a.scalar.to_double());
    else v = a.scalar.is_int() ? static_cast<T>(a.scalar.as_int()) : from_double<T>(a.scalar.to_double());
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

}  // namespace tunekit::detail
