#include "evaluator/detail/host_arguments.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "evaluator/detail/host_data.hpp"
#include "evaluator/detail/protocol.hpp"

namespace tunekit::detail {

namespace {

// A digest of a buffer's bytes, at memory speed (four lanes, no dependency
// between them): it tells whether a kernel wrote into its input; it is no
// checksum against an adversary.
std::uint64_t contents_digest(const std::byte* p, std::size_t bytes) {
  std::uint64_t lane[4] = {0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL, 0x27D4EB2F165667C5ULL};
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * 0x100000001B3ULL + (lane[k] >> 29);
    }
  std::uint64_t tail = bytes;
  for (; i < bytes; ++i) tail = (tail ^ static_cast<std::uint64_t>(p[i])) * 0x100000001B3ULL;
  return lane[0] ^ (lane[1] << 1) ^ (lane[2] << 2) ^ (lane[3] << 3) ^ tail;
}

// An argument's values: made as its fill says, or a file's bytes as they
// are (resolve_arguments checked the file's type and length). A file gone
// or cut short since is the machine's fault, not the config's.
void generate(void* p, const ResolvedArgument& a, std::uint64_t bytes, std::uint64_t seed) {
  if (a.fill != Fill::file) return fill(p, a, seed);
  std::ifstream in(a.fill_file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(a.fill_offset));
  in.read(static_cast<char*>(p), static_cast<std::streamsize>(bytes));
  if (!in)
    throw AllocationError(fmt::format("argument '{}': cannot read {} bytes of {} from byte {}", a.name, bytes,
                                      a.fill_file, a.fill_offset));
}

// This machine's memory and swap, in bytes (0 when unknown): no buffer
// larger fits, whatever else runs.
std::uint64_t memory_and_swap_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 0;
  return (static_cast<std::uint64_t>(info.totalram) + info.totalswap) * info.mem_unit;
}

// The guard's byte at `offset` from the allocation's start: a pattern that
// neither poison (NaN, 0xA5 bytes) nor zeros repeats.
std::byte guard_byte(std::size_t offset) { return static_cast<std::byte>(0x5A ^ (offset * 37 & 0xFF)); }

std::string role_word(Role role) {
  return role == Role::out       ? "output"
         : role == Role::inout   ? "inout argument"
         : role == Role::scratch ? "workspace"
                                 : "input";
}

}  // namespace

void HostArguments::FreeDeleter::operator()(void* p) const { std::free(p); }

std::string argument_signature(const ResolvedArgument& a, std::size_t index, std::uint64_t seed) {
  // The index is part of it: each buffer's fill is seeded by its place.
  return std::to_string(seed) + "#" + std::to_string(index) + "|" +
         (a.role == Role::tensor_map ? "map:" + a.name : to_json(a).dump());
}

std::string argument_signature(const std::vector<ResolvedArgument>& args, std::uint64_t seed) {
  std::string signature;
  for (std::size_t i = 0; i < args.size(); ++i) signature += argument_signature(args[i], i, seed) + "\n";
  return signature;
}

bool HostArguments::prepare(const std::vector<ResolvedArgument>& args, std::uint64_t seed) {
  const std::size_t n = args.size();
  buffers_.resize(n);
  bytes_.resize(n, 0);
  allocated_.resize(n, 0);
  pristine_.resize(n);
  digests_.resize(n, 0);
  seed_ = seed;
  scalars_.resize(n, 0);
  signatures_.resize(n);
  versions_.resize(n, 0);
  bool changed = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = args[i];
    std::string signature = argument_signature(a, i, seed);
    if (signature == signatures_[i]) continue;
    changed = true;
    // Forgotten first: if this argument's buffer cannot be made, the next
    // request makes it again instead of running with none.
    signatures_[i].clear();
    versions_[i] = ++generated_;
    buffers_[i].reset();
    bytes_[i] = 0;
    allocated_[i] = 0;
    pristine_[i].clear();
    scalars_[i] = 0;
    if (a.role == Role::scalar) {
      scalars_[i] = scalar_bits(a);
      signatures_[i] = std::move(signature);
      continue;
    }
    if (a.role == Role::tensor_map) {  // encoded by the device backend
      signatures_[i] = std::move(signature);
      continue;
    }
    const std::uint64_t element = size_of(a.type);
    if (a.count > (std::numeric_limits<std::uint64_t>::max() - 63 - 2 * kGuardBytes) / element)
      throw AllocationError(
          fmt::format("argument '{}': {} elements of {} bytes overflow 64 bits", a.name, a.count, element), true);
    const std::uint64_t bytes = a.count * element;
    if (const std::uint64_t memory = memory_and_swap_bytes(); memory > 0 && bytes > memory)
      throw AllocationError(fmt::format("argument '{}' needs {} bytes ({} elements of {}), more than this machine's "
                                        "memory and swap ({:.1f} GiB)",
                                        a.name, bytes, a.count, to_string(a.type), memory / double(1ull << 30)),
                            true);
    // 64-byte alignment: a cache line, and what AVX-512 loads like (the
    // front guard is 64 bytes too).
    const std::size_t allocated = kGuardBytes + (bytes + 63) / 64 * 64 + kGuardBytes;
    auto* base = static_cast<std::byte*>(std::aligned_alloc(64, allocated));
    if (!base)
      throw AllocationError(fmt::format("cannot allocate {} bytes for argument '{}' ({} elements of {})", bytes, a.name,
                                        a.count, to_string(a.type)));
    buffers_[i].reset(base);
    bytes_[i] = bytes;
    allocated_[i] = allocated;
    std::byte* p = base + kGuardBytes;
    generate(p, a, bytes, fill_seed(i));
    if (a.role == Role::inout) pristine_[i].assign(p, p + bytes_[i]);
    if (starts_as_generated(a.role) && watch_inputs_) digests_[i] = contents_digest(p, bytes_[i]);
    signatures_[i] = std::move(signature);
  }
  // The tensor maps' dims and box are not in the signatures: keep the latest.
  args_ = args;
  reset();
  return changed;
}

void HostArguments::reset() {
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (!is_buffer(i) || !buffers_[i]) continue;
    write_guards(i);
    if (starts_poisoned(args_[i].role)) poison(data(i), args_[i].type, args_[i].count);
    else if (args_[i].role == Role::inout) std::memcpy(data(i), pristine_[i].data(), bytes_[i]);
    else if (starts_as_generated(args_[i].role) && watch_inputs_ &&
             contents_digest(static_cast<std::byte*>(data(i)), bytes_[i]) != digests_[i]) {
      generate(data(i), args_[i], bytes_[i], fill_seed(i));
      versions_[i] = ++generated_;  // a device copy of it is stale too
    }
  }
}

void HostArguments::write_guards(std::size_t i) {
  std::byte* base = buffers_[i].get();
  for (std::size_t k = 0; k < kGuardBytes; ++k) base[k] = guard_byte(k);
  for (std::size_t k = kGuardBytes + bytes_[i]; k < allocated_[i]; ++k) base[k] = guard_byte(k);
}

std::string HostArguments::damaged_guard() const {
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (!is_buffer(i) || !buffers_[i]) continue;
    const std::byte* base = buffers_[i].get();
    const std::size_t end = kGuardBytes + bytes_[i];
    std::size_t first = allocated_[i], last = 0;
    for (std::size_t k = 0; k < allocated_[i]; k = k + 1 == kGuardBytes ? end : k + 1)
      if (base[k] != guard_byte(k)) {
        first = std::min(first, k);
        last = k;
      }
    if (first == allocated_[i]) continue;
    // In elements from the buffer's start, as the kernel indexes it.
    const auto element = [&](std::size_t k) {
      const auto from_start = static_cast<std::int64_t>(k) - static_cast<std::int64_t>(kGuardBytes);
      const auto size = static_cast<std::int64_t>(size_of(args_[i].type));
      return from_start >= 0 ? from_start / size : -((-from_start + size - 1) / size);
    };
    const std::string where = element(first) == element(last)
                                  ? fmt::format("element [{}] changed", element(first))
                                  : fmt::format("elements [{}] to [{}] changed", element(first), element(last));
    return fmt::format("wrote {} of {} '{}' ({} elements of {}): {}",
                       first < kGuardBytes ? "before the start" : "past the end", role_word(args_[i].role),
                       args_[i].name, args_[i].count, to_string(args_[i].type), where);
  }
  return {};
}

std::string HostArguments::written_input() const {
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].role != Role::in || !watch_inputs_ || !buffers_[i]) continue;
    const auto* now = buffers_[i].get() + kGuardBytes;
    if (contents_digest(now, bytes_[i]) == digests_[i]) continue;
    // Generated again only here, once a change is known: keeping a copy of
    // every input would double a large GEMM's memory.
    std::vector<std::byte> generated(bytes_[i]);
    generate(generated.data(), args_[i], bytes_[i], fill_seed(i));
    std::string found;
    with_type(args_[i].type, [&](auto zero) {
      using T = decltype(zero);
      const auto* got = reinterpret_cast<const T*>(now);
      const auto* was = reinterpret_cast<const T*>(generated.data());
      const auto text = [](T v) {
        // A float in its own shortest form, not its double's 17 digits.
        if constexpr (std::is_same_v<T, float>) return fmt::format("{}", v);
        else if constexpr (is_float_storage<T>) return fmt::format("{}", as_double(v));
        else return fmt::format("{}", +v);
      };
      std::uint64_t first = args_[i].count, changed = 0;
      for (std::uint64_t k = 0; k < args_[i].count; ++k)
        if (std::memcmp(got + k, was + k, sizeof(T)) != 0) {
          first = std::min(first, k);
          ++changed;
        }
      if (changed == 0) return;  // a fill file changed on disk since, not the kernel
      found = fmt::format(
          "wrote into input '{}', which it may only read: element [{}] changed from {} to {} ({} of "
          "its {} elements of {} changed), so its later calls computed from other inputs; a buffer the "
          "kernel writes is declared 'role: out' (an output) or 'role: scratch' (a workspace)",
          args_[i].name, first, text(was[first]), text(got[first]), changed, args_[i].count, to_string(args_[i].type));
    });
    if (!found.empty()) return found;
  }
  return {};
}

std::vector<void*> HostArguments::pointers() {
  std::vector<void*> p(args_.size());
  for (std::size_t i = 0; i < args_.size(); ++i) p[i] = is_buffer(i) ? data(i) : scalar(i);
  return p;
}

std::string HostArguments::save_outputs(const std::string& file) {
  // A name of this worker's own: two tuners sharing an output folder may
  // compute the same reference at once.
  const std::string tmp = file + "." + std::to_string(::getpid()) + ".tmp";
  // A part written to a full disk is removed: left, it would only fill the
  // disk further at every rerun.
  const auto failed = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    return what + ": " + reason;
  };
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return failed("cannot write " + tmp);
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (is_output(i)) f.write(reinterpret_cast<const char*>(data(i)), static_cast<std::streamsize>(bytes_[i]));
    f.flush();
    if (!f) return failed("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) return failed("cannot rename " + tmp + " to " + file);
  return {};
}

std::string HostArguments::nan_output() const {
  std::string found;
  for (std::size_t i = 0; i < args_.size() && found.empty(); ++i) {
    if (!is_output(i)) continue;
    with_type(args_[i].type, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (is_float_storage<T>) {
        const T* p = reinterpret_cast<const T*>(buffers_[i].get() + kGuardBytes);
        for (std::uint64_t k = 0; k < args_[i].count; ++k) {
          const double v = as_double(p[k]);
          if (std::isnan(v)) {
            found = fmt::format("output '{}' has {} at element {}", args_[i].name, v, k);
            return;
          }
        }
      }
    });
  }
  return found;
}

Verification HostArguments::verify(const std::string& file, const Tolerance& tol) {
  Verification total;
  total.checked = true;
  // Each output's part of the file gets a slot of its own, aligned for any
  // element type as new[] aligns the whole (the file packs them: a
  // 3-element bf16 output leaves the next one 6 bytes in).
  constexpr std::size_t kAlign = alignof(std::max_align_t);
  auto slot = [](std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; };
  std::size_t need = 0;
  for (std::size_t i = 0; i < args_.size(); ++i)
    if (is_output(i)) need += slot(bytes_[i]);
  if (need > 0 && (file != expected_file_ || expected_bytes_ != need)) {
    expected_file_.clear();
    if (expected_bytes_ != need) {
      expected_.reset(new std::byte[need]);  // not zeroed: the reads fill it
      expected_bytes_ = need;
    }
    std::ifstream f(file, std::ios::binary);
    std::byte* at = expected_.get();
    for (std::size_t i = 0; i < args_.size() && f; ++i) {
      if (!is_output(i)) continue;
      f.read(reinterpret_cast<char*>(at), static_cast<std::streamsize>(bytes_[i]));
      at += slot(bytes_[i]);
    }
    if (!f) {
      total.passed = false;
      total.detail = "reference outputs unreadable: " + file;
      return total;
    }
    expected_file_ = file;
  }
  const std::byte* expected = expected_.get();
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (!is_output(i)) continue;
    Verification v = compare_outputs(args_[i].type, data(i), expected, args_[i].count, tol, args_[i].name);
    expected += slot(bytes_[i]);
    total.max_abs_diff = std::max(total.max_abs_diff, v.max_abs_diff);
    total.max_rel_err = std::max(total.max_rel_err, v.max_rel_err);
    if (!v.passed && total.passed) {
      total.passed = false;
      total.detail = v.detail;
    }
  }
  return total;
}

}  // namespace tunekit::detail
