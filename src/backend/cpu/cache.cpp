#include "backend/cpu/detail/cache.hpp"

#include <unistd.h>

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace tunekit::cpu {

namespace {

std::size_t line_bytes() {
  static const std::size_t line = [] {
    const long l = ::sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    // A smaller step than the real line only repeats work; a larger one
    // would skip lines, so an unknown size takes the smallest in use.
    return l >= 32 && l <= 256 ? static_cast<std::size_t>(l) : std::size_t{32};
  }();
  return line;
}

#if defined(__x86_64__)
bool has_clflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) != 0;
}

__attribute__((target("clflushopt"))) void flush_opt(const char* p, const char* end, std::size_t line) {
  for (; p < end; p += line) _mm_clflushopt(const_cast<char*>(p));
  _mm_sfence();  // clflushopt is ordered by fences only
}

void flush_plain(const char* p, const char* end, std::size_t line) {
  for (; p < end; p += line) _mm_clflush(p);
  _mm_mfence();
}
#endif

}  // namespace

std::string_view eviction_instruction() {
#if defined(__x86_64__)
  static const bool opt = has_clflushopt();
  return opt ? "clflushopt" : "clflush";
#elif defined(__aarch64__)
  return "dc civac";
#else
  return {};
#endif
}

bool evict_lines(const void* data, std::size_t bytes) {
  if (bytes == 0) return !eviction_instruction().empty();
  const std::size_t line = line_bytes();
  const auto first = reinterpret_cast<std::uintptr_t>(data) & ~(std::uintptr_t{line} - 1);
  const char* p = reinterpret_cast<const char*>(first);
  const char* end = static_cast<const char*>(data) + bytes;
#if defined(__x86_64__)
  static const bool opt = has_clflushopt();
  if (opt) flush_opt(p, end, line);
  else flush_plain(p, end, line);
  return true;
#elif defined(__aarch64__)
  for (; p < end; p += line) asm volatile("dc civac, %0" : : "r"(p) : "memory");
  asm volatile("dsb ish" : : : "memory");
  return true;
#else
  (void)p;
  (void)end;
  return false;
#endif
}

}  // namespace tunekit::cpu
