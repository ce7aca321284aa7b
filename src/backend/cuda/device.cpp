#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  if (CUresult r = d.cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS)
    throw std::runtime_error("cuDeviceGet: " + describe(r));
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

std::string default_arch(int major, int minor) { return fmt::format("sm_{}{}{}", major, minor, major >= 9 ? "a" : ""); }

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
  if (g.clustered()) {
    const auto& c = g.cluster;
    if (d.cc_major < 9)
      return fmt::format("a thread-block cluster [{}, {}, {}] needs compute capability 9.0; the device has {}.{}", c[0],
                         c[1], c[2], d.cc_major, d.cc_minor);
    const std::uint64_t blocks = c[0] * c[1] * c[2];
    if (blocks > kMaxClusterBlocks)
      return fmt::format("a cluster [{}, {}, {}] of {} blocks; at most {} ({} portable, more as a non-portable size)",
                         c[0], c[1], c[2], blocks, kMaxClusterBlocks, kMaxPortableClusterBlocks);
    for (int i = 0; i < 3; ++i)
      if (c[i] == 0 || g.grid[i] % c[i] != 0)
        return fmt::format("grid.{} = {} is not a multiple of cluster.{} = {}", axis[i], g.grid[i], axis[i], c[i]);
  }
  return std::nullopt;
}

namespace {

std::string list(const std::vector<std::int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

int data_type_of(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return kTensorMapFloat32;
    case ElementType::f64:
      return kTensorMapFloat64;
    case ElementType::f16:
      return kTensorMapFloat16;
    case ElementType::bf16:
      return kTensorMapBfloat16;
    case ElementType::i8:
    case ElementType::u8:
      return kTensorMapUint8;  // TMA copies bits: signedness does not matter
    case ElementType::i16:
    case ElementType::u16:
      return kTensorMapUint16;
    case ElementType::i32:
      return kTensorMapInt32;
    case ElementType::u32:
      return kTensorMapUint32;
    case ElementType::i64:
      return kTensorMapInt64;
    case ElementType::u64:
      return kTensorMapUint64;
  }
  return kTensorMapUint8;
}

}  // namespace

std::optional<TensorMapProblem> check_tensor_map(const std::string& name, const ResolvedTensorMap& m, ElementType type,
                                                 std::uint64_t buffer_elements) {
  auto launch_error = [&](std::string why) {
    return TensorMapProblem{Status::launch_error, fmt::format("tensor map '{}' (of '{}', dims {}, box {}): {}", name,
                                                              m.of, list(m.dims), list(m.box), why)};
  };
  auto resource_limit = [&](std::string why) {
    return TensorMapProblem{Status::resource_limit, fmt::format("tensor map '{}' (of '{}', dims {}, box {}): {}", name,
                                                                m.of, list(m.dims), list(m.box), why)};
  };
  const std::size_t rank = m.dims.size();
  if (rank < 1 || rank > 5) return launch_error(fmt::format("{} dimensions; TMA takes 1 to 5", rank));
  if (m.box.size() != rank) return launch_error(fmt::format("{} box extents for {} dimensions", m.box.size(), rank));
  const auto elem = static_cast<std::uint64_t>(size_of(type));
  std::uint64_t elements = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    if (m.dims[i] < 1 || static_cast<std::uint64_t>(m.dims[i]) > (1ull << 32))
      return launch_error(fmt::format("dims[{}] = {}; TMA takes 1 to 2^32", i, m.dims[i]));
    elements = static_cast<std::uint64_t>(m.dims[i]) > UINT64_MAX / elements
                   ? UINT64_MAX
                   : elements * static_cast<std::uint64_t>(m.dims[i]);
  }
  if (elements > buffer_elements)
    return launch_error(fmt::format("the dims cover {} elements, but '{}' has {}", elements, m.of, buffer_elements));
  std::uint64_t stride = elem;
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    stride *= static_cast<std::uint64_t>(m.dims[i]);
    if (stride % 16 != 0)
      return launch_error(
          fmt::format("the global stride of dimension {} is {} bytes, not a multiple of 16 as TMA "
                      "needs (a row is dims[0] = {} elements of {} bytes)",
                      i + 1, stride, m.dims[0], elem));
    if (stride >= (1ull << 40))
      return launch_error(
          fmt::format("the global stride of dimension {} is {} bytes; TMA takes less than 2^40", i + 1, stride));
  }
  for (std::size_t i = 0; i < rank; ++i)
    if (m.box[i] < 1 || m.box[i] > 256)
      return resource_limit(fmt::format("box[{}] = {}; a box extent is 1 to 256 elements", i, m.box[i]));
  const std::uint64_t inner = static_cast<std::uint64_t>(m.box[0]) * elem;
  if (inner % 16 != 0)
    return resource_limit(
        fmt::format("the inner box extent box[0] = {} is {} bytes; TMA needs a multiple of 16 bytes", m.box[0], inner));
  if (m.swizzle != 0 && m.swizzle != 32 && m.swizzle != 64 && m.swizzle != 128)
    return launch_error(fmt::format("swizzle {}; expected 0 (none), 32, 64 or 128", m.swizzle));
  if (m.swizzle != 0 && inner > static_cast<std::uint64_t>(m.swizzle))
    return resource_limit(fmt::format("the inner box extent box[0] = {} is {} bytes, over the {}-byte swizzle span",
                                      m.box[0], inner, m.swizzle));
  if (m.l2_promotion != 0 && m.l2_promotion != 64 && m.l2_promotion != 128 && m.l2_promotion != 256)
    return launch_error(fmt::format("l2_promotion {}; expected 0 (none), 64, 128 or 256", m.l2_promotion));
  if (m.oob_nan && !is_floating(type))
    return launch_error(fmt::format("oob: nan needs a floating-point buffer; '{}' is {}", m.of, to_string(type)));
  return std::nullopt;
}

TensorMapEncoding tensor_map_encoding(const ResolvedTensorMap& m, ElementType type) {
  TensorMapEncoding e;
  e.data_type = data_type_of(type);
  e.rank = static_cast<unsigned>(std::min<std::size_t>(m.dims.size(), 5));
  std::uint64_t stride = size_of(type);
  for (unsigned i = 0; i < e.rank; ++i) {
    e.dims[i] = static_cast<std::uint64_t>(m.dims[i]);
    e.box[i] = i < m.box.size() ? static_cast<unsigned>(m.box[i]) : 1u;
    if (i + 1 < e.rank) {
      stride *= e.dims[i];
      e.strides[i] = stride;
    }
  }
  e.swizzle = m.swizzle == 32    ? kTensorMapSwizzle32B
              : m.swizzle == 64  ? kTensorMapSwizzle64B
              : m.swizzle == 128 ? kTensorMapSwizzle128B
                                 : kTensorMapSwizzleNone;
  e.l2_promotion = m.l2_promotion == 64    ? kTensorMapL2Promotion64B
                   : m.l2_promotion == 128 ? kTensorMapL2Promotion128B
                   : m.l2_promotion == 256 ? kTensorMapL2Promotion256B
                                           : kTensorMapL2PromotionNone;
  e.oob_fill = m.oob_nan ? kTensorMapOobFillNanRequestZeroFma : kTensorMapOobFillNone;
  return e;
}

std::optional<std::string> check_resources(const FunctionResources& f, const DeviceLimits& d, const LaunchGeometry& g) {
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
