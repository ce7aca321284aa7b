#include "constraint/detail/semantics.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace tunekit::detail {

const char* spelling(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "**";
    case BinOp::BitAnd:
      return "&";
    case BinOp::BitOr:
      return "|";
    case BinOp::BitXor:
      return "^";
    case BinOp::Shl:
      return "<<";
    case BinOp::Shr:
      return ">>";
  }
  return "?";
}

const char* spelling(UnOp op) {
  switch (op) {
    case UnOp::Neg:
      return "-";
    case UnOp::Pos:
      return "+";
    case UnOp::Invert:
      return "~";
    case UnOp::Not:
      return "not";
  }
  return "?";
}

const char* spelling(Cmp op) {
  switch (op) {
    case Cmp::Eq:
      return "==";
    case Cmp::Ne:
      return "!=";
    case Cmp::Lt:
      return "<";
    case Cmp::Le:
      return "<=";
    case Cmp::Gt:
      return ">";
    case Cmp::Ge:
      return ">=";
    case Cmp::In:
      return "in";
    case Cmp::NotIn:
      return "not in";
  }
  return "?";
}

const char* spelling(Fn fn) {
  switch (fn) {
    case Fn::Min:
      return "min";
    case Fn::Max:
      return "max";
    case Fn::Abs:
      return "abs";
    case Fn::CeilDiv:
      return "ceil_div";
    case Fn::Int:
      return "int";
    case Fn::Float:
      return "float";
    case Fn::Round:
      return "round";
  }
  return "?";
}

Fail binary(BinOp op, Slot a, Slot b, Slot& out, Temps& temps) {
  switch (op) {
    case BinOp::Add:
      return binary_op<BinOp::Add>(a, b, out, temps);
    case BinOp::Sub:
      return binary_op<BinOp::Sub>(a, b, out, temps);
    case BinOp::Mul:
      return binary_op<BinOp::Mul>(a, b, out, temps);
    case BinOp::Div:
      return binary_op<BinOp::Div>(a, b, out, temps);
    case BinOp::FloorDiv:
      return binary_op<BinOp::FloorDiv>(a, b, out, temps);
    case BinOp::Mod:
      return binary_op<BinOp::Mod>(a, b, out, temps);
    case BinOp::Pow:
      return binary_op<BinOp::Pow>(a, b, out, temps);
    case BinOp::BitAnd:
      return binary_op<BinOp::BitAnd>(a, b, out, temps);
    case BinOp::BitOr:
      return binary_op<BinOp::BitOr>(a, b, out, temps);
    case BinOp::BitXor:
      return binary_op<BinOp::BitXor>(a, b, out, temps);
    case BinOp::Shl:
      return binary_op<BinOp::Shl>(a, b, out, temps);
    case BinOp::Shr:
      return binary_op<BinOp::Shr>(a, b, out, temps);
  }
  return Fail::Type;
}

namespace {

std::string_view strip(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Removes Python's digit-group underscores ("1_000"); false if one is
// misplaced (not between two digits).
bool drop_underscores(std::string_view s, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1])))
        return false;
      continue;
    }
    out += s[i];
  }
  return true;
}

// int(str): optional sign, decimal digits, whitespace around.
Fail parse_int(std::string_view text, std::int64_t& out) {
  std::string s;
  if (!drop_underscores(strip(text), s)) return Fail::Value;
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return Fail::Value;
  std::uint64_t magnitude = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return Fail::Value;
    unsigned digit = static_cast<unsigned>(s[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) return Fail::Overflow;
    magnitude = magnitude * 10 + digit;
  }
  if (negative) {
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) return Fail::Overflow;
    out = static_cast<std::int64_t>(0 - magnitude);
  } else {
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return Fail::Overflow;
    out = static_cast<std::int64_t>(magnitude);
  }
  return Fail::None;
}

// float(str): a decimal float, or inf/infinity/nan, whitespace around.
Fail parse_float(std::string_view text, double& out) {
  std::string s;
  if (!drop_underscores(strip(text), s) || s.empty()) return Fail::Value;
  std::string_view body = s;
  if (body.front() == '+' || body.front() == '-') body.remove_prefix(1);
  std::string lower;
  for (char c : body) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool special = lower == "inf" || lower == "infinity" || lower == "nan";
  if (!special) {
    for (char c : lower)
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != '+' && c != '-')
        return Fail::Value;
  }
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return Fail::Value;
  out = d;  // Python's float() gives inf on overflow too
  return Fail::None;
}

Fail to_int(const Slot& a, std::int64_t& out) {
  if (a.tag == Tag::Int) return out = a.i, Fail::None;
  if (a.tag == Tag::Str) return parse_int(*a.s, out);
  if (std::isnan(a.d)) return Fail::Value;
  if (std::isinf(a.d)) return Fail::Overflow;
  double t = std::trunc(a.d);
  if (t >= kTwo63 || t < -kTwo63) return Fail::Overflow;
  out = static_cast<std::int64_t>(t);
  return Fail::None;
}

template <bool MIN>
Fail extreme(const Slot* args, int n, Slot& out) {
  Slot best = args[0];
  for (int k = 1; k < n; ++k) {
    bool better = false;
    Fail f = MIN ? compare_op<Cmp::Lt>(args[k], best, better) : compare_op<Cmp::Gt>(args[k], best, better);
    if (f != Fail::None) return f;
    if (better) best = args[k];
  }
  out = best;
  return Fail::None;
}

}  // namespace

Fail call(Fn fn, const Slot* args, int n, Slot& out, Temps& temps) {
  switch (fn) {
    case Fn::Min:
      return extreme<true>(args, n, out);
    case Fn::Max:
      return extreme<false>(args, n, out);
    case Fn::Abs: {
      const Slot& a = args[0];
      if (a.tag == Tag::Int) {
        if (a.i == std::numeric_limits<std::int64_t>::min()) return Fail::Overflow;
        out = int_slot(a.i < 0 ? -a.i : a.i);
        return Fail::None;
      }
      if (a.tag == Tag::Float) {
        out = float_slot(std::fabs(a.d));
        return Fail::None;
      }
      return Fail::Type;
    }
    case Fn::CeilDiv: {
      // Python's -(-a // b). For floats, as written (a zero's sign follows
      // it); for integers as a // b plus one where b does not divide a: the
      // same value, without negating a, which overflows at the least int64
      // though the quotient fits (ceil_div(-2**63, -2)).
      if (args[0].tag == Tag::Float || args[1].tag == Tag::Float) {
        // Python's -a of the least int64 is 2**63, a big int the float
        // division takes exactly: negated as an int64 it would overflow.
        // (Any other int stays one: -0 has no sign, -0.0 would.)
        Slot neg_a, q;
        if (args[0].tag == Tag::Int && args[0].i == std::numeric_limits<std::int64_t>::min())
          neg_a = float_slot(kTwo63);
        else if (Fail f = unary(UnOp::Neg, args[0], neg_a); f != Fail::None) return f;
        if (Fail f = binary_op<BinOp::FloorDiv>(neg_a, args[1], q, temps); f != Fail::None) return f;
        return unary(UnOp::Neg, q, out);
      }
      Slot q, r;
      if (Fail f = binary_op<BinOp::FloorDiv>(args[0], args[1], q, temps); f != Fail::None) return f;
      if (Fail f = binary_op<BinOp::Mod>(args[0], args[1], r, temps); f != Fail::None) return f;
      const bool divides = r.tag == Tag::Float ? r.d == 0 : r.i == 0;
      if (divides) {
        out = q;
        return Fail::None;
      }
      return binary_op<BinOp::Add>(q, int_slot(1), out, temps);
    }
    case Fn::Int: {
      std::int64_t v = 0;
      if (Fail f = to_int(args[0], v); f != Fail::None) return f;
      out = int_slot(v);
      return Fail::None;
    }
    case Fn::Float: {
      const Slot& a = args[0];
      if (a.tag == Tag::Str) {
        double d = 0;
        if (Fail f = parse_float(*a.s, d); f != Fail::None) return f;
        out = float_slot(d);
      } else {
        out = float_slot(as_double(a));
      }
      return Fail::None;
    }
    case Fn::Round: {
      const Slot& a = args[0];
      if (a.tag == Tag::Int) return out = a, Fail::None;
      if (a.tag == Tag::Str) return Fail::Type;
      if (std::isnan(a.d)) return Fail::Value;
      if (std::isinf(a.d)) return Fail::Overflow;
      double r = std::nearbyint(a.d);  // ties to even, as Python's round()
      if (r >= kTwo63 || r < -kTwo63) return Fail::Overflow;
      out = int_slot(static_cast<std::int64_t>(r));
      return Fail::None;
    }
  }
  return Fail::Type;
}

}  // namespace tunekit::detail
