#pragma once
// A named set of plugins: search strategies, backends, output writers, seed
// providers. Each kind has one process-wide registry (strategies(),
// backends(), writers(), seed_providers());
// the built-in entries are added when it is first used, and a program or a
// test adds its own with add() before it parses a spec or a command line.
// Spec loading, the command line, the worker and `tunekit plugins` all read
// the same registry, so a name is defined in exactly one place.
#include <concepts>
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/error.hpp"

namespace tunekit {

// The message for a name no entry has: "unknown strategy 'genetc'; did you
// mean 'genetic'? (known: exhaustive, genetic, random)"; with an `owner`,
// "unknown option 'mutaton' of strategy 'genetic'; did you mean ...".
// `aliases`, other spellings as {alias, the name it stands for}, are offered
// too and listed after the names.
std::string unknown_name_message(std::string_view kind, std::string_view name, const std::vector<std::string>& known,
                                 std::string_view owner = {},
                                 const std::vector<std::pair<std::string, std::string>>& aliases = {});

// An entry may also answer to other names (`std::vector<std::string>
// aliases`): a strategy to Kernel Tuner's name for the same algorithm, so a
// spec or command line written for Kernel Tuner works unchanged.
template <typename Entry>
concept HasAliases = requires(const Entry& e) {
  { e.aliases } -> std::convertible_to<const std::vector<std::string>&>;
};

// An entry may say which of its required parts it lacks (`std::string
// missing() const`: "" when complete), so that add() refuses a plugin that
// would fail only when used.
template <typename Entry>
concept SaysWhatItMisses = requires(const Entry& e) {
  { e.missing() } -> std::convertible_to<std::string>;
};

// An entry may say what else is wrong with it (`std::string problem()
// const`: "" when nothing): a strategy's option whose default is no value of
// it.
template <typename Entry>
concept SaysWhatIsWrong = requires(const Entry& e) {
  { e.problem() } -> std::convertible_to<std::string>;
};

// An entry may claim more than its names (a backend, its kernel languages)
// and say where it clashes with another (`std::string clash(const Entry&)
// const`: "" when it does not), so that add() refuses a plugin that the
// one before it would hide.
template <typename Entry>
concept SaysWhereItClashes = requires(const Entry& e) {
  { e.clash(e) } -> std::convertible_to<std::string>;
};

// `Entry` has a `std::string name`. Entries keep their address once added,
// so a pointer from find() stays valid. Registration is not synchronised:
// add entries before threads use the registry.
template <typename Entry>
class Registry {
 public:
  // A name taken by something other than an entry, and what takes it.
  struct Reserved {
    std::string name;
    std::string why;
  };

  // `reserved`: names no entry may take, where the name already means
  // something else (a seed provider named 'default' would file its trials
  // under the default config's origin).
  explicit Registry(std::string kind, std::vector<Reserved> reserved = {})
      : kind_(std::move(kind)), reserved_(std::move(reserved)) {}
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Throws std::invalid_argument when the name or an alias is empty, taken,
  // reserved or not writable as one word of a list (a space or a comma:
  // `--output csv,json`), or when the entry lacks a part it needs, says
  // what else is wrong with it, or clashes with an entry added before it.
  Entry& add(Entry entry) {
    const std::string a_kind = (is_vowel(kind_.front()) ? "an " : "a ") + kind_;
    if (entry.name.empty()) throw std::invalid_argument(a_kind + " needs a name");
    if constexpr (SaysWhatItMisses<Entry>)
      if (const std::string missing = entry.missing(); !missing.empty())
        throw std::invalid_argument("the " + kind_ + " '" + entry.name + "' has no " + missing);
    if constexpr (SaysWhatIsWrong<Entry>)
      if (const std::string problem = entry.problem(); !problem.empty())
        throw std::invalid_argument("the " + kind_ + " '" + entry.name + "': " + problem);
    std::vector<std::string> spellings{entry.name};
    if constexpr (HasAliases<Entry>) spellings.insert(spellings.end(), entry.aliases.begin(), entry.aliases.end());
    for (const std::string& s : spellings) {
      if (s.empty()) throw std::invalid_argument(a_kind + "'s alias is empty ('" + entry.name + "')");
      if (s.find_first_of(" \t\n,") != std::string::npos)
        throw std::invalid_argument(a_kind + " may not be named '" + s +
                                    "': a name is one word of a list (--output csv,json), with no space or comma");
      if (find(s)) throw std::invalid_argument(a_kind + " named '" + s + "' is registered already");
      for (const Reserved& r : reserved_)
        if (r.name == s) throw std::invalid_argument("no " + kind_ + " may be named '" + s + "': " + r.why);
    }
    if constexpr (SaysWhereItClashes<Entry>)
      for (const Entry& other : entries_)
        if (const std::string clash = entry.clash(other); !clash.empty())
          throw std::invalid_argument("the " + kind_ + " '" + entry.name + "' " + clash + ", as the " + kind_ + " '" +
                                      other.name + "' does, which would hide it");
    return entries_.emplace_back(std::move(entry));
  }
  // A name users bring from another tool (Kernel Tuner's 'pso'), and what
  // to tell them when no entry takes it: get() adds `note` to its error.
  void add_foreign(std::string name, std::string note) { foreign_.push_back({std::move(name), std::move(note)}); }
  // Removes an entry (tests that add a toy one clean up with it).
  bool remove(std::string_view name) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->name == name) {
        entries_.erase(it);
        return true;
      }
    return false;
  }

  // By name or alias.
  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) return &e;
      if constexpr (HasAliases<Entry>)
        for (const std::string& a : e.aliases)
          if (a == name) return &e;
    }
    return nullptr;
  }
  // The entry, or InputError at `where` naming the known ones.
  const Entry& get(std::string_view name, const SourceLocation& where = {}) const {
    if (const Entry* e = find(name)) return *e;
    throw InputError(where, unknown_name_message(name));
  }
  // The message get() throws for a name no entry has.
  std::string unknown_name_message(std::string_view name) const {
    std::vector<std::pair<std::string, std::string>> aliases;
    if constexpr (HasAliases<Entry>)
      for (const Entry& e : entries_)
        for (const std::string& a : e.aliases) aliases.emplace_back(a, e.name);
    std::string message = tunekit::unknown_name_message(kind_, name, names(), {}, aliases);
    for (const Reserved& f : foreign_)
      if (f.name == name) message += "; " + f.why;
    return message;
  }

  // The entries' own names, without aliases.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }
  const std::deque<Entry>& entries() const { return entries_; }
  const std::string& kind() const { return kind_; }

 private:
  static bool is_vowel(char c) { return std::string_view("aeiou").find(c) != std::string_view::npos; }

  std::string kind_;
  std::vector<Reserved> reserved_;
  std::vector<Reserved> foreign_;  // a name from another tool, and what stands for it
  std::deque<Entry> entries_;
};

}  // namespace tunekit
