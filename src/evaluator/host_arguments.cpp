#include "evaluator/detail/host_arguments.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "evaluator/detail/host_data.hpp"
#include "evaluator/detail/protocol.hpp"

namespace tunekit::detail {

void HostArguments::FreeDeleter::operator()(void* p) const { std::free(p); }

bool HostArguments::prepare(const std::vector<ResolvedArgument>& args, std::uint64_t seed) {
  std::string signature = std::to_string(seed);
  for (const auto& a : args) signature += "|" + to_json(a).dump();
  const bool changed = signature != signature_;
  if (changed) {
    signature_ = std::move(signature);
    args_ = args;
    buffers_.clear();
    bytes_.assign(args.size(), 0);
    pristine_.assign(args.size(), {});
    scalars_.assign(args.size(), 0);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& a = args[i];
      if (a.role == Role::scalar) {
        buffers_.emplace_back(nullptr);
        scalars_[i] = scalar_bits(a);
        continue;
      }
      bytes_[i] = a.count * size_of(a.type);
      // 64-byte alignment: a cache line, and what AVX-512 loads like.
      const std::size_t rounded = std::max<std::size_t>(64, (bytes_[i] + 63) / 64 * 64);
      auto* p = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
      if (!p) throw std::bad_alloc();
      buffers_.emplace_back(p);
      fill(p, a, seed * 1000003ULL + i);
      if (a.role != Role::out) pristine_[i].assign(p, p + bytes_[i]);
    }
  }
  reset();
  return changed;
}

void HostArguments::reset() {
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].role == Role::out) poison(buffers_[i].get(), args_[i].type, args_[i].count);
    else if (args_[i].role == Role::inout) std::memcpy(buffers_[i].get(), pristine_[i].data(), bytes_[i]);
  }
}

std::vector<void*> HostArguments::pointers() {
  std::vector<void*> p(args_.size());
  for (std::size_t i = 0; i < args_.size(); ++i) p[i] = is_buffer(i) ? data(i) : scalar(i);
  return p;
}

std::string HostArguments::save_outputs(const std::string& file) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (is_output(i)) f.write(reinterpret_cast<const char*>(data(i)), static_cast<std::streamsize>(bytes_[i]));
    if (!f) return "cannot write " + tmp;
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) return "cannot rename " + tmp;
  return {};
}

Verification HostArguments::verify(const std::string& file, const Tolerance& tol) {
  std::ifstream f(file, std::ios::binary);
  Verification total;
  total.checked = true;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (!is_output(i)) continue;
    std::vector<std::byte> expected(bytes_[i]);
    f.read(reinterpret_cast<char*>(expected.data()), static_cast<std::streamsize>(expected.size()));
    if (!f) {
      total.passed = false;
      total.detail = "reference outputs unreadable: " + file;
      return total;
    }
    Verification v = compare_outputs(args_[i].type, data(i), expected.data(), args_[i].count, tol, args_[i].name);
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
