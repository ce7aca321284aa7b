// The spec loader (YAML, and JSON through the same parser): any input is a
// spec or a located InputError, never a crash, a hang or another exception.
#include "fuzz_support.hpp"
#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = tunekit::fuzz::write_input("spec.yaml", data, size);
  try {
    (void)tunekit::load_spec(file);
  } catch (const tunekit::InputError&) {
  }
  return 0;
}
