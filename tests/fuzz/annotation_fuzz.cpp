// The annotation scanners of kernel sources: `// tunable` lines and
// %RANGE% comments. Any source scans to parameters or an InputError.
#include <string>
#include <utility>
#include <vector>

#include "tunekit/annotation.hpp"
#include "tunekit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  try {
    const auto ranges = tunekit::parse_range_annotations(source, "k.cpp");
    const auto parameters = tunekit::parameters_from_ranges(ranges, "k.cpp");
    std::vector<std::pair<std::string, tunekit::Value>> first;
    for (const auto& p : parameters)
      if (!p.values.empty()) first.emplace_back(p.name, p.values.front());
    (void)tunekit::prepend_defines(source, tunekit::Config(std::move(first)), "k.cpp");
  } catch (const tunekit::InputError&) {
  }
  try {
    if (tunekit::has_tunable_lines(source)) (void)tunekit::apply_tunable_lines(source, tunekit::Config{}, "k.cpp");
  } catch (const tunekit::InputError&) {
  }
  return 0;
}
