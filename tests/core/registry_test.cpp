// The registry behind every plugin kind: names, aliases, and the message
// for a name it lacks.
#include "tunekit/registry.hpp"

#include <gtest/gtest.h>

#include "tunekit/output.hpp"
#include "tunekit/strategy.hpp"

using namespace tunekit;

namespace {

struct Plain {
  std::string name;
};
struct Aliased {
  std::string name;
  std::vector<std::string> aliases;
};

std::string message_of(const auto& registry, std::string_view name) {
  try {
    (void)registry.get(name, {"--flag"});
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Registry, FindsAnEntryByItsNameOrAnAlias) {
  Registry<Aliased> r("strategy");
  r.add({"genetic", {"genetic_algorithm"}});
  r.add({"random", {}});
  ASSERT_NE(r.find("genetic_algorithm"), nullptr);
  EXPECT_EQ(r.find("genetic_algorithm"), r.find("genetic"));
  EXPECT_EQ(r.get("genetic_algorithm").name, "genetic");
  EXPECT_EQ(r.find("genetic_algo"), nullptr);
  // names() lists the entries once each, by their own names.
  EXPECT_EQ(r.names(), (std::vector<std::string>{"genetic", "random"}));
}

TEST(Registry, RefusesANameOrAliasTakenAlready) {
  Registry<Aliased> r("strategy");
  r.add({"genetic", {"genetic_algorithm"}});
  EXPECT_THROW(r.add({"genetic_algorithm", {}}), std::invalid_argument);
  EXPECT_THROW(r.add({"ga", {"genetic"}}), std::invalid_argument);
  EXPECT_THROW(r.add({"ga", {"genetic_algorithm"}}), std::invalid_argument);
  EXPECT_THROW(r.add({"ga", {""}}), std::invalid_argument);
  EXPECT_EQ(r.names().size(), 1u);  // nothing half-added
  Registry<Plain> p("writer");
  p.add({"csv"});
  EXPECT_THROW(p.add({"csv"}), std::invalid_argument);
}

TEST(Registry, AnUnknownNameIsToldTheNearestSpellingAliasesIncluded) {
  Registry<Aliased> r("strategy");
  r.add({"genetic", {"genetic_algorithm"}});
  r.add({"random", {"random_sample"}});
  const std::string m = message_of(r, "genetic_algoritm");
  EXPECT_NE(m.find("--flag"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown strategy 'genetic_algoritm'; did you mean 'genetic_algorithm'?"), std::string::npos) << m;
  EXPECT_NE(m.find("(known: genetic, random; also: genetic_algorithm (genetic), random_sample (random))"),
            std::string::npos)
      << m;
  Registry<Plain> p("writer");
  p.add({"csv"});
  EXPECT_NE(message_of(p, "csvv").find("did you mean 'csv'? (known: csv)"), std::string::npos) << message_of(p, "csvv");
}

// Kernel Tuner's names for the algorithms tunekit has, so its users' specs
// and command lines work as written.
TEST(Registry, BuiltInStrategiesAnswerToKernelTunersNames) {
  const std::pair<const char*, const char*> kernel_tuner[] = {{"brute_force", "exhaustive"},
                                                              {"random_sample", "random"},
                                                              {"genetic_algorithm", "genetic"},
                                                              {"simulated_annealing", "annealing"},
                                                              {"diff_evo", "diffevo"},
                                                              {"bayes_opt", "bayes"},
                                                              {"greedy_ils", "local"},
                                                              {"greedy_mls", "local"},
                                                              {"mls", "local"}};
  for (const auto& [theirs, ours] : kernel_tuner) {
    const StrategyInfo* s = strategies().find(theirs);
    ASSERT_NE(s, nullptr) << theirs;
    EXPECT_EQ(s->name, ours) << theirs;
  }
  // One Kernel Tuner has and tunekit does not.
  EXPECT_EQ(strategies().find("firefly_algorithm"), nullptr);
}

}  // namespace

// A plugin without the parts it needs is refused when added, naming what it
// lacks, not when it is first used (a null function call there).
TEST(Registry, RefusesAPluginWithoutThePartsItNeeds) {
  auto message = [](auto& registry, auto entry) {
    try {
      registry.add(std::move(entry));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(added)");
  };
  EXPECT_EQ(message(strategies(), StrategyInfo{"no_make", "nothing to make it with"}),
            "the strategy 'no_make' has no make (the function that makes it)");
  WriterInfo writer{"no_write", "writes nothing"};
  EXPECT_EQ(message(writers(), writer), "the output writer 'no_write' has no write");
  writer.write = [](const TuneReport&, std::ostream&) {};
  EXPECT_EQ(message(writers(), writer), "the output writer 'no_write' has no default_file (it writes a file)");
  EXPECT_EQ(strategies().find("no_make"), nullptr);
  EXPECT_EQ(writers().find("no_write"), nullptr);
}
