#pragma once
// A worker's arguments on the host: generated once per argument list and
// seed, reset before every run (inputs restored, outputs poisoned), written
// out as the reference, compared with it. Device workers mirror these
// buffers on the device.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

class HostArguments {
 public:
  // Returns true when the buffers were (re)generated, so a device copy of
  // the inputs is stale.
  bool prepare(const std::vector<ResolvedArgument>& args, std::uint64_t seed);
  // Inputs back to their generated values, outputs poisoned.
  void reset();

  std::size_t size() const { return args_.size(); }
  const ResolvedArgument& argument(std::size_t i) const { return args_[i]; }
  bool is_buffer(std::size_t i) const { return args_[i].role != Role::scalar; }
  bool is_output(std::size_t i) const { return args_[i].role == Role::out || args_[i].role == Role::inout; }
  void* data(std::size_t i) { return buffers_[i].get(); }
  std::size_t bytes(std::size_t i) const { return bytes_[i]; }
  // The scalar's value in its type, in 8 bytes of storage.
  void* scalar(std::size_t i) { return &scalars_[i]; }
  // Host pointers in call order: buffers' data, or the scalar's storage.
  std::vector<void*> pointers();

  // Saves the outputs (after a reference run) to `file`; empty or an error.
  std::string save_outputs(const std::string& file);
  // Compares the outputs with those saved in `file`.
  Verification verify(const std::string& file, const Tolerance& tol);

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::string signature_;
  std::vector<ResolvedArgument> args_;
  std::vector<std::unique_ptr<std::byte, FreeDeleter>> buffers_;
  std::vector<std::size_t> bytes_;
  std::vector<std::vector<std::byte>> pristine_;
  std::vector<std::uint64_t> scalars_;
};

}  // namespace tunekit::detail
