#pragma once
// What a built kernel uses, as its compiler reports it.

#include <cstdint>
#include <map>
#include <string>

namespace tunekit {

// Per name, a count the backend's compiler reports for the kernel it built;
// empty where it reports none (host code, a build served from an older
// cache). Kernel engineers read these beside the time: a config that spills
// or holds many registers explains its time. The GPU backends use these
// names where they apply:
//   registers      registers per thread
//   spills         registers spilled to local memory (4-byte words; the
//                  count kernel.max_spills limits)
//   shared_memory  static shared memory per block, in bytes
// and add their own (CUDA: spill_store_bytes, spill_load_bytes, stack_bytes,
// barriers; Triton: num_warps, threads).
using KernelResources = std::map<std::string, std::int64_t>;

}  // namespace tunekit
