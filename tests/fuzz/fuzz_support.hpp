#pragma once
// Shared by the libFuzzer targets: a private scratch folder per process (the
// loaders read files), and the input written there.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace tunekit::fuzz {

inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("tunekit-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    // A kernel source for specs that name one.
    std::ofstream(d / "k.cpp") << "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 1; }\n";
    return d;
  }();
  return dir;
}

inline std::filesystem::path write_input(const char* name, const std::uint8_t* data, std::size_t size) {
  const auto file = scratch() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

}  // namespace tunekit::fuzz
