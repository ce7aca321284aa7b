// The registry behind every plugin kind: names, aliases, and the message
// for a name it lacks.
#include "tunekit/registry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tunekit/backend.hpp"
#include "tunekit/output.hpp"
#include "tunekit/seeds.hpp"
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

// A name that means something else where the entries' names are used is
// refused with what it means; so is an alias of it. The message's article
// follows the kind.
TEST(Registry, RefusesAReservedNameAndSaysWhy) {
  Registry<Aliased> r("output writer", {{"db", "the results store's file"}});
  auto refusal = [&](Aliased e) -> std::string {
    try {
      r.add(std::move(e));
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "(added)";
  };
  EXPECT_EQ(refusal({"db", {}}), "no output writer may be named 'db': the results store's file");
  EXPECT_EQ(refusal({"store", {"db"}}), "no output writer may be named 'db': the results store's file");
  EXPECT_EQ(refusal({"csv", {}}), "(added)");
  EXPECT_EQ(refusal({"csv", {}}), "an output writer named 'csv' is registered already");
  EXPECT_EQ(r.names(), (std::vector<std::string>{"csv"}));
}

// The seed providers' registry keeps the origins that are no provider's:
// the search's and the default config's.
TEST(Registry, NoSeedProviderTakesTheSearchsOrTheDefaultsOrigin) {
  for (const char* name : {"search", "default"}) {
    SeedProviderInfo info{name, "", [](const Spec&) -> std::unique_ptr<SeedProvider> { return nullptr; }};
    EXPECT_THROW(seed_providers().add(std::move(info)), std::invalid_argument) << name;
    EXPECT_EQ(seed_providers().find(name), nullptr) << name;
  }
  EXPECT_THROW(writers().add({"db", "", true, [](const TuneReport&, const OutputContext& c) { return c.out_dir; },
                              nullptr, [](const TuneReport&, std::ostream&) {}}),
               std::invalid_argument);
}

// A strategy whose declared options could not work is refused when added,
// not when first used (Options::integer() on a real default would throw
// deep inside a tune); so is a name that no list can hold.
TEST(Registry, AStrategyWithABadOptionDeclarationOrNameIsRefusedWhenAdded) {
  auto refusal = [](std::string name, std::vector<OptionSpec> options) -> std::string {
    StrategyInfo info;
    info.name = std::move(name);
    info.options = std::move(options);
    info.make = [](const StrategyContext&) -> std::unique_ptr<Strategy> { return nullptr; };
    try {
      strategies().add(std::move(info));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(added)";
  };
  using T = OptionSpec::Type;
  EXPECT_EQ(refusal("mine", {{"k", T::integer, Value(1.5), "", 0, 10}}),
            "the strategy 'mine': option 'k': its default 1.5 is not integer in [0, 10]");
  EXPECT_EQ(refusal("mine", {{"k", T::integer, Value(std::int64_t{11}), "", 0, 10}}),
            "the strategy 'mine': option 'k': its default 11 is not integer in [0, 10]");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(refusal("mine", {{"k", T::text, Value("b"), "", -kInf, kInf, {"a", "c"}}}),
            "the strategy 'mine': option 'k': its default 'b' is not one of a, c");
  // What would be ignored, or could never be written, is refused too.
  EXPECT_EQ(refusal("mine", {{"k", T::integer, Value(std::int64_t{1}), "", -kInf, kInf, {"a", "b"}}}),
            "the strategy 'mine': option 'k': choices on an option of type integer, which only text has");
  EXPECT_EQ(refusal("mine", {{"k", T::text, Value("z"), "", 0, 1}}),
            "the strategy 'mine': option 'k': bounds on an option of type text, which only numbers have");
  EXPECT_EQ(refusal("mine", {{"k", T::real, Value(1.0), "", std::nan(""), 3}}),
            "the strategy 'mine': option 'k': a bound is not a number");
  EXPECT_EQ(refusal("mine", {{"k", T::real, Value(kInf), ""}}),
            "the strategy 'mine': option 'k': its default inf is not finite");
  EXPECT_EQ(refusal("mine", {{"a=b", T::real, Value(1.0), ""}}),
            "the strategy 'mine': option 'a=b': a name cannot hold '=', ':', ',' or white space (--option "
            "NAME=VALUE)");
  {
    StrategyInfo info;
    info.name = "mine";
    info.make = [](const StrategyContext&) -> std::unique_ptr<Strategy> { return nullptr; };
    info.options = {{"population", T::integer, Value(std::int64_t{4}), ""}};
    info.kernel_tuner_options = {{"popsize", "populaton"}};
    EXPECT_EQ(info.problem(), "Kernel Tuner's popsize is said to be its option 'populaton', which it does not declare");
  }
  EXPECT_EQ(refusal("mine", {{"k", T::boolean, Value(std::int64_t{2}), ""}}),
            "the strategy 'mine': option 'k': its default 2 is not true or false");
  EXPECT_EQ(refusal("mine", {{"k", T::real, Value(0.5), ""}, {"k", T::real, Value(0.5), ""}}),
            "the strategy 'mine': option 'k' is declared twice");
  EXPECT_EQ(refusal("my strategy", {}),
            "a strategy may not be named 'my strategy': a name is one word of a list (--output csv,json), with no "
            "space or comma");
  EXPECT_EQ(refusal("a,b", {}).substr(0, 33), "a strategy may not be named 'a,b'");
  EXPECT_EQ(strategies().find("mine"), nullptr);
  // Every built-in one was added through the same checks.
  EXPECT_EQ(refusal("mine", {{"k", T::real, Value(std::int64_t{1}), "", 0, 1}}), "(added)");
  strategies().remove("mine");
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
  // One Kernel Tuner has and tunekit does not: asked for, it is named as such.
  EXPECT_EQ(strategies().find("firefly_algorithm"), nullptr);
  const std::string m = message_of(strategies(), "firefly_algorithm");
  EXPECT_NE(m.find("; Kernel Tuner's firefly_algorithm has no counterpart here"), std::string::npos) << m;
  // A plugin may still take the name: then it is found.
  Registry<Plain> r("writer");
  r.add_foreign("md", "Kernel Tuner writes no Markdown");
  EXPECT_NE(message_of(r, "md").find("; Kernel Tuner writes no Markdown"), std::string::npos) << message_of(r, "md");
  r.add({"md"});
  EXPECT_NE(r.find("md"), nullptr);
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

// A backend that serves a language (or claims a source ending) that one
// registered before it serves would never be chosen: the first one wins.
TEST(Registry, RefusesABackendThatAnEarlierOneWouldHide) {
  auto message = [](BackendInfo b) {
    b.make = [](const BackendOptions&) -> std::unique_ptr<Backend> { return nullptr; };
    b.list_devices = [] { return DeviceListing{}; };
    try {
      backends().add(std::move(b));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    backends().remove("mine");
    return std::string("(added)");
  };
  BackendInfo mine;
  mine.name = "mine";
  mine.languages = {"mylang", "c++"};
  EXPECT_EQ(message(mine),
            "the backend 'mine' serves kernel language 'c++', as the backend 'cpu' does, which would hide it");
  mine.languages = {"mylang"};
  mine.source_endings = {{".cu", "mylang"}};
  EXPECT_EQ(message(mine),
            "the backend 'mine' claims sources ending in '.cu', as the backend 'cuda' does, which would hide it");
  mine.source_endings = {{".my", "mylang"}};
  EXPECT_EQ(message(mine), "(added)");
  EXPECT_EQ(backends().find("mine"), nullptr);
}

// A text option takes what was written: "007" and "1.50" read as numbers
// too, and "true" as a boolean, but none of them is that here.
TEST(Registry, ATextOptionTakesItsValueAsWritten) {
  const std::vector<OptionSpec> specs = {{"label", OptionSpec::Type::text, Value("x"), ""}};
  for (const std::string text : {"007", "1.50", "true", "1e3", "0x1F"}) {
    const Options o = Options::resolve("test", specs, {parse_option_assignment("label=" + text, {"--option"})});
    EXPECT_EQ(o.text("label"), text);
  }
}
