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
}
