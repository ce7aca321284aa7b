#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "backend/cpu/detail/machine.hpp"

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

std::int64_t online_cores() { return std::max<std::int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN)); }

// The cores this process may run on, which its worker and every thread a
// kernel starts inherit. Not the machine's: mpirun binds each rank to one
// core by default (as taskset or a cgroup's cpuset may bind a tune), and a
// multi-threaded kernel tuned there is timed on that one core: `cores` must
// say so, and the device's name too, so such trials are not resumed as the
// whole machine's.
std::int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  // Fails (EINVAL) only past CPU_SETSIZE (1024) CPUs: the machine's count
  // then. (hardware_concurrency() counts the online CPUs or the affinity's,
  // depending on the C library's version.)
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return online_cores();
  return std::clamp<std::int64_t>(CPU_COUNT(&set), 1, online_cores());
}

}  // namespace

std::vector<std::string> core_warnings() {
  const std::int64_t usable = usable_cores(), online = online_cores();
  if (usable >= online) return {};
  return {
      fmt::format("this process may run on {} of the machine's {} cores (its CPU affinity: mpirun binds each rank "
                  "to one core unless given --bind-to none; taskset and a cgroup's cpuset bind too): kernels are "
                  "built and timed for {} core{}, as `cores` says",
                  usable, online, usable, usable == 1 ? "" : "s")};
}

MachineInfo probe_machine() {
  MachineInfo m;
  const std::int64_t cores = usable_cores(), online = online_cores();
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
