#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "backend/cpu/detail/machine.hpp"
#include "core/detail/cores.hpp"

namespace tunekit::cpu {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// "32K" / "1024K" / "32M" -> bytes.
std::int64_t parse_cache_size(const std::string& text) {
  if (text.empty()) return 0;
  std::size_t pos = 0;
  std::int64_t v = std::stoll(text, &pos);
  if (pos < text.size()) {
    if (text[pos] == 'K') v <<= 10;
    else if (text[pos] == 'M') v <<= 20;
    else if (text[pos] == 'G') v <<= 30;
  }
  return v;
}

std::string model_name() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0)
      if (auto colon = line.find(':'); colon != std::string::npos) return line.substr(colon + 2);
  return "unknown CPU";
}

}  // namespace

std::vector<std::string> core_warnings() {
  const std::size_t usable = detail::usable_cores(), online = detail::online_cores();
  if (usable >= online) return {};
  return {
      fmt::format("this process may run on {} of the machine's {} cores (its CPU affinity: mpirun binds each rank "
                  "to a core, or past two ranks to a socket, unless given --bind-to none; taskset and a cgroup's "
                  "cpuset bind too): kernels are "
                  "built and timed for {} core{}, as `cores` says",
                  usable, online, usable, usable == 1 ? "" : "s")};
}

MachineInfo probe_machine() {
  MachineInfo m;
  // Those this process may run on, which its worker and every thread a
  // kernel starts inherit: a multi-threaded kernel tuned under a binding is
  // timed on those cores, and `cores` and the device's name must say so, so
  // that such trials are not resumed as the whole machine's.
  const auto cores = static_cast<std::int64_t>(detail::usable_cores());
  const auto online = static_cast<std::int64_t>(detail::online_cores());
  // Per-core sizes for L1d and L2 (what one thread's tile must fit in); L3
  // as the shared total. Defaults are typical values for when sysfs is absent.
  std::int64_t l1d = 32 << 10, l2 = 1 << 20, l3 = 8 << 20;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    const std::string level = read_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_line(dir + "type");
    const std::int64_t size = parse_cache_size(read_line(dir + "size"));
    if (size <= 0) continue;
    if (level == "1" && type == "Data") l1d = size;
    else if (level == "2") l2 = size;
    else if (level == "3") l3 = size;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const std::int64_t simd = avx512 ? 64 : __builtin_cpu_supports("avx2") ? 32 : 16;
  const std::int64_t registers = avx512 ? 32 : 16;  // zmm0-31; ymm/xmm0-15
#elif defined(__aarch64__)
  const std::int64_t simd = 16, registers = 32;  // NEON: v0-v31, 128 bits
#else
  const std::int64_t simd = 16, registers = 16;
#endif
  m.properties = {{"l1d_bytes", l1d},
                  {"l2_bytes", l2},
                  {"l3_bytes", l3},
                  {"cores", cores},
                  {"simd_bytes", simd},
                  {"vector_registers", registers},
                  {"page_bytes", static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE))}};
  m.device = cores < online ? fmt::format("cpu: {} ({} of {} cores)", model_name(), cores, online)
                            : fmt::format("cpu: {} ({} cores)", model_name(), cores);
  return m;
}

}  // namespace tunekit::cpu
