#pragma once
// The small matmul-like spec with tile rules (tiled_matmul.yaml) that the
// rules and seeds tests tune, and its configs by tile.
#include <filesystem>

#include "tunekit/space.hpp"

namespace tunekit::testing {

inline const std::filesystem::path kTiledMatmulSpec =
    std::filesystem::path(TUNEKIT_SOURCE_DIR) / "tests/tuner/data/tiled_matmul.yaml";

inline Config tiles(int bm, int bn, int bk) { return Config({{"BM", Value(bm)}, {"BN", Value(bn)}, {"BK", Value(bk)}}); }

}  // namespace tunekit::testing
