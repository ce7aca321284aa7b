#pragma once
// Python semantics of the expression language's operators, on a compact
// value representation. Shared by the constant folder and the interpreter so
// that folding can never change a result.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <forward_list>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

#include "core/detail/numbers.hpp"
#include "tunekit/value.hpp"

namespace tunekit::detail {

enum class Tag : std::uint8_t { Int, Float, Str };

// A value on the interpreter's stack. Strings are borrowed: they point into
// the program's constants, the caller's variable values, or a Temps arena.
struct Slot {
  Tag tag;
  union {
    std::int64_t i;
    double d;
    const std::string* s;
  };
};

inline Slot int_slot(std::int64_t v) {
  Slot r;
  r.tag = Tag::Int;
  r.i = v;
  return r;
}
inline Slot float_slot(double v) {
  Slot r;
  r.tag = Tag::Float;
  r.d = v;
  return r;
}
inline Slot str_slot(const std::string* v) {
  Slot r;
  r.tag = Tag::Str;
  r.s = v;
  return r;
}

inline Slot slot_of(const Value& v) {
  const auto& raw = v.raw();
  if (const auto* i = std::get_if<std::int64_t>(&raw)) return int_slot(*i);
  if (const auto* d = std::get_if<double>(&raw)) return float_slot(*d);
  return str_slot(std::get_if<std::string>(&raw));
}

inline Value value_of(const Slot& s) {
  switch (s.tag) {
    case Tag::Int:
      return Value(s.i);
    case Tag::Float:
      return Value(s.d);
    case Tag::Str:
      break;
  }
  return Value(*s.s);
}

inline bool truthy(const Slot& s) {
  switch (s.tag) {
    case Tag::Int:
      return s.i != 0;
    case Tag::Float:
      return s.d != 0.0;
    case Tag::Str:
      break;
  }
  return !s.s->empty();
}

inline const char* type_name(Tag t) {
  switch (t) {
    case Tag::Int:
      return "int";
    case Tag::Float:
      return "float";
    case Tag::Str:
      break;
  }
  return "str";
}

// Strings made during one evaluation (concatenation). Empty until used, so
// an evaluation that makes none allocates nothing.
struct Temps {
  std::forward_list<std::string> strings;
  const std::string* add(std::string s) {
    strings.push_front(std::move(s));
    return &strings.front();
  }
};

// Why an operation failed; mirrors the Python exception it stands for.
enum class Fail : std::uint8_t {
  None,
  ZeroDivision,  // ZeroDivisionError
  Overflow,      // a result outside int64 (Python would use a big int), OverflowError
  Type,          // TypeError: unsupported operand types
  Value,         // ValueError: bad literal for int()/float(), negative shift ...
  Complex,       // a negative number to a fractional power (Python gives a complex)
};

enum class BinOp : std::uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, BitAnd, BitOr, BitXor, Shl, Shr };
enum class UnOp : std::uint8_t { Neg, Pos, Invert, Not };
enum class Cmp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };
enum class Fn : std::uint8_t { Min, Max, Abs, CeilDiv, Int, Float, Round };

const char* spelling(BinOp op);
const char* spelling(UnOp op);
const char* spelling(Cmp op);
const char* spelling(Fn fn);

// ---------------------------------------------------------------- numbers

inline double as_double(const Slot& s) { return s.tag == Tag::Int ? static_cast<double>(s.i) : s.d; }


// -1, 0, 1, or 2 if unordered (NaN). Both must be numbers.
inline int compare_numbers(const Slot& a, const Slot& b) {
  if (a.tag == Tag::Int) {
    if (b.tag == Tag::Int) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    return compare_int_double(a.i, b.d);
  }
  if (b.tag == Tag::Int) {
    int c = compare_int_double(b.i, a.d);
    return c == 2 ? 2 : -c;
  }
  if (a.d < b.d) return -1;
  if (a.d > b.d) return 1;
  if (a.d == b.d) return 0;
  return 2;
}

// Python's float floor division and modulo (CPython's float_divmod).
inline double py_float_floordiv(double vx, double wx) {
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) div -= 1.0;
  }
  double floordiv;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
  return floordiv;
}

inline double py_float_mod(double vx, double wx) {
  double mod = std::fmod(vx, wx);
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) mod += wx;
  } else {
    mod = std::copysign(0.0, wx);
  }
  return mod;
}

inline bool is_odd_integer(double x) { return std::fmod(std::fabs(x), 2.0) == 1.0; }

// CPython's float_pow, minus the complex results.
inline Fail py_float_pow(double iv, double iw, double& out) {
  if (iw == 0.0) return out = 1.0, Fail::None;
  if (std::isnan(iv)) return out = iv, Fail::None;
  if (std::isnan(iw)) return out = (iv == 1.0 ? 1.0 : iw), Fail::None;
  if (std::isinf(iw)) {
    iv = std::fabs(iv);
    if (iv == 1.0) out = 1.0;
    else if ((iw > 0.0) == (iv > 1.0)) out = std::fabs(iw);
    else out = 0.0;
    return Fail::None;
  }
  if (std::isinf(iv)) {
    bool odd = is_odd_integer(iw);
    if (iw > 0.0) out = odd ? iv : std::fabs(iv);
    else out = odd ? std::copysign(0.0, iv) : 0.0;
    return Fail::None;
  }
  if (iv == 0.0) {
    if (iw < 0.0) return Fail::ZeroDivision;
    out = is_odd_integer(iw) ? iv : 0.0;
    return Fail::None;
  }
  bool negate = false;
  if (iv < 0.0) {
    if (iw != std::floor(iw)) return Fail::Complex;
    iv = -iv;
    negate = is_odd_integer(iw);
  }
  if (iv == 1.0) return out = negate ? -1.0 : 1.0, Fail::None;
  double r = std::pow(iv, iw);
  if (std::isinf(r)) return Fail::Overflow;
  out = negate ? -r : r;
  return Fail::None;
}

// Python's int / int (y != 0): the quotient correctly rounded. Dividing
// the doubles rounds twice where an operand has more than 53 bits
// (9007199254740993 / 3 is 3002399751580331.0 in Python, not ...330.0).
inline double py_int_true_div(std::int64_t x, std::int64_t y) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  // 0 too, whatever y: its bits below would count those of 0 (clz(0) is
  // undefined), and 0.0 / y has the sign Python gives it.
  if (x == 0 || (x >= -kExact && x <= kExact && y >= -kExact && y <= kExact))
    return static_cast<double>(x) / static_cast<double>(y);
  const bool negative = (x < 0) != (y < 0);
  const std::uint64_t ux = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  const std::uint64_t uy = y < 0 ? 0 - static_cast<std::uint64_t>(y) : static_cast<std::uint64_t>(y);
  // ux << shift over uy is an integer quotient of 55 bits or more and less
  // than 2^64; a remainder sets its lowest bit, below the rounding bit, so
  // converting it rounds as the exact quotient would.
  const int bits_x = 64 - __builtin_clzll(ux), bits_y = 64 - __builtin_clzll(uy);
  const int shift = std::max(0, 55 + bits_y - bits_x);
  const unsigned __int128 n = static_cast<unsigned __int128>(ux) << shift;
  auto q = static_cast<std::uint64_t>(n / uy);
  if (n % uy != 0) q |= 1;
  const double r = std::ldexp(static_cast<double>(q), -shift);
  return negative ? -r : r;
}

inline Fail py_int_pow(std::int64_t base, std::int64_t exp, std::int64_t& out) {
  // exp >= 0
  std::int64_t result = 1;
  while (true) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) return Fail::Overflow;
    }
    exp >>= 1;
    if (exp == 0) break;
    if (__builtin_mul_overflow(base, base, &base)) {
      // base^2 overflows; fine only if the result is still trivially small,
      // which cannot happen for |base| >= 2 with a remaining exponent bit.
      return Fail::Overflow;
    }
  }
  out = result;
  return Fail::None;
}

// ---------------------------------------------------------------- operators

template <BinOp OP>
inline Fail binary_op(Slot a, Slot b, Slot& out, Temps& temps) {
  if (a.tag == Tag::Int && b.tag == Tag::Int) {
    std::int64_t x = a.i, y = b.i, r = 0;
    if constexpr (OP == BinOp::Add) {
      if (__builtin_add_overflow(x, y, &r)) return Fail::Overflow;
    } else if constexpr (OP == BinOp::Sub) {
      if (__builtin_sub_overflow(x, y, &r)) return Fail::Overflow;
    } else if constexpr (OP == BinOp::Mul) {
      if (__builtin_mul_overflow(x, y, &r)) return Fail::Overflow;
    } else if constexpr (OP == BinOp::Div) {
      if (y == 0) return Fail::ZeroDivision;
      out = float_slot(py_int_true_div(x, y));
      return Fail::None;
    } else if constexpr (OP == BinOp::FloorDiv) {
      if (y == 0) return Fail::ZeroDivision;
      if (y == -1) {
        if (x == std::numeric_limits<std::int64_t>::min()) return Fail::Overflow;
        r = -x;
      } else {
        r = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
      }
    } else if constexpr (OP == BinOp::Mod) {
      if (y == 0) return Fail::ZeroDivision;
      if (y == -1) {
        r = 0;
      } else {
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
      }
    } else if constexpr (OP == BinOp::Pow) {
      if (y < 0) {
        double d = 0;
        Fail f = py_float_pow(static_cast<double>(x), static_cast<double>(y), d);
        if (f != Fail::None) return f;
        out = float_slot(d);
        return Fail::None;
      }
      if (Fail f = py_int_pow(x, y, r); f != Fail::None) return f;
    } else if constexpr (OP == BinOp::BitAnd) {
      r = x & y;
    } else if constexpr (OP == BinOp::BitOr) {
      r = x | y;
    } else if constexpr (OP == BinOp::BitXor) {
      r = x ^ y;
    } else if constexpr (OP == BinOp::Shl) {
      if (y < 0) return Fail::Value;
      if (x == 0) {
        r = 0;
      } else {
        if (y >= 63) return Fail::Overflow;
        r = static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << y);
        if ((r >> y) != x) return Fail::Overflow;
      }
    } else if constexpr (OP == BinOp::Shr) {
      if (y < 0) return Fail::Value;
      r = y >= 63 ? (x < 0 ? -1 : 0) : (x >> y);
    }
    out = int_slot(r);
    return Fail::None;
  }
  if (a.tag == Tag::Str || b.tag == Tag::Str) {
    if constexpr (OP == BinOp::Add) {
      if (a.tag == Tag::Str && b.tag == Tag::Str) {
        out = str_slot(temps.add(*a.s + *b.s));
        return Fail::None;
      }
    }
    return Fail::Type;
  }
  // At least one float, no strings.
  double x = as_double(a), y = as_double(b);
  if constexpr (OP == BinOp::Add) {
    out = float_slot(x + y);
  } else if constexpr (OP == BinOp::Sub) {
    out = float_slot(x - y);
  } else if constexpr (OP == BinOp::Mul) {
    out = float_slot(x * y);
  } else if constexpr (OP == BinOp::Div) {
    if (y == 0.0) return Fail::ZeroDivision;
    out = float_slot(x / y);
  } else if constexpr (OP == BinOp::FloorDiv) {
    if (y == 0.0) return Fail::ZeroDivision;
    out = float_slot(py_float_floordiv(x, y));
  } else if constexpr (OP == BinOp::Mod) {
    if (y == 0.0) return Fail::ZeroDivision;
    out = float_slot(py_float_mod(x, y));
  } else if constexpr (OP == BinOp::Pow) {
    double d = 0;
    Fail f = py_float_pow(x, y, d);
    if (f != Fail::None) return f;
    out = float_slot(d);
  } else {
    return Fail::Type;  // bitwise operators need ints
  }
  return Fail::None;
}

Fail binary(BinOp op, Slot a, Slot b, Slot& out, Temps& temps);

inline Fail unary(UnOp op, Slot a, Slot& out) {
  switch (op) {
    case UnOp::Not:
      out = int_slot(truthy(a) ? 0 : 1);
      return Fail::None;
    case UnOp::Pos:
      if (a.tag == Tag::Str) return Fail::Type;
      out = a;
      return Fail::None;
    case UnOp::Neg:
      if (a.tag == Tag::Int) {
        if (a.i == std::numeric_limits<std::int64_t>::min()) return Fail::Overflow;
        out = int_slot(-a.i);
        return Fail::None;
      }
      if (a.tag == Tag::Float) {
        out = float_slot(-a.d);
        return Fail::None;
      }
      return Fail::Type;
    case UnOp::Invert:
      if (a.tag != Tag::Int) return Fail::Type;
      out = int_slot(~a.i);
      return Fail::None;
  }
  return Fail::Type;
}

// Comparison; `In`/`NotIn` here is the substring test on two strings (the
// list form is handled by the interpreter with Eq).
template <Cmp OP>
inline Fail compare_op(const Slot& a, const Slot& b, bool& out) {
  if constexpr (OP == Cmp::In || OP == Cmp::NotIn) {
    if (a.tag != Tag::Str || b.tag != Tag::Str) return Fail::Type;
    bool found = b.s->find(*a.s) != std::string::npos;
    out = (OP == Cmp::In) == found;
    return Fail::None;
  } else {
    int c;
    if (a.tag == Tag::Str || b.tag == Tag::Str) {
      if (a.tag != b.tag) {
        if constexpr (OP == Cmp::Eq) {
          out = false;
          return Fail::None;
        } else if constexpr (OP == Cmp::Ne) {
          out = true;
          return Fail::None;
        } else {
          return Fail::Type;
        }
      }
      int r = a.s->compare(*b.s);
      c = r < 0 ? -1 : r > 0 ? 1 : 0;
    } else {
      c = compare_numbers(a, b);
    }
    if constexpr (OP == Cmp::Eq) out = c == 0;
    else if constexpr (OP == Cmp::Ne) out = c != 0;
    else if constexpr (OP == Cmp::Lt) out = c == -1;
    else if constexpr (OP == Cmp::Le) out = c == -1 || c == 0;
    else if constexpr (OP == Cmp::Gt) out = c == 1;
    else out = c == 1 || c == 0;
    return Fail::None;
  }
}

// Inline so that the interpreter's dispatch loop can fold the switch into
// its own (the VM's hot path); the simplifier calls it too.
inline Fail compare(Cmp op, const Slot& a, const Slot& b, bool& out) {
  switch (op) {
    case Cmp::Eq:
      return compare_op<Cmp::Eq>(a, b, out);
    case Cmp::Ne:
      return compare_op<Cmp::Ne>(a, b, out);
    case Cmp::Lt:
      return compare_op<Cmp::Lt>(a, b, out);
    case Cmp::Le:
      return compare_op<Cmp::Le>(a, b, out);
    case Cmp::Gt:
      return compare_op<Cmp::Gt>(a, b, out);
    case Cmp::Ge:
      return compare_op<Cmp::Ge>(a, b, out);
    case Cmp::In:
      return compare_op<Cmp::In>(a, b, out);
    case Cmp::NotIn:
      return compare_op<Cmp::NotIn>(a, b, out);
  }
  return Fail::Type;
}

// Built-in functions. `args` has `n` entries (n checked by the parser).
Fail call(Fn fn, const Slot* args, int n, Slot& out, Temps& temps);

}  // namespace tunekit::detail
