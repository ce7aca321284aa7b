#pragma once
// NumPy's .npy files (format versions 1 to 3), for arguments filled from a
// file: the header says the element type, the order and the shape; the data
// follows it. A reader of the header only: the data is copied as it is.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tunekit::detail {

struct NpyHeader {
  std::string descr;  // the dtype as NumPy writes it: '<f4', '|u1', ...
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;  // empty for a 0-d array
  std::uint64_t data_offset = 0;     // bytes before the data
  std::uint64_t count() const;       // elements: the product of the shape
};

// The header of `file`; throws std::runtime_error saying what is wrong (not
// an .npy file, an unreadable header) in words that follow the file's name.
NpyHeader read_npy_header(const std::filesystem::path& file);

// Whether a file is taken for .npy: by its extension.
bool is_npy(const std::filesystem::path& file);

}  // namespace tunekit::detail
