// The tuner's parser of the worker's replies: whatever arrives on the
// channel is an answer or a reason, never an exception or a crash.
#include <string_view>

#include "evaluator/detail/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  (void)tunekit::detail::parse_answer(line, "tk0123");
  (void)tunekit::detail::parse_answer(line, "");
  return 0;
}
