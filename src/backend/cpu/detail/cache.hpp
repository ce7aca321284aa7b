#pragma once
// Making a CPU kernel's data cold between samples.
#include <cstddef>
#include <string_view>

namespace tunekit::cpu {

// Evicts [data, data + bytes) from every cache level of every core, writing
// dirty lines back (x86-64: clflushopt, else clflush; AArch64: dc civac).
// Returns false where the processor has no such instruction (the caller
// then overwrites a buffer instead).
bool evict_lines(const void* data, std::size_t bytes);

// The instruction evict_lines() uses here ("clflushopt", "clflush",
// "dc civac"), or empty when there is none.
std::string_view eviction_instruction();

}  // namespace tunekit::cpu
