#pragma once
// The CUDA backend: NVRTC (or nvcc) builds cubins for the device's own
// architecture, cached by content hash; one worker process per GPU loads
// them through the driver API, launches, verifies and times them.
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "builder/detail/cache_claims.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/evaluator.hpp"
#include "tunekit/resources.hpp"

namespace tunekit::cuda {

struct Driver;

// ---- The device -----------------------------------------------------------

// What the driver reports about one GPU.
struct DeviceLimits {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  std::array<int, 3> max_block{0, 0, 0};
  std::array<int, 3> max_grid{0, 0, 0};
  int shared_per_block = 0;        // default limit, bytes
  int shared_per_block_optin = 0;  // what cuFuncSetAttribute can raise it to
  int shared_per_sm = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int l2_bytes = 0;
  int clock_khz = 0, memory_clock_khz = 0, memory_bus_bits = 0;
  std::uint64_t memory_bytes = 0;
};

// Reads every limit of device `ordinal`. Throws std::runtime_error.
DeviceLimits query_device(const Driver& driver, int ordinal);

// The device's own build target: "sm_" + major + minor, with the "a" suffix
// (architecture-specific features such as wgmma) from compute capability 9.0
// on: "sm_90a" on an H100 or H200.
std::string default_arch(int cc_major, int cc_minor);

// The device as constraints see it: max_threads_per_block,
// shared_memory_per_block (default limit), shared_memory_per_block_optin,
// shared_memory_per_sm, registers_per_block, registers_per_sm,
// registers_per_thread (255), sm_count, l2_bytes, compute_capability (90),
// cc_major, cc_minor, warp_size, max_threads_per_sm, max_blocks_per_sm,
// memory_bytes, max_grid_x/y/z, and arch ("sm_90a", a string).
MachineInfo machine_info(const DeviceLimits& d);

// Registers a thread can have on every architecture so far.
inline constexpr int kMaxRegistersPerThread = 255;

// ---- Resource checks ------------------------------------------------------

// What cuFuncGetAttribute says about a built function.
struct FunctionResources {
  int registers = 0;              // per thread
  int static_shared = 0;          // bytes
  int local_bytes = 0;            // per thread (spills, stack)
  int max_threads_per_block = 0;  // given its register use
};

// Dynamic shared memory a block may use without cuFuncSetAttribute.
inline constexpr std::uint64_t kDefaultDynamicSharedLimit = 48 * 1024;

// Why `geometry` cannot launch on `device` (grid or block too large; a
// thread-block cluster on a device before compute capability 9.0, of more
// than kMaxClusterBlocks blocks, or that does not divide the grid), or
// nullopt. Checked before the function's own resources.
std::optional<std::string> check_geometry(const DeviceLimits& device, const LaunchGeometry& geometry);

// Blocks in a cluster that every cluster-capable GPU runs.
inline constexpr std::uint64_t kMaxPortableClusterBlocks = 8;
// The most any GPU so far allows (H100/H200 and B200, as a "non-portable"
// size). The worker sets CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
// for clusters past kMaxPortableClusterBlocks; a device or a kernel's
// resources that cannot hold one fails the launch, a resource_limit.
inline constexpr std::uint64_t kMaxClusterBlocks = 16;

// ---- Tensor maps (TMA) ----------------------------------------------------

// Why a tensor map cannot be encoded, and the trial status that makes: a
// box over TMA's limits (a config's tile) is a resource_limit; an array TMA
// cannot describe (a global stride not a multiple of 16 bytes, a buffer
// smaller than the dims) is a launch_error.
struct TensorMapProblem {
  Status status = Status::launch_error;
  std::string why;
};
// Checks map `name` over a buffer of `buffer_elements` elements of `type`
// against cuTensorMapEncodeTiled's rules, or nullopt when they hold.
std::optional<TensorMapProblem> check_tensor_map(const std::string& name, const ResolvedTensorMap& map,
                                                 ElementType type, std::uint64_t buffer_elements);

// cuTensorMapEncodeTiled's arguments for a checked map: a dense row-major
// array (strides[i] = dims[0] * ... * dims[i] * element size), element
// strides 1, no interleave.
struct TensorMapEncoding {
  int data_type = 0;  // CUtensorMapDataType
  unsigned rank = 0;
  std::array<std::uint64_t, 5> dims{};
  std::array<std::uint64_t, 4> strides{};  // bytes, dimensions 1 .. rank-1
  std::array<unsigned, 5> box{};
  std::array<unsigned, 5> element_strides{1, 1, 1, 1, 1};
  int swizzle = 0;       // CUtensorMapSwizzle
  int l2_promotion = 0;  // CUtensorMapL2promotion
  int oob_fill = 0;      // CUtensorMapFloatOOBfill
};
TensorMapEncoding tensor_map_encoding(const ResolvedTensorMap& map, ElementType type);
// Why `f` cannot launch with `geometry` on `device` (threads over what its
// register use allows, static plus dynamic shared memory over the opt-in
// limit, registers per block), or nullopt.
std::optional<std::string> check_resources(const FunctionResources& f, const DeviceLimits& device,
                                           const LaunchGeometry& geometry);

// ---- Building -------------------------------------------------------------

// The sidecar stored next to each cubin (<hash>.json): which function to
// launch. For a template entry ("gemm<128, 64>") `lowered` is its mangled
// name, which cuModuleGetFunction needs.
struct KernelSymbol {
  std::string entry;     // as written in the spec, placeholders resolved
  std::string lowered;   // the symbol in the cubin
  std::string arch;      // e.g. sm_90a
  std::string compiler;  // "nvrtc 13.0" or the nvcc command
  KernelResources resources;  // ptxas's report of the entry, for a cached build
};
std::filesystem::path sidecar_path(const std::filesystem::path& cubin);
void write_sidecar(const std::filesystem::path& file, const KernelSymbol& s);
// nullopt when missing or unreadable.
std::optional<KernelSymbol> read_sidecar(const std::filesystem::path& file);

// NVRTC's options for `input`: the architecture, the defines, CUDA's include
// folder when one is found, then the spec's flags.
std::vector<std::string> nvrtc_options(const BuildInput& input, const std::string& arch);

// ptxas's report (-v) of the kernel `symbol` (its lowered name) in a
// compiler's `log`: registers, barriers, shared_memory (static, bytes),
// stack_bytes, spill_store_bytes, spill_load_bytes, and spills (the
// registers spilled: spill_store_bytes in 4-byte words). Empty when the log
// does not report it.
KernelResources ptxas_resources(std::string_view log, std::string_view symbol);
// `log` without ptxas's report, which every build prints: what is left are
// the compiler's warnings and errors.
std::string without_ptxas_report(std::string_view log);
// CUDA's include folder: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda (empty if none).
std::filesystem::path cuda_include_dir();
// The host compiler nvcc runs with these flags: the last -ccbin (or
// --compiler-bindir) among $NVCC_PREPEND_FLAGS, `flags` and
// $NVCC_APPEND_FLAGS, else $NVCC_CCBIN, else gcc; a folder named holds its
// gcc. As nvcc runs it: a bare name is found on $PATH.
std::string nvcc_host_compiler(const std::vector<std::string>& flags);
// What `compiler` ("nvrtc" or "nvcc") builds with, as the kernel's identity
// names it (KernelTraits::toolchain_identity): the toolkit's version, and
// for nvcc the release of the host compiler it runs with `flags`
// (detail::compiler_release of nvcc_host_compiler).
std::string toolchain_identity(std::string_view compiler, const std::vector<std::string>& flags);

// What a cubin's ELF header and symbol table say.
struct CubinInfo {
  bool valid = false;
  std::string error;                   // when not valid
  int machine = 0;                     // EM_CUDA = 190
  unsigned flags = 0;                  // e_flags
  int sm = 0;                          // the SM version encoded in e_flags (90 for sm_90/sm_90a)
  std::vector<std::string> functions;  // global and weak function symbols
};
CubinInfo inspect_cubin(std::string_view bytes);

// The symbol among `functions` (mangled or not) that names `entry`: equal,
// or demangling to "... entry(...)" (whitespace-insensitive). A single
// function is taken when nothing matches by name. nullopt if none.
std::optional<std::string> match_entry(const std::vector<std::string>& functions, std::string_view entry);

class CudaBuilder final : public Builder {
 public:
  // `arch` is used for inputs that name none; with an empty `arch`, such an
  // input fails to build (there is no device to take it from).
  CudaBuilder(std::filesystem::path cache_dir, bool rebuild, std::string arch);
  BuildResult build(const BuildInput& input) override;
  // The architecture an input is built for.
  std::string arch_for(const BuildInput& input) const { return input.arch.empty() ? arch_ : input.arch; }

 private:
  BuildResult build_nvrtc(const BuildInput& input, const std::string& arch, BuildResult r);
  BuildResult build_nvcc(const BuildInput& input, const std::string& arch, BuildResult r);

  std::filesystem::path cache_dir_;
  tunekit::detail::CacheClaims claims_;  // which variants the cache may serve
  std::string arch_;
};

// ---- The worker -----------------------------------------------------------

// Bytes to overwrite (cold-read: to read) before each cold sample: four
// times the L2, at least 256 MB (what triton.testing.do_bench zeroes).
std::uint64_t flush_bytes_for(const DeviceLimits& d);

}  // namespace tunekit::cuda
