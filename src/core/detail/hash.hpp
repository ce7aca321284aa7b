#pragma once
// Content hashing for cache keys and spec identity. Two independent 64-bit
// lanes give a 128-bit key: collisions are not a practical concern for a
// build cache, and no crypto library is needed.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tunekit::detail {

class Hasher {
 public:
  Hasher& add(std::string_view bytes) {
    // Length prefix: ("ab","c") and ("a","bc") must differ.
    mix(bytes.size());
    for (unsigned char c : bytes) {
      a_ = (a_ ^ c) * 0x100000001b3ULL;
      b_ = (b_ ^ c) * 0x9E3779B97F4A7C15ULL;
      b_ ^= b_ >> 29;
    }
    return *this;
  }
  Hasher& add(std::uint64_t v) {
    mix(v);
    return *this;
  }
  std::string hex() const { return fmt::format("{:016x}{:016x}", finish(a_), finish(b_ ^ a_)); }

 private:
  void mix(std::uint64_t v) {
    a_ = (a_ ^ v) * 0x100000001b3ULL;
    b_ = finish(b_ + v);
  }
  static std::uint64_t finish(std::uint64_t z) {  // splitmix64 finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t a_ = 0xcbf29ce484222325ULL;
  std::uint64_t b_ = 0x6a09e667f3bcc909ULL;
};

}  // namespace tunekit::detail
