// The T1 reader (Kernel Tuner's search-space JSON): a space or an
// InputError for any input.
#include "fuzz_support.hpp"
#include "tunekit/error.hpp"
#include "tunekit/t1.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = tunekit::fuzz::write_input("space.T1.json", data, size);
  try {
    (void)tunekit::load_t1(file);
  } catch (const tunekit::InputError&) {
  }
  return 0;
}
