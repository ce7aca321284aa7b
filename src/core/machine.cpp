// A machine description as JSON: what trials record, what `tunekit devices
// --json` prints, and what `tunekit space --properties` reads back.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tunekit/error.hpp"
#include "tunekit/machine.hpp"

namespace tunekit {

std::string machine_to_json(const MachineInfo& m) {
  nlohmann::ordered_json j;
  j["device"] = m.device;
  for (const auto& [k, v] : m.properties) {
    if (v.is_int()) j[k] = v.as_int();
    else if (v.is_float()) j[k] = v.as_float();
    else j[k] = v.as_string();
  }
  return j.dump();
}

MachineInfo machine_from_json(std::string_view json) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) throw std::invalid_argument("a machine description must be a JSON object");
  // The whole of `tunekit devices --json`, not one of its devices.
  if (j.contains("backends") && j["backends"].is_array())
    throw std::invalid_argument(
        "this is the whole `tunekit devices --json` listing, not one device of a backend's \"devices\" list in "
        "it");
  MachineInfo m;
  for (const auto& [k, v] : j.items()) {
    if (k == "device" && v.is_string()) m.device = v.get<std::string>();
    else if (v.is_number() && v.get<double>() < 0)
      throw std::invalid_argument("property '" + k + "' is " + v.dump() +
                                  "; a machine property is a size, a count or a rate, never negative");
    else if (v.is_number_integer()) m.properties[k] = Value(v.get<std::int64_t>());
    else if (v.is_number()) m.properties[k] = Value(v.get<double>());
    else if (v.is_string()) m.properties[k] = Value(v.get<std::string>());
    else
      throw std::invalid_argument("property '" + k + "' must be a number or a string, not " +
                                  (v.is_structured() ? std::string(v.is_array() ? "a list" : "an object") : v.dump()));
  }
  return m;
}

MachineInfo load_machine_file(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw InputError(SourceLocation{file, 0, 0}, "cannot read " + file);
  try {
    MachineInfo m = machine_from_json(text.str());
    // A constraint compares a string with a number as unequal, so a quoted
    // count would silently prune the whole space instead of failing here.
    for (const auto& [k, v] : m.properties)
      if (v.is_string() && !v.as_string().empty()) {
        const std::string& s = v.as_string();
        std::size_t used = 0;
        try {
          (void)std::stod(s, &used);
        } catch (const std::exception&) {
          continue;
        }
        if (used == s.size())
          throw std::invalid_argument("property '" + k + "' is the string \"" + s +
                                      "\"; write the number without quotes: \"" + k + "\": " + s);
      }
    return m;
  } catch (const std::invalid_argument& e) {
    throw InputError(SourceLocation{file, 0, 0},
                     std::string(e.what()) +
                         "; expected one device object of `tunekit devices --json`, such as "
                         "{\"device\": \"...\", \"l1d_bytes\": 32768}");
  }
}

}  // namespace tunekit
