#include "core/detail/npy.hpp"
#include "core/detail/text.hpp"

#include <cctype>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace tunekit::detail {

std::uint64_t NpyHeader::count() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}

bool is_npy(const std::filesystem::path& file) { return lowercase_extension(file) == ".npy"; }

NpyHeader read_npy_header(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot be read");
  char magic[8] = {};
  in.read(magic, 8);
  if (!in || std::string(magic, 6) != "\x93NUMPY")
    throw std::runtime_error("is not a NumPy .npy file (it lacks the \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  if (major < 1 || major > 3)
    throw std::runtime_error("has .npy format version " + std::to_string(major) + ", not 1 to 3");
  // Version 1 gives the header's length in 2 bytes, later ones in 4
  // (little-endian).
  unsigned char len[4] = {};
  const int len_bytes = major == 1 ? 2 : 4;
  in.read(reinterpret_cast<char*>(len), len_bytes);
  std::uint64_t header_len = 0;
  for (int i = len_bytes - 1; i >= 0; --i) header_len = header_len << 8 | len[i];
  if (!in || header_len > (1u << 20)) throw std::runtime_error("has a truncated or oversized header");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!in) throw std::runtime_error("has a truncated header");
  NpyHeader h;
  h.data_offset = 8 + static_cast<std::uint64_t>(len_bytes) + header_len;
  // A Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
  std::smatch m;
  static const std::regex descr(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex order(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, m, descr))
    throw std::runtime_error("has a header without 'descr' (a structured or object array?)");
  h.descr = m[1].str();
  if (!std::regex_search(header, m, order)) throw std::runtime_error("has a header without 'fortran_order'");
  h.fortran_order = m[1].str() == "True";
  if (!std::regex_search(header, m, shape)) throw std::runtime_error("has a header without 'shape'");
  const std::string dims = m[1].str();
  static const std::regex number(R"(\d+)");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it)
    h.shape.push_back(std::stoull(it->str()));
  return h;
}

}  // namespace tunekit::detail
