#include <stdexcept>

#include <fmt/format.h>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/driver.hpp"

namespace tunekit::cuda {

DeviceLimits query_device(const Driver& d, int ordinal) {
  DeviceLimits l;
  l.ordinal = ordinal;
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    throw std::runtime_error("cuDeviceGetCount: " + describe(r));
  if (ordinal < 0 || ordinal >= count)
    throw std::runtime_error(fmt::format("no CUDA device {} (found {})", ordinal, count));
  CUdevice dev = 0;
  if (CUresult r = d.cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS) throw std::runtime_error("cuDeviceGet: " + describe(r));
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof name - 1, dev);
  l.name = name;
  auto attr = [&](int a) {
    int v = 0;
    if (CUresult r = d.cuDeviceGetAttribute(&v, a, dev); r != CUDA_SUCCESS)
      throw std::runtime_error(fmt::format("cuDeviceGetAttribute({}): {}", a, describe(r)));
    return v;
  };
  l.cc_major = attr(kComputeCapabilityMajor);
  l.cc_minor = attr(kComputeCapabilityMinor);
  l.sm_count = attr(kMultiprocessorCount);
  l.warp_size = attr(kWarpSize);
  l.max_threads_per_block = attr(kMaxThreadsPerBlock);
  l.max_block = {attr(kMaxBlockDimX), attr(kMaxBlockDimY), attr(kMaxBlockDimZ)};
  l.max_grid = {attr(kMaxGridDimX), attr(kMaxGridDimY), attr(kMaxGridDimZ)};
  l.shared_per_block = attr(kMaxSharedMemoryPerBlock);
  l.shared_per_block_optin = attr(kMaxSharedMemoryPerBlockOptin);
  l.shared_per_sm = attr(kMaxSharedMemoryPerMultiprocessor);
  l.registers_per_block = attr(kMaxRegistersPerBlock);
  l.registers_per_sm = attr(kMaxRegistersPerMultiprocessor);
  l.max_threads_per_sm = attr(kMaxThreadsPerMultiprocessor);
  l.max_blocks_per_sm = attr(kMaxBlocksPerMultiprocessor);
  l.l2_bytes = attr(kL2CacheSize);
  l.clock_khz = attr(kClockRate);
  l.memory_clock_khz = attr(kMemoryClockRate);
  l.memory_bus_bits = attr(kGlobalMemoryBusWidth);
  std::size_t bytes = 0;
  d.cuDeviceTotalMem(&bytes, dev);
  l.memory_bytes = bytes;
  return l;
}

std::string default_arch(int major, int minor) {
  return fmt::format("sm_{}{}{}", major, minor, major >= 9 ? "a" : "");
}

MachineInfo machine_info(const DeviceLimits& d) {
  MachineInfo m;
  auto i64 = [](auto v) { return Value(static_cast<std::int64_t>(v)); };
  m.properties = {
      {"max_threads_per_block", i64(d.max_threads_per_block)},
      {"shared_memory_per_block", i64(d.shared_per_block)},
      {"shared_memory_per_block_optin", i64(d.shared_per_block_optin)},
      {"shared_memory_per_sm", i64(d.shared_per_sm)},
      {"registers_per_block", i64(d.registers_per_block)},
      {"registers_per_sm", i64(d.registers_per_sm)},
      {"registers_per_thread", i64(kMaxRegistersPerThread)},
      {"sm_count", i64(d.sm_count)},
      {"l2_bytes", i64(d.l2_bytes)},
      {"compute_capability", i64(d.cc_major * 10 + d.cc_minor)},
      {"cc_major", i64(d.cc_major)},
      {"cc_minor", i64(d.cc_minor)},
      {"warp_size", i64(d.warp_size)},
      {"max_threads_per_sm", i64(d.max_threads_per_sm)},
      {"max_blocks_per_sm", i64(d.max_blocks_per_sm)},
      {"memory_bytes", i64(d.memory_bytes)},
      {"max_grid_x", i64(d.max_grid[0])},
      {"max_grid_y", i64(d.max_grid[1])},
      {"max_grid_z", i64(d.max_grid[2])},
      {"arch", Value(default_arch(d.cc_major, d.cc_minor))},
  };
  m.device = fmt::format("cuda: {} (sm_{}{}, {} SMs, {:.0f} GiB)", d.name, d.cc_major, d.cc_minor, d.sm_count,
                         static_cast<double>(d.memory_bytes) / (1u << 30));
  return m;
}

std::uint64_t flush_bytes_for(const DeviceLimits& d) {
  // Four times the L2, and at least what triton.testing.do_bench writes
  // (256 MB), so the two flush alike.
  return std::max<std::uint64_t>(4ull * static_cast<std::uint64_t>(d.l2_bytes), 256'000'000ull);
}

std::optional<std::string> check_geometry(const DeviceLimits& d, const LaunchGeometry& g) {
  const std::uint64_t threads = g.block[0] * g.block[1] * g.block[2];
  if (threads > static_cast<std::uint64_t>(d.max_threads_per_block))
    return fmt::format("block of {} threads; the device allows {}", threads, d.max_threads_per_block);
  static const char* axis = "xyz";
  for (int i = 0; i < 3; ++i) {
    if (d.max_block[i] > 0 && g.block[i] > static_cast<std::uint64_t>(d.max_block[i]))
      return fmt::format("block.{} = {}; the device allows {}", axis[i], g.block[i], d.max_block[i]);
    if (d.max_grid[i] > 0 && g.grid[i] > static_cast<std::uint64_t>(d.max_grid[i]))
      return fmt::format("grid.{} = {}; the device allows {}", axis[i], g.grid[i], d.max_grid[i]);
  }
  if (g.shared_memory > static_cast<std::uint64_t>(d.shared_per_block_optin))
    return fmt::format("{} bytes of dynamic shared memory; the device allows {} per block", g.shared_memory,
                       d.shared_per_block_optin);
  return std::nullopt;
}

std::optional<std::string> check_resources(const FunctionResources& f, const DeviceLimits& d,
                                           const LaunchGeometry& g) {
  const std::uint64_t threads = g.block[0] * g.block[1] * g.block[2];
  if (f.max_threads_per_block > 0 && threads > static_cast<std::uint64_t>(f.max_threads_per_block))
    return fmt::format("block of {} threads, but at {} registers per thread the function allows at most {}", threads,
                       f.registers, f.max_threads_per_block);
  const std::uint64_t regs = threads * static_cast<std::uint64_t>(f.registers);
  if (d.registers_per_block > 0 && regs > static_cast<std::uint64_t>(d.registers_per_block))
    return fmt::format("{} threads x {} registers = {} registers per block; the device allows {}", threads, f.registers,
                       regs, d.registers_per_block);
  const std::uint64_t shared = static_cast<std::uint64_t>(f.static_shared) + g.shared_memory;
  if (shared > static_cast<std::uint64_t>(d.shared_per_block_optin))
    return fmt::format("{} bytes of shared memory per block ({} static + {} dynamic); the device allows {}", shared,
                       f.static_shared, g.shared_memory, d.shared_per_block_optin);
  return std::nullopt;
}

}  // namespace tunekit::cuda
