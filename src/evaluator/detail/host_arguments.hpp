#pragma once
// A worker's arguments on the host: generated once per argument list and
// seed, reset before every run (inputs restored, outputs poisoned), written
// out as the reference, compared with it. Device workers mirror these
// buffers on the device.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

// What the buffers and scalars of an argument list depend on: equal
// signatures mean equal data. A tensor map counts only by its name and place:
// its dims and box change nothing in the buffers.
std::string argument_signature(const std::vector<ResolvedArgument>& args, std::uint64_t seed);
// The same for the argument at `index` alone.
std::string argument_signature(const ResolvedArgument& arg, std::size_t index, std::uint64_t seed);

// A buffer that cannot be allocated (or whose size overflows); the message
// names the argument. `never_fits`: larger than this machine's memory and
// swap together, or than 64 bits count, so no retry can succeed here: the
// size's or the config's fault, not the machine's state.
struct AllocationError : std::runtime_error {
  explicit AllocationError(const std::string& what, bool never_fits = false)
      : std::runtime_error(what), never_fits(never_fits) {}
  bool never_fits;
};

class HostArguments {
 public:
  // Regenerates the buffers whose own description changed, and only those:
  // configs that resize a scratch buffer (split-K workspace) must not cost a
  // new gigabyte of random inputs each. Returns true when any was
  // (re)generated; version() says which.
  bool prepare(const std::vector<ResolvedArgument>& args, std::uint64_t seed);
  // Changes whenever buffer i's contents are generated anew, so a device
  // copy made at another version is stale.
  std::uint64_t version(std::size_t i) const { return versions_[i]; }
  // Inputs back to their generated values (an `in` buffer a config wrote
  // into is generated again, when watched), outputs poisoned.
  void reset();
  // Whether reset() looks for inputs a kernel wrote into: only where the
  // kernel runs on these buffers (the CPU); a digest of a GEMM's inputs for
  // every call would cost a device backend, whose kernels write their
  // device copies, tens of milliseconds a trial for nothing.
  void watch_inputs(bool on) { watch_inputs_ = on; }

  std::size_t size() const { return args_.size(); }
  const ResolvedArgument& argument(std::size_t i) const { return args_[i]; }
  bool is_buffer(std::size_t i) const {
    return starts_as_generated(args_[i].role) || args_[i].role == Role::out || args_[i].role == Role::inout;
  }
  // A tensor map (CUDA): neither a buffer nor a scalar; the device backend
  // encodes it over its buffer.
  bool is_tensor_map(std::size_t i) const { return args_[i].role == Role::tensor_map; }
  bool is_output(std::size_t i) const { return args_[i].role == Role::out || args_[i].role == Role::inout; }
  // True when every call computes its outputs from the same inputs (no
  // inout buffer), so each call's outputs must match the reference.
  bool calls_repeat() const {
    for (const auto& a : args_)
      if (a.role == Role::inout) return false;
    return true;
  }
  void* data(std::size_t i) { return buffers_[i] ? buffers_[i].get() + kGuardBytes : nullptr; }
  std::size_t bytes(std::size_t i) const { return bytes_[i]; }
  // The scalar's value in its type, in 8 bytes of storage.
  void* scalar(std::size_t i) { return &scalars_[i]; }
  // Host pointers in call order: buffers' data, or the scalar's storage.
  std::vector<void*> pointers();

  // The first NaN in a floating-point output ("output 'y' has nan at
  // element 3"), or empty. Outputs start as NaN, so a NaN in a reference's
  // cannot be told from an element it did not write. An infinity can be a
  // reference's right answer (a masked score, log 0).
  std::string nan_output() const;
  // The first buffer whose guard bytes a call changed ("wrote past the end
  // of output 'y' (1000 elements of f32): elements [1000] to [1001]
  // changed"), or empty. Each buffer lies between kGuardBytes of a known
  // pattern, the padding to its allocation's end included, which reset()
  // writes again: an index off by one wrote into that padding, or into the
  // allocator's next chunk, and the config was verified and timed as right.
  std::string damaged_guard() const;
  static constexpr std::size_t kGuardBytes = 64;
  // The first `in` buffer a call wrote into ("wrote into input 'x' (1000
  // elements of f32), which it must only read: element [0] changed from
  // 0.2 to 5 ..."), or empty; only while watch_inputs() is on. Its timed
  // calls would have computed from other data, and the check after them
  // from the inputs reset() restores, so it passed. A workspace declared
  // `scratch` is not watched.
  std::string written_input() const;

  // Saves the outputs (after a reference run) to `file`; empty or an error.
  std::string save_outputs(const std::string& file);
  // Compares the outputs with those saved in `file`. The file's contents
  // are kept for the next call with the same file: a reference file's name
  // is the hash of what it holds (WorkerEvaluator::prepare_reference), and
  // reading a 4096 x 4096 GEMM's outputs again for each trial cost more
  // than comparing them.
  Verification verify(const std::string& file, const Tolerance& tol);

 private:
  std::uint64_t fill_seed(std::size_t i) const { return seed_ * 1000003ULL + i; }
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::vector<std::string> signatures_;  // per argument
  std::vector<std::uint64_t> versions_;
  std::uint64_t generated_ = 0;
  std::vector<ResolvedArgument> args_;
  // Each allocation: kGuardBytes of guard, the buffer, then guard to a
  // multiple of 64 bytes and kGuardBytes more (data() is past the first).
  std::vector<std::unique_ptr<std::byte, FreeDeleter>> buffers_;
  std::vector<std::size_t> bytes_;
  std::vector<std::size_t> allocated_;
  void write_guards(std::size_t i);
  std::vector<std::vector<std::byte>> pristine_;  // inout buffers' generated contents
  // An input's digest as generated: a config that wrote into its input (a
  // bug, or a write past its output's end) must not leave every later config
  // of this worker computing from other data, and failing as wrong_result by
  // no fault of its own.
  std::vector<std::uint64_t> digests_;
  std::uint64_t seed_ = 0;  // every buffer's: the seed is in each signature
  bool watch_inputs_ = false;
  std::vector<std::uint64_t> scalars_;
  std::string expected_file_;  // the reference file whose outputs expected_ holds
  std::unique_ptr<std::byte[]> expected_;
  std::size_t expected_bytes_ = 0;
};

}  // namespace tunekit::detail
