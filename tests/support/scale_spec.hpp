#pragma once
// A CPU kernel for the tests that need one tuned for real, quickly: SCALE
// changes how often, not what, it computes, so every config is correct.
#include <filesystem>
#include <string>

#include "support/temp_dir.hpp"
#include "tunekit/spec.hpp"

namespace tunekit::testing {

// Writes scale.cpp and scale.yaml into `dir` and loads the spec: `sizes` and
// `scales` are YAML flow lists ("[{N: 1024}]", "[1, 2]"); `body` computes
// y[i] from x[i] (another body, another kernel).
inline Spec scale_spec(const std::filesystem::path& dir, const std::string& sizes, const std::string& scales,
                       const std::string& body = "y[i] = 2 * x[i];") {
  write_file(dir / "scale.cpp", "extern \"C\" void scale(const float* x, float* y, int n) {\n"
                                "  for (int r = 0; r < SCALE; ++r)\n    for (int i = 0; i < n; ++i) " +
                                    body + "\n}\n");
  write_file(dir / "scale.yaml", R"(name: scale
kernel: {source: scale.cpp, entry: scale, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: )" + sizes + R"(
parameters:
  SCALE: )" + scales + R"(
default: {SCALE: 1}
measure: {warmup: 0s, min_samples: 3, max_samples: 5, max_time: 50ms, cache: hot, timeout: 60s, confirm: 0}
)");
  return load_spec(dir / "scale.yaml");
}

}  // namespace tunekit::testing
