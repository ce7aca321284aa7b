#pragma once
// File helpers shared by the report writers.
#include <filesystem>
#include <string>
#include <string_view>

namespace tunekit::detail {

// RFC 4180: quote a field holding a comma, a quote or a line break; double
// the quotes inside.
std::string csv_field(std::string_view s);

}  // namespace tunekit::detail
