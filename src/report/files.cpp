#include "report/detail/files.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace tunekit::detail {

void write_file_atomically(const std::filesystem::path& file, const std::string& content) {
  std::error_code ec;
  if (auto parent = file.parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));
  }
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    out << content;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace tunekit::detail
