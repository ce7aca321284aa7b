// A machine description as JSON (src/backend/machine.cpp): what trials
// record and `tunekit space --properties` reads.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tunekit/backend.hpp"

using namespace tunekit;

TEST(MachineJson, RoundTripsAndRefusesWhatIsNotAMachine) {
  const MachineInfo m{"gpu: X",
                      {{"sm_count", Value(132)}, {"clock_ghz", Value(1.98)}, {"arch", Value(std::string("sm_90a"))}}};
  const MachineInfo back = machine_from_json(machine_to_json(m));
  EXPECT_EQ(back.device, "gpu: X");
  EXPECT_EQ(back.properties, m.properties);
  EXPECT_THROW(machine_from_json("[1, 2]"), std::invalid_argument);
  EXPECT_THROW(machine_from_json("{\"nested\": {\"a\": 1}}"), std::invalid_argument);
  EXPECT_THROW(machine_from_json("not json"), std::invalid_argument);
  // The whole listing of `tunekit devices --json`, or a nested value: said in
  // a line, not dumped.
  auto message = [](std::string_view json) {
    try {
      (void)machine_from_json(json);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(message(R"({"backends": [{"backend": "cpu", "devices": [{"device": "cpu: x", "cores": 2}]}]})"),
            "this is the whole `tunekit devices --json` listing, not one device of a backend's \"devices\" list in it");
  EXPECT_EQ(message(R"({"caches": [1, 2, 3]})"), "property 'caches' must be a number or a string, not a list");
  EXPECT_EQ(message(R"({"l1d_bytes": -5})"),
            "property 'l1d_bytes' is -5; a machine property is a size, a count or a rate, never negative");
}
