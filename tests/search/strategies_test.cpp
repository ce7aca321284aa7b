#include <gtest/gtest.h>

#include <set>

#include "tunekit/strategy.hpp"

using namespace tunekit;

namespace {
Space small_space() {
  return Space({{"a", {1, 2, 3, 4}, {}}, {"b", {1, 2, 4, 8}, {}}}, {Expression::parse("a * b <= 8")});
}
std::vector<Config> drain(Strategy& s, std::size_t step) {
  std::vector<Config> all;
  for (auto batch = s.next(step); !batch.empty(); batch = s.next(step))
    all.insert(all.end(), batch.begin(), batch.end());
  return all;
}
}  // namespace

TEST(Exhaustive, EveryValidConfigOnceInOrder) {
  Space space = small_space();
  auto s = make_strategy("exhaustive", space, 1, std::nullopt);
  EXPECT_EQ(s->planned(), space.count());
  auto all = drain(*s, 3);
  ASSERT_EQ(all.size(), space.count());
  EXPECT_EQ(all.front().str(), "{a: 1, b: 1}");
  for (const auto& c : all) EXPECT_TRUE(space.contains(c));
}

// More valid configs than 64 bits count (10^20): a budget still works with
// the default strategy and with exhaustive, which had no rank to go by.
TEST(Exhaustive, ASpaceBeyondSixtyFourBitsIsWalkedUnderABudget) {
  std::vector<Value> values;
  for (int v = 1; v <= 10000; ++v) values.emplace_back(v);
  Space space({{"a", values, {}}, {"b", values, {}}, {"c", values, {}}, {"d", values, {}}, {"e", values, {}}}, {});
  ASSERT_EQ(space.count(), UINT64_MAX);  // saturated
  auto exhaustive = make_strategy("exhaustive", space, 1, 3);
  const auto first = exhaustive->next(3);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[2].str(), "{a: 1, b: 1, c: 1, d: 1, e: 3}");
  auto chosen = make_strategy("auto", space, 1, 5);
  EXPECT_EQ(chosen->describe().find("random"), 0u) << chosen->describe();
  std::set<std::string> keys;
  for (const auto& c : chosen->next(5)) {
    EXPECT_TRUE(space.contains(c)) << c.str();
    keys.insert(c.key());
  }
  EXPECT_EQ(keys.size(), 5u);
}

TEST(Random, SamplesWithoutReplacementAndIsReproducible) {
  Space space = small_space();
  auto a = drain(*make_strategy("random", space, 42, std::nullopt), 5);
  auto b = drain(*make_strategy("random", space, 42, std::nullopt), 2);
  auto c = drain(*make_strategy("random", space, 7, std::nullopt), 5);
  ASSERT_EQ(a.size(), space.count());
  std::set<std::string> keys;
  for (const auto& x : a) keys.insert(x.key());
  EXPECT_EQ(keys.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].key(), b[i].key());
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) differs = differs || a[i].key() != c[i].key();
  EXPECT_TRUE(differs);
}

TEST(Random, FirstPickIsRoughlyUniform) {
  Space space = small_space();
  const auto n = space.count();
  std::map<std::string, int> hits;
  const int trials = 4000;
  for (int seed = 0; seed < trials; ++seed)
    hits[make_strategy("random", space, seed, std::nullopt)->next(1).at(0).key()]++;
  ASSERT_EQ(hits.size(), n);
  // Chi-square with n-1 degrees of freedom; 40 is far beyond the 99.9% point for n <= 12.
  double chi2 = 0, expected = double(trials) / double(n);
  for (const auto& [k, h] : hits) chi2 += (h - expected) * (h - expected) / expected;
  EXPECT_LT(chi2, 40.0);
}

TEST(List, KeepsOrderAndInvalidEntries) {
  std::vector<Config> list{Config({{"a", 3}, {"b", 8}}), Config({{"a", 1}, {"b", 1}})};
  auto s = make_list(list);
  auto all = drain(*s, 10);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].str(), "{a: 3, b: 8}");
}

namespace {
std::size_t parameters_apart(const Config& a, const Config& b) {
  std::size_t d = 0;
  for (const auto& [name, value] : a) d += !(b.at(name) == value);
  return d;
}
}  // namespace

// `local` at a local optimum (by default) starts the next descent at a
// random config and follows that descent's own improvements although they
// are slower than the fastest config, so it runs to its own optimum.
TEST(Local, ARestartedDescentFollowsItsOwnImprovements) {
  const Space space({{"a", {0, 1, 2, 3, 4}, {}}, {"b", {0, 1, 2, 3, 4}, {}}, {"c", {0, 1, 2, 3, 4}, {}}}, {});
  const Config origin({{"a", 0}, {"b", 0}, {"c", 0}});
  auto took = [](double us) {
    Outcome o;
    o.cost = us;
    return o;
  };
  for (const std::uint64_t seed : {1, 2, 3, 4, 5}) {
    auto s = make_strategy("local", space, seed, 125);
    s->observe(origin, took(1.0));
    // Every neighbour of the origin is slower: it is a local optimum.
    for (std::size_t i = 0; i < 12; ++i) {
      auto next = s->next(1);
      ASSERT_EQ(next.size(), 1u);
      ASSERT_EQ(parameters_apart(origin, next.front()), 1u) << next.front().str();
      s->observe(next.front(), took(5.0));
    }
    const Config start = s->next(1).at(0);
    s->observe(start, took(3.0));
    const Config better = s->next(1).at(0);
    ASSERT_EQ(parameters_apart(start, better), 1u) << better.str();
    s->observe(better, took(2.0));  // faster than the start, slower than the origin
    // The descent moved to `better`: what follows are its neighbours, some
    // of them two parameters from the start.
    std::size_t two_apart = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      auto next = s->next(1);
      ASSERT_EQ(next.size(), 1u);
      EXPECT_EQ(parameters_apart(better, next.front()), 1u) << next.front().str();
      two_apart += parameters_apart(start, next.front()) == 2;
      s->observe(next.front(), took(4.0));
    }
    EXPECT_GT(two_apart, 0u) << "seed " << seed;
  }
}

// A Kernel Tuner user's option names: the error says what stands for each
// here, or that nothing does and why.
TEST(StrategyOptions, KernelTunersNamesAreAnsweredWithTunekits) {
  struct Case {
    const char *strategy, *option, *expect;
  };
  for (const Case& c :
       {Case{"genetic_algorithm", "popsize=30", "Kernel Tuner's popsize is 'population' here"},
        Case{"simulated_annealing", "T=1.0", "Kernel Tuner's T is 't_start' here"},
        Case{"simulated_annealing", "alpha=0.99", "Kernel Tuner's alpha has no counterpart here: the temperature"},
        Case{"simulated_annealing", "neighbor=Hamming", "'neighbourhood' here: hamming or adjacent"},
        Case{"bayes_opt", "popsize=20", "Kernel Tuner's popsize is 'initial' here"},
        Case{"diff_evo", "popsize=10", "Kernel Tuner's popsize is 'population' here"},
        Case{"diff_evo", "CR=0.9", "Kernel Tuner's CR is 'crossover' here"},
        Case{"diff_evo", "F=0.5", "Kernel Tuner's F is 'f' here"},
        Case{"greedy_ils", "random_walk=0.3", "Kernel Tuner's random_walk is 'kick' here"},
        Case{"auto", "maxiter=100", "maxiter bounds its iterations; here the budget bounds a search"},
        Case{"random_sample", "fraction=0.1", "--max-fraction"},
        Case{"genetic", "constraint_aware=true", "every strategy proposes valid configs only"}}) {
    try {
      make_strategy(c.strategy, small_space(), 1, 4, {parse_option_assignment(c.option, {"test"})});
      ADD_FAILURE() << c.strategy << " accepted " << c.option;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << c.strategy << ": " << e.what();
    }
  }
}

// Kernel Tuner's `restart` of greedy_ils, greedy_mls and mls chooses first
// or best improvement; local's is a random restart or a kick at a local
// optimum. Under Kernel Tuner's names the user means Kernel Tuner's, and is
// told what each means rather than given local's; under 'local' it is
// local's.
TEST(StrategyOptions, KernelTunersRestartIsNotTakenForLocals) {
  for (const char* name : {"greedy_ils", "greedy_mls", "mls"})
    for (const char* option : {"restart=false", "restart=true"}) {
      try {
        make_strategy(name, small_space(), 1, 4, {parse_option_assignment(option, {"--option"})});
        ADD_FAILURE() << name << " took " << option;
      } catch (const InputError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(std::string("option 'restart' of strategy '") + name +
                         "' is Kernel Tuner's, which means another thing than tunekit's 'restart': in Kernel "
                         "Tuner, it chooses a descent's moves: true, the first neighbour that improves"),
                  std::string::npos)
            << m;
        EXPECT_NE(m.find("tunekit's 'restart', of strategy 'local': at a local optimum, start the next descent at "
                         "a random config; false: at the end of a kick from the fastest (name the strategy 'local' "
                         "to set it)"),
                  std::string::npos)
            << m;
      }
    }
  const Space space = small_space();  // outlives the strategy, which keeps it
  auto local = make_strategy("local", space, 1, 4, {parse_option_assignment("restart=false", {"--option"})});
  EXPECT_FALSE(local->next(1).empty());
  // Checked where a spec or a flag gives the options, by the name given.
  EXPECT_THROW(strategy_options(strategies().get("mls"), {parse_option_assignment("restart=false", {"x"})}, "mls"),
               InputError);
  EXPECT_NO_THROW(strategy_options(strategies().get("mls"), {parse_option_assignment("restart=false", {"x"})}));
}

// Every strategy Kernel Tuner 1.5 has (its interface.py's
// _STRATEGY_IMPORTS) is either taken, as the name of the strategy here of
// the same algorithm, or refused with a message that says it has no
// counterpart here: none is only "unknown".
TEST(Strategies, EveryKernelTuner15StrategyIsTakenOrSaidToHaveNoCounterpart) {
  for (const char* name : {"brute_force",
                           "random_sample",
                           "minimize",
                           "basinhopping",
                           "diff_evo",
                           "genetic_algorithm",
                           "greedy_mls",
                           "ordered_greedy_mls",
                           "greedy_ils",
                           "dual_annealing",
                           "mls",
                           "pso",
                           "simulated_annealing",
                           "skopt",
                           "firefly_algorithm",
                           "bayes_opt",
                           "pyatf_strategies",
                           "hybrid_vndx",
                           "adaptive_tabu_greywolf",
                           "nsga2",
                           "nsga3"}) {
    if (strategies().find(name)) continue;
    const std::string message = strategies().unknown_name_message(name);
    EXPECT_NE(message.find(std::string("; Kernel Tuner's ") + name + " has no counterpart here"), std::string::npos)
        << message;
  }
  // Its searches of several objectives say why.
  EXPECT_NE(strategies().unknown_name_message("nsga2").find("searches several objectives at once"), std::string::npos);
}

// Each counterpart named is an option the strategy declares, and a Kernel
// Tuner name that is one of its own is one it answers to Kernel Tuner's
// names for (else its message could never be shown).
TEST(StrategyOptions, KernelTunersNamesPointAtDeclaredOptions) {
  for (const StrategyInfo& s : strategies().entries()) {
    auto declared = [&](const std::string& name) {
      for (const OptionSpec& o : s.options)
        if (o.name == name) return true;
      return false;
    };
    for (const ForeignOption& f : s.kernel_tuner_options) {
      // One named as a declared option shows under Kernel Tuner's names.
      if (declared(f.name)) EXPECT_FALSE(s.aliases.empty()) << s.name << " declares " << f.name;
      if (!f.here.empty()) EXPECT_TRUE(declared(f.here)) << s.name << ": " << f.name << " -> " << f.here;
      if (f.here.empty()) EXPECT_FALSE(f.note.empty()) << s.name << ": " << f.name << " has neither";
    }
  }
}

// A space too large to index (its index would outgrow the budget): no
// strategy counts or enumerates it before proposing, since without an index
// either is a search of all 10^12 combinations (the tune stalled in auto's
// count, and random put every valid config in memory). Were either done
// here, this test would not end.
TEST(Random, ASpaceWithoutAnIndexIsDrawnWithoutCountingOrEnumeratingIt) {
  std::vector<Parameter> params;
  std::string sum;
  std::int64_t weight = 1;
  for (char name = 'A'; name <= 'L'; ++name, weight *= 10) {
    Parameter p{std::string(1, name), {}, {}};
    for (int v = 0; v <= 9; ++v) p.values.emplace_back(v);
    params.push_back(std::move(p));
    sum += (sum.empty() ? "" : " + ") + std::to_string(weight) + " * " + std::string(1, name);
  }
  const auto space_of = [&](const std::string& constraint) {
    Space s(params, {Expression::parse(constraint)});
    s.set_index_budget(0);
    return s;
  };
  const Space dense = space_of("(" + sum + ") % 7 != 3");
  ASSERT_FALSE(dense.indexable());
  for (const char* name : {"random", "auto", "surrogate", "genetic"}) {
    auto s = make_strategy(name, dense, 7, 20);
    const auto got = s->next(20);
    ASSERT_EQ(got.size(), 20u) << name;
    std::set<std::string> keys;
    for (const auto& c : got) {
      EXPECT_TRUE(dense.contains(c)) << name << ": " << c.str();
      keys.insert(c.key());
    }
    EXPECT_EQ(keys.size(), 20u) << name;
  }
  auto a = make_strategy("random", dense, 7, 20), b = make_strategy("random", dense, 7, 20);
  EXPECT_EQ(a->next(5), b->next(5));  // a seed gives the same draws
  EXPECT_FALSE(a->planned());
  EXPECT_FALSE(make_strategy("exhaustive", dense, 1, 20)->planned());
  EXPECT_EQ(make_strategy("exhaustive", dense, 1, 20)->next(2).size(), 2u);

  // Valid configs too rare to draw (1 in 10^5): the enumeration is walked.
  const Space sparse = space_of("A == 0 and B == 0 and C == 0 and D == 0 and E == 0");
  auto r = make_strategy("random", sparse, 3, 10);
  std::set<std::string> keys;
  for (int round = 0; round < 3; ++round)
    for (const auto& c : r->next(3)) {
      EXPECT_TRUE(sparse.contains(c)) << c.str();
      keys.insert(c.key());
    }
  EXPECT_EQ(keys.size(), 9u);
}
