// Kernel Tuner T1 and neutral JSON search spaces, and the evaluator for T1's
// Python list expressions (`Values`).
#include "tunekit/t1.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/detail/distinct_values.hpp"
#include "core/detail/text.hpp"
#include "spec/detail/t1_keys.hpp"
#include "spec/detail/text.hpp"
#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

namespace {

namespace fs = std::filesystem;
using spec_detail::kT1ArgumentKeys;
using spec_detail::kT1AttributeKeys;
using spec_detail::kT1BudgetKeys;
using spec_detail::kT1DeviceKeys;
using spec_detail::kT1KernelKeys;
using spec_detail::kT1SearchKeys;
using spec_detail::kT1Sections;

// Longest list a Values expression may produce, or build on the way.
constexpr std::size_t kMaxListLength = 10'000'000;
// Elements it may make in all, counting the lists it builds on the way (an
// inner loop's list is built once per pass of the outer one): a bound on
// the time it takes, a few seconds at most.
constexpr std::size_t kMaxListSteps = 20'000'000;
// How deeply its lists may nest (brackets, slices of slices, loops of a
// comprehension): parsing and evaluating recurse that deep.
constexpr int kMaxListDepth = 200;

// ------------------------------------------------------------ list expressions

struct ListExpr;
using ListPtr = std::unique_ptr<ListExpr>;

struct Clause {
  std::string var;
  ListPtr iterable;
  std::vector<Expression> filters;
};

// The Python type of a list expression's value. Python concatenates and
// repeats lists and tuples alone, each with its own kind: a Values text that
// mixes them would not load in Kernel Tuner.
enum class Seq { list, tuple, range, generator };

const char* seq_name(Seq s) {
  switch (s) {
    case Seq::list:
      return "list";
    case Seq::tuple:
      return "tuple";
    case Seq::range:
      return "range";
    case Seq::generator:
      return "generator";
  }
  return "?";
}

struct ListExpr {
  enum class Kind { literal, range, comprehension, concat, slice, repeat, sorted } kind = Kind::literal;
  Seq seq = Seq::list;
  int pos = 0;                    // offset in the text, for messages
  std::vector<Expression> items;  // literal: elements; range: arguments; repeat: the count
  std::vector<bool> present;      // slice: which of start, stop, step are given (items holds them)
  Expression element;             // comprehension
  std::vector<Clause> clauses;    // comprehension
  std::vector<ListPtr> parts;     // concat: operands; slice, repeat, sorted: the list
  bool reverse = false;           // sorted(..., reverse=True)
  int depth = 1;                  // of the tree below it, itself included
};

class ListParser {
 public:
  ListParser(std::string_view text, const SourceLocation& where) : text_(text), where_(where) {}

  ListPtr parse() {
    ListPtr e = parse_sum();
    skip();
    if (pos_ != text_.size()) fail(pos_, "unexpected '" + std::string(text_.substr(pos_, 10)) + "' after the list");
    return e;
  }

  [[noreturn]] void fail(std::size_t at, const std::string& message) const {
    throw InputError(where_.shifted(static_cast<int>(at)),
                     message + " in Values expression '" + std::string(text_) + "'");
  }

 private:
  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() {
    skip();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(pos_, std::string("expected '") + c + "'");
    ++pos_;
  }
  // The identifier at pos_ (without consuming it).
  std::string_view word() {
    skip();
    std::size_t e = pos_;
    if (e < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[e])) || text_[e] == '_'))
      while (e < text_.size() && detail::identifier_char(text_[e])) ++e;
    return text_.substr(pos_, e - pos_);
  }
  bool keyword(std::string_view kw) {
    if (word() != kw) return false;
    pos_ += kw.size();
    return true;
  }

  // A scalar expression from pos_ up to a ',' ')' ']' (or '+' if
  // stop_plus, or the keywords for / if) outside brackets and quotes.
  Expression scalar(bool stop_for, bool stop_if, bool stop_plus = false) {
    skip();
    const std::size_t begin = pos_;
    int depth = 0;
    char quote = 0;
    std::size_t i = pos_;
    for (; i < text_.size(); ++i) {
      char c = text_[i];
      if (quote) {
        if (c == '\\') ++i;
        else if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
        continue;
      }
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
        continue;
      }
      if (depth > 0) continue;
      if (c == ',' || (stop_plus && c == '+')) break;
      if ((stop_for || stop_if) && std::isalpha(static_cast<unsigned char>(c)) &&
          (i == 0 || !detail::identifier_char(text_[i - 1]))) {
        std::size_t e = i;
        while (e < text_.size() && detail::identifier_char(text_[e])) ++e;
        std::string_view w = text_.substr(i, e - i);
        if ((stop_for && w == "for") || (stop_if && w == "if")) break;
        i = e - 1;
      }
    }
    std::size_t end = i;
    while (end > begin && std::isspace(static_cast<unsigned char>(text_[end - 1]))) --end;
    if (end == begin) fail(begin, "expected an expression");
    pos_ = i;
    return Expression::parse(text_.substr(begin, end - begin), where_.shifted(static_cast<int>(begin)));
  }

  // Each nested list parses through here: the one place to bound how deep.
  struct Nesting {
    ListParser& p;
    Nesting(ListParser& parser, std::size_t at) : p(parser) {
      if (++p.nesting_ > kMaxListDepth) p.fail(at, "lists nested too deeply");
    }
    ~Nesting() { --p.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
  };

  // A node over `parts`, as deep as the deepest of them and one more.
  ListPtr over(ListPtr node) {
    for (const auto& part : node->parts) node->depth = std::max(node->depth, part->depth + 1);
    for (const auto& clause : node->clauses) node->depth = std::max(node->depth, clause.iterable->depth + 1);
    if (node->depth > kMaxListDepth) fail(static_cast<std::size_t>(node->pos), "lists nested too deeply");
    return node;
  }

  // Python's precedence: a repetition (*) binds tighter than a
  // concatenation (+), so [1] + [2] * 0 is [1].
  ListPtr parse_sum() {
    Nesting guard(*this, pos_);
    ListPtr left = parse_product();
    while (peek() == '+') {
      const std::size_t at = pos_++;
      // a + b + c is one concatenation of three: as deep as its deepest operand.
      if (left->kind != ListExpr::Kind::concat) {
        auto node = std::make_unique<ListExpr>();
        node->kind = ListExpr::Kind::concat;
        node->seq = left->seq;
        node->pos = static_cast<int>(pos_);
        node->parts.push_back(std::move(left));
        left = std::move(node);
      }
      ListPtr right = parse_product();
      if (left->seq == Seq::range || left->seq == Seq::generator)
        fail(at, fmt::format("unsupported operand type(s) for +: '{}' and '{}'", seq_name(left->seq),
                             seq_name(right->seq)));
      if (right->seq != left->seq)
        fail(at,
             fmt::format("can only concatenate {0} (not \"{1}\") to {0}", seq_name(left->seq), seq_name(right->seq)));
      left->parts.push_back(std::move(right));
      left = over(std::move(left));
    }
    return left;
  }

  // A repetition: LIST * COUNT, COUNT * LIST, or a chain of them; else a
  // list alone.
  ListPtr parse_product() {
    std::optional<Expression> leading;  // COUNT of COUNT * LIST
    std::size_t at = pos_;
    if (const std::size_t star = leading_count_end(); star != std::string_view::npos) {
      skip();
      at = pos_;
      leading = Expression::parse(text_.substr(pos_, star - pos_), where_.shifted(static_cast<int>(pos_)));
      pos_ = star + 1;
    }
    ListPtr left = parse_postfix();
    if (leading) left = repeat(std::move(left), std::move(*leading), at, true);
    while (peek() == '*') {
      at = pos_++;
      left = repeat(std::move(left), scalar(true, true, true), at, false);
    }
    return left;
  }

  ListPtr repeat(ListPtr list, Expression count, std::size_t at, bool count_first) {
    if (list->seq == Seq::range || list->seq == Seq::generator)
      fail(at, fmt::format("unsupported operand type(s) for *: '{}' and '{}'",
                           count_first ? "int" : seq_name(list->seq), count_first ? seq_name(list->seq) : "int"));
    auto node = std::make_unique<ListExpr>();
    node->kind = ListExpr::Kind::repeat;
    node->seq = list->seq;
    node->pos = static_cast<int>(at);
    node->parts.push_back(std::move(list));
    node->items.push_back(std::move(count));
    return over(std::move(node));
  }

  // Whether a list starts at pos_ (skipping spaces).
  bool list_starts() {
    const char c = peek();
    const std::string_view w = word();
    return c == '[' || c == '(' || w == "range" || w == "list" || w == "tuple" || w == "sorted";
  }

  // Where the '*' of COUNT * LIST is, when the text at pos_ starts so: the
  // first '*' (not of '**') outside brackets and quotes that a list
  // follows, before the end of the operand (',', '+', a closing bracket,
  // 'for' or 'if'). npos when none is, as for a list first.
  std::size_t leading_count_end() {
    skip();
    if (pos_ >= text_.size() || text_[pos_] == '[') return std::string_view::npos;
    if (text_[pos_] != '(' && list_starts()) return std::string_view::npos;
    const std::size_t begin = pos_;
    int depth = 0;
    char quote = 0;
    std::size_t found = std::string_view::npos;
    for (std::size_t i = begin; i < text_.size() && found == std::string_view::npos; ++i) {
      const char c = text_[i];
      if (quote) {
        if (c == '\\') ++i;
        else if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"') quote = c;
      else if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c == ')' || c == ']' || c == '}') {
        if (depth-- == 0) break;
      } else if (depth > 0) {
        continue;
      } else if (c == ',' || c == '+') {
        break;
      } else if (std::isalpha(static_cast<unsigned char>(c)) &&
                 (i == begin || !detail::identifier_char(text_[i - 1]))) {
        std::size_t e = i;
        while (e < text_.size() && detail::identifier_char(text_[e])) ++e;
        const std::string_view w = text_.substr(i, e - i);
        if (w == "for" || w == "if") break;
        i = e - 1;
      } else if (c == '*' && i > begin && (i + 1 >= text_.size() || text_[i + 1] != '*') && text_[i - 1] != '*') {
        pos_ = i + 1;
        if (list_starts()) found = i;
      }
    }
    pos_ = begin;
    return found;
  }

  ListPtr parse_postfix() {
    ListPtr base = parse_atom();
    while (peek() == '[') {
      ++pos_;
      auto node = std::make_unique<ListExpr>();
      node->kind = ListExpr::Kind::slice;
      node->pos = static_cast<int>(pos_);
      node->items.resize(3);
      node->present.assign(3, false);
      std::size_t part = 0;
      bool colon = false;
      while (true) {
        char c = peek();
        if (c != ':' && c != ']') {
          node->present[part] = true;
          node->items[part] = slice_bound();
          c = peek();
        }
        if (c == ':' && part < 2) {
          colon = true;
          ++part;
          ++pos_;
          continue;
        }
        if (c == ']') break;
        fail(pos_, "expected ':' or ']' in a slice");
      }
      expect(']');
      if (!colon) fail(static_cast<std::size_t>(node->pos), "indexing gives a single value, not a list");
      if (base->seq == Seq::generator)
        fail(static_cast<std::size_t>(node->pos), "'generator' object is not subscriptable");
      node->seq = base->seq;
      node->parts.push_back(std::move(base));
      base = over(std::move(node));
    }
    return base;
  }

  Expression slice_bound() {
    skip();
    std::size_t begin = pos_, i = pos_;
    int depth = 0;
    for (; i < text_.size(); ++i) {
      char c = text_[i];
      if (c == '(' || c == '[') ++depth;
      else if (c == ')' || (c == ']' && depth > 0)) --depth;
      else if (depth == 0 && (c == ':' || c == ']')) break;
    }
    pos_ = i;
    return Expression::parse(text_.substr(begin, i - begin), where_.shifted(static_cast<int>(begin)));
  }

  ListPtr parse_atom() {
    char c = peek();
    const std::size_t at = pos_;
    if (c == '[') {
      ++pos_;
      return bracket(']', at);
    }
    if (c == '(') {
      ++pos_;
      // A parenthesised list expression, or a tuple literal.
      std::string_view w = word();
      if (peek() == '[' || peek() == '(' || w == "range" || w == "list" || w == "tuple" || w == "sorted") {
        std::size_t save = pos_;
        try {
          ListPtr inner = parse_sum();
          if (peek() == ')') {
            ++pos_;
            return inner;
          }
        } catch (const InputError&) {
        }
        pos_ = save;
      }
      return bracket(')', at);
    }
    std::string_view w = word();
    if (w == "range") {
      pos_ += w.size();
      expect('(');
      auto node = std::make_unique<ListExpr>();
      node->kind = ListExpr::Kind::range;
      node->seq = Seq::range;
      node->pos = static_cast<int>(at);
      while (true) {
        node->items.push_back(scalar(false, false));
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        break;
      }
      expect(')');
      if (node->items.size() > 3) fail(at, "range() takes at most 3 arguments");
      return node;
    }
    if (w == "list" || w == "tuple") {
      const Seq seq = w == "list" ? Seq::list : Seq::tuple;
      pos_ += w.size();
      expect('(');
      if (peek() == ')') {
        ++pos_;
        auto node = std::make_unique<ListExpr>();
        node->seq = seq;
        node->pos = static_cast<int>(at);
        return node;
      }
      ListPtr inner = parse_sum();
      expect(')');
      inner->seq = seq;
      return inner;
    }
    if (w == "sorted") {
      pos_ += w.size();
      expect('(');
      auto node = std::make_unique<ListExpr>();
      node->kind = ListExpr::Kind::sorted;
      node->pos = static_cast<int>(at);
      node->parts.push_back(parse_sum());
      if (peek() == ',') {
        ++pos_;
        if (!keyword("reverse")) fail(pos_, "sorted() takes only reverse=");
        expect('=');
        Expression r = scalar(false, false);
        node->reverse = r.evaluate(Bindings{}).truthy();
      }
      expect(')');
      return over(std::move(node));
    }
    fail(at, "expected a list: [...], (...), range(...), list(...) or sorted(...)");
  }

  // After an opening bracket: a literal or a comprehension.
  ListPtr bracket(char close, std::size_t at) {
    auto node = std::make_unique<ListExpr>();
    node->seq = close == ']' ? Seq::list : Seq::tuple;
    node->pos = static_cast<int>(at);
    if (peek() == close) {
      ++pos_;
      return node;
    }
    Expression first = scalar(true, false);
    if (word() == "for") {
      node->kind = ListExpr::Kind::comprehension;
      if (close == ')') node->seq = Seq::generator;
      node->element = std::move(first);
      while (keyword("for")) {
        Clause clause;
        std::string_view v = word();
        if (v.empty()) fail(pos_, "expected a loop variable after 'for'");
        clause.var = std::string(v);
        pos_ += v.size();
        if (!keyword("in")) fail(pos_, "expected 'in'");
        clause.iterable = parse_sum();
        while (keyword("if")) clause.filters.push_back(scalar(true, true));
        node->clauses.push_back(std::move(clause));
        if (node->clauses.size() > static_cast<std::size_t>(kMaxListDepth)) fail(at, "lists nested too deeply");
      }
      expect(close);
      return over(std::move(node));
    }
    node->items.push_back(std::move(first));
    while (peek() == ',') {
      ++pos_;
      if (peek() == close) break;
      node->items.push_back(scalar(false, false));
    }
    expect(close);
    return node;
  }

  std::string_view text_;
  SourceLocation where_;
  std::size_t pos_ = 0;
  int nesting_ = 0;  // parse_sum calls under way
};

class ListEvaluator {
 public:
  explicit ListEvaluator(const ListParser& parser) : parser_(parser) {}

  std::vector<Value> eval(const ListExpr& e, Bindings& env) {
    std::vector<Value> out;
    switch (e.kind) {
      case ListExpr::Kind::literal:
        for (const auto& item : e.items) push(out, item.evaluate(env), e);
        break;
      case ListExpr::Kind::range: {
        std::vector<std::int64_t> a;
        for (const auto& item : e.items) {
          Value v = item.evaluate(env);
          if (!v.is_int()) parser_.fail(static_cast<std::size_t>(e.pos), "range() needs integers, got " + v.repr());
          a.push_back(v.as_int());
        }
        std::int64_t start = 0, stop = 0, step = 1;
        if (a.size() == 1) stop = a[0];
        else start = a[0], stop = a[1];
        if (a.size() == 3) step = a[2];
        if (step == 0) parser_.fail(static_cast<std::size_t>(e.pos), "range() step must not be zero");
        for (std::int64_t x = start; step > 0 ? x < stop : x > stop; x += step) {
          push(out, Value(x), e);
          if ((step > 0 && x > INT64_MAX - step) || (step < 0 && x < INT64_MIN - step)) break;
        }
        break;
      }
      case ListExpr::Kind::comprehension:
        comprehend(e, 0, env, out);
        break;
      case ListExpr::Kind::concat:
        for (const auto& part : e.parts) {
          auto v = eval(*part, env);
          for (auto& x : v) push(out, std::move(x), e);
        }
        break;
      case ListExpr::Kind::repeat: {
        auto base = eval(*e.parts[0], env);
        Value n = e.items[0].evaluate(env);
        if (!n.is_int())
          parser_.fail(static_cast<std::size_t>(e.pos), "a list can only be repeated an integer number of times");
        for (std::int64_t k = 0; k < n.as_int(); ++k)
          for (const auto& x : base) push(out, x, e);
        break;
      }
      case ListExpr::Kind::slice:
        out = slice(e, eval(*e.parts[0], env), env);
        break;
      case ListExpr::Kind::sorted: {
        out = eval(*e.parts[0], env);
        bool numbers = std::all_of(out.begin(), out.end(), [](const Value& v) { return v.is_number(); });
        bool strings = std::all_of(out.begin(), out.end(), [](const Value& v) { return v.is_string(); });
        if (!numbers && !strings)
          parser_.fail(static_cast<std::size_t>(e.pos), "sorted() of a list of numbers and strings");
        std::stable_sort(out.begin(), out.end(), [&](const Value& a, const Value& b) {
          if (numbers) return e.reverse ? b.to_double() < a.to_double() : a.to_double() < b.to_double();
          return e.reverse ? b.as_string() < a.as_string() : a.as_string() < b.as_string();
        });
        break;
      }
    }
    return out;
  }

 private:
  void push(std::vector<Value>& out, Value v, const ListExpr& e) {
    if (out.size() >= kMaxListLength)
      parser_.fail(static_cast<std::size_t>(e.pos),
                   "the list has more than " + std::to_string(kMaxListLength) + " elements");
    if (++produced_ > kMaxListSteps)
      parser_.fail(static_cast<std::size_t>(e.pos),
                   "building the list makes more than " + std::to_string(kMaxListSteps) +
                       " elements, counting the lists it builds on the way (an inner loop's, once per pass)");
    out.push_back(std::move(v));
  }

  void comprehend(const ListExpr& e, std::size_t level, Bindings& env, std::vector<Value>& out) {
    if (level == e.clauses.size()) {
      push(out, e.element.evaluate(env), e);
      return;
    }
    const Clause& c = e.clauses[level];
    std::vector<Value> items = eval(*c.iterable, env);
    auto old = env.find(c.var);
    std::optional<Value> saved;
    if (old != env.end()) saved = old->second;
    for (const auto& x : items) {
      env[c.var] = x;
      bool keep = true;
      for (const auto& f : c.filters) keep = keep && f.evaluate(env).truthy();
      if (keep) comprehend(e, level + 1, env, out);
    }
    if (saved) env[c.var] = *saved;
    else env.erase(c.var);
  }

  std::vector<Value> slice(const ListExpr& e, std::vector<Value> base, Bindings& env) {
    auto bound = [&](int k) -> std::optional<std::int64_t> {
      if (!e.present[k]) return std::nullopt;
      Value v = e.items[k].evaluate(env);
      if (!v.is_int()) parser_.fail(static_cast<std::size_t>(e.pos), "slice indices must be integers");
      return v.as_int();
    };
    const auto n = static_cast<std::int64_t>(base.size());
    std::int64_t step = bound(2).value_or(1);
    if (step == 0) parser_.fail(static_cast<std::size_t>(e.pos), "slice step cannot be zero");
    // Python's PySlice_AdjustIndices.
    auto adjust = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
      if (!v) return dflt;
      std::int64_t x = *v;
      if (x < 0) {
        x += n;
        if (x < 0) x = step < 0 ? -1 : 0;
      } else if (x >= n) {
        x = step < 0 ? n - 1 : n;
      }
      return x;
    };
    std::int64_t start = adjust(bound(0), step < 0 ? n - 1 : 0);
    std::int64_t stop = adjust(bound(1), step < 0 ? -1 : n);
    std::vector<Value> out;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      out.push_back(base[static_cast<std::size_t>(i)]);
    return out;
  }

  const ListParser& parser_;
  std::size_t produced_ = 0;
};

// ------------------------------------------------------------ JSON files

// A JSON file as parsed, and its text, to locate what turns out wrong in it.
struct JsonFile {
  nlohmann::json json;
  std::string text;
  fs::path file;
  // The text as yaml-cpp reads it, for locate(): parsed on the first
  // location asked for, then kept (a condition's text is located whether or
  // not it has an error).
  mutable std::optional<YAML::Node> positions;
};

// The offset of the first number in JSON `text` (outside strings) whose
// value is beyond a double's range, or text.size() when none is.
std::size_t first_overflowing_number(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {  // over the string, escapes included
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    if (c != '-' && !std::isdigit(static_cast<unsigned char>(c))) continue;
    std::size_t end = i + 1;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
                                 text[end] == 'e' || text[end] == 'E' || text[end] == '+' || text[end] == '-'))
      ++end;
    const std::string number(text.substr(i, end - i));
    if (std::isinf(std::strtod(number.c_str(), nullptr))) return i;
    i = end - 1;
  }
  return text.size();
}

JsonFile read_json(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(SourceLocation{file.string(), 0, 0}, "cannot open " + file.string());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    nlohmann::json json = nlohmann::json::parse(text);
    return {std::move(json), std::move(text), file, std::nullopt};
  } catch (const nlohmann::json::parse_error& e) {
    // Located as every other input error is, file:line:column.
    const auto p = detail::json_error_place(text, e.byte, e.what());
    throw InputError(SourceLocation{file.string(), p.line, p.column}, "invalid JSON: " + p.message);
  } catch (const nlohmann::json::out_of_range&) {
    // A number past a double's range ("1e1115"; found by tests/fuzz/t1_fuzz):
    // the parser gives no place, so the first such number is looked for.
    const std::size_t at = first_overflowing_number(text);
    const auto p = detail::json_error_place(text, at + 1, "");
    throw InputError(SourceLocation{file.string(), at < text.size() ? p.line : 0, at < text.size() ? p.column : 0},
                     "invalid JSON: a number too large for a double (beyond 1.8e308)");
  }
}

// One step of a path into a JSON document: a member's key or an index.
using JsonStep = std::variant<std::string, std::size_t>;

// Where the node at `path` starts in the file (line and column, 1-based),
// or its key where `the_key` (the last step's, a member's), or the file
// alone where it cannot be found. nlohmann's parser keeps no
// positions; yaml-cpp, which reads JSON, keeps them, so the text is parsed
// again, once, when a location is first needed.
SourceLocation locate(const JsonFile& f, const std::vector<JsonStep>& path, bool the_key = false) {
  const SourceLocation file_only{f.file.string(), 0, 0};
  try {
    if (!f.positions) f.positions = YAML::Load(f.text);
    YAML::Node node = *f.positions;
    YAML::Node key_node;
    for (const auto& step : path) {
      // Through a const node: a lookup must not add the key it misses.
      const YAML::Node& at = node;
      if (const auto* key = std::get_if<std::string>(&step)) {
        if (the_key && at.IsMap())
          for (auto it = at.begin(); it != at.end(); ++it)
            if (it->first.IsScalar() && it->first.Scalar() == *key) key_node.reset(it->first);
        node.reset(at[*key]);
      } else {
        node.reset(at[std::get<std::size_t>(step)]);
      }
      if (!node.IsDefined()) return file_only;
    }
    const YAML::Mark m = the_key && key_node.IsDefined() ? key_node.Mark() : node.Mark();
    return m.line >= 0 ? SourceLocation{f.file.string(), m.line + 1, m.column + 1} : file_only;
  } catch (const YAML::Exception&) {
    return file_only;
  }
}

// Where the string at `path` starts, past its opening quote: an expression
// parsed there names it in errors found after loading (an unknown name when
// the space is built). `file_only` when the text cannot be located.
SourceLocation text_at(const JsonFile& f, const std::vector<JsonStep>& path, const SourceLocation& file_only) {
  SourceLocation at = locate(f, path);
  if (at.line == 0) return file_only;
  at.column += 1;
  return at;
}

// A condition's "Parameters", the names its expression uses: each must be
// a declared parameter. tunekit reads the names from the expression itself,
// but a name here that is no parameter is a typo or a list from another
// file, which would otherwise pass unnoticed.
void checked_parameter_list(const JsonFile& f, const nlohmann::json& condition, const std::vector<JsonStep>& at,
                            const std::string& name, const std::vector<Parameter>& declared) {
  if (!condition.is_object() || !condition.contains("Parameters")) return;
  auto list_at = at;
  list_at.emplace_back(std::string("Parameters"));
  const auto& list = condition["Parameters"];
  if (!list.is_array()) throw InputError(locate(f, list_at), name + ".Parameters must be a list of parameter names");
  std::vector<std::string> names;
  for (const auto& p : declared) names.push_back(p.name);
  for (std::size_t k = 0; k < list.size(); ++k) {
    auto item_at = list_at;
    item_at.emplace_back(k);
    const std::string what = fmt::format("{}.Parameters[{}]", name, k);
    if (!list[k].is_string())
      throw InputError(locate(f, item_at), what + ": expected a parameter name, got " + list[k].dump());
    const auto n = list[k].get<std::string>();
    if (std::find(names.begin(), names.end(), n) != names.end()) continue;
    std::string message =
        fmt::format("{}: '{}' is not a parameter of this space (parameters: {})", what, n, detail::join(names));
    if (auto near = detail::closest_match(n, names)) message += fmt::format("; did you mean '{}'?", *near);
    throw InputError(locate(f, item_at), message);
  }
}

// `e`, thrown while reading the node at `path` (named `name`), located at
// that node: at the character it names within the node's string (`e`'s
// column, counted from the string's first character), else at the node.
// One a parser located in the file already (parsed at text_at()) keeps its
// place.
[[noreturn]] void relocate(const InputError& e, const JsonFile& f, const std::vector<JsonStep>& path,
                           const std::string& name) {
  if (e.where().line > 0) throw InputError(e.where(), name + ": " + e.message());
  SourceLocation at = locate(f, path);
  if (at.line > 0 && e.where().column > 0) at.column += e.where().column;  // past the opening quote
  throw InputError(at, name + ": " + e.message());
}

// A key a reader does not know is a misspelling more often than not (a
// T1 "Condition" would leave the space unconstrained, silently).
void known_keys(const JsonFile& f, const nlohmann::json& obj, const std::vector<JsonStep>& at, const std::string& name,
                const std::vector<std::string>& known) {
  if (!obj.is_object()) return;
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    auto path = at;
    path.emplace_back(key);
    std::string message = fmt::format("unknown key \"{}\" in {} (known: {})", key, name, detail::join(known));
    if (auto near = detail::closest_match(key, known)) message += fmt::format("; did you mean \"{}\"?", *near);
    throw InputError(locate(f, path, /*the_key=*/true), message);
  }
}

// A value listed twice would be counted twice in every size of the space.
void no_duplicate_values(const std::vector<Value>& values, const std::string& what, const SourceLocation& where) {
  detail::DistinctValues seen;
  for (const Value& v : values)
    if (auto j = seen.add(v))
      throw InputError(where, fmt::format("{}: duplicate value {}{}", what, v.repr(),
                                          seen[*j].repr() == v.repr() ? "" : " (equal to " + seen[*j].repr() + ")"));
}

Value json_value(const nlohmann::json& v, const SourceLocation& where, const std::string& what) {
  if (v.is_boolean()) return Value(v.get<bool>() ? 1 : 0);
  if (v.is_number_integer()) return Value(v.get<std::int64_t>());
  if (v.is_number_float()) return Value(v.get<double>());
  if (v.is_string()) return Value(v.get<std::string>());
  throw InputError(where, what + ": values must be numbers or strings, got " + v.dump());
}

const nlohmann::json& member(const nlohmann::json& obj, const char* key, const SourceLocation& where,
                             const std::string& what) {
  if (!obj.is_object() || !obj.contains(key)) throw InputError(where, what + " has no \"" + key + "\"");
  return obj.at(key);
}

std::string string_member(const nlohmann::json& obj, const char* key, const SourceLocation& where,
                          const std::string& what) {
  const auto& v = member(obj, key, where, what);
  if (!v.is_string()) throw InputError(where, what + ": \"" + key + "\" must be a string");
  return v.get<std::string>();
}

// The first value a T1 Type does not allow, said ("'a' is a string"), or
// nullopt: a Type that disagrees with the values is a mistake in one of them.
std::optional<std::string> value_not_of_type(const std::vector<Value>& values, const std::string& type) {
  for (const Value& v : values) {
    const bool fits = type.empty() || (type == "int" && v.is_int()) ||
                      (type == "uint" && v.is_int() && v.as_int() >= 0) || (type == "float" && v.is_number()) ||
                      (type == "string" && v.is_string()) ||
                      (type == "bool" && v.is_int() && (v.as_int() == 0 || v.as_int() == 1));
    if (!fits)
      return fmt::format("{} is {}", v.repr(),
                         type == "string" ? "a number"
                         : v.is_string()  ? "a string"
                         : v.is_float()   ? "not an integer"
                         : type == "bool" ? "neither true nor false"
                                          : "negative");
  }
  return std::nullopt;
}

// The keys of the sections around the space, which `tunekit tune` reads
// and `tunekit space` and `tunekit replay --t1` do not: checked here, for
// every command, so that a file one command takes no other refuses (a
// misspelt key is said at its place, with the nearest spelling).
void known_kernel_search_and_budget_keys(const JsonFile& f) {
  const nlohmann::json& j = f.json;
  // Each element of the list at `at` that is a mapping, checked against `known`.
  auto each = [&](const std::vector<JsonStep>& at, const nlohmann::json& list, const std::string& name,
                  const std::vector<std::string>& known) {
    if (!list.is_array()) return;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto path = at;
      path.emplace_back(i);
      known_keys(f, list[i], path, fmt::format("{}[{}]", name, i), known);
    }
  };
  if (const auto k = j.find("KernelSpecification"); k != j.end()) {
    known_keys(f, *k, {"KernelSpecification"}, "KernelSpecification", kT1KernelKeys);
    if (k->is_object()) {
      if (const auto d = k->find("Device"); d != k->end())
        known_keys(f, *d, {"KernelSpecification", "Device"}, "KernelSpecification.Device", kT1DeviceKeys);
      if (const auto a = k->find("Arguments"); a != k->end())
        each({"KernelSpecification", "Arguments"}, *a, "KernelSpecification.Arguments", kT1ArgumentKeys);
    }
  }
  if (const auto s = j.find("Search"); s != j.end()) {
    known_keys(f, *s, {"Search"}, "Search", kT1SearchKeys);
    if (s->is_object())
      if (const auto a = s->find("Attributes"); a != s->end())
        each({"Search", "Attributes"}, *a, "Search.Attributes", kT1AttributeKeys);
  }
  if (const auto b = j.find("Budget"); b != j.end()) each({"Budget"}, *b, "Budget", kT1BudgetKeys);
}

SpaceDefinition t1_from_json(const JsonFile& f) {
  const nlohmann::json& j = f.json;
  const fs::path& file = f.file;
  const SourceLocation where{file.string(), 0, 0};
  SpaceDefinition out;
  out.format = "t1";
  out.name = file.stem().string();
  if (j.contains("General") && j["General"].is_object() && j["General"].contains("BenchmarkName") &&
      j["General"]["BenchmarkName"].is_string())
    out.name = j["General"]["BenchmarkName"].get<std::string>();
  // The T1 schema's sections (and the benchmark hub's BenchmarkConfig):
  // a misspelled one would be ignored.
  known_keys(f, j, {}, "the T1 file", kT1Sections);
  known_kernel_search_and_budget_keys(f);
  if (j.contains("General") && !j["General"].is_object())
    throw InputError(locate(f, {"General"}), "General must be a mapping (BenchmarkName, FormatVersion, ...)");
  const auto& cs = member(j, "ConfigurationSpace", where, "the T1 file");
  known_keys(f, cs, {"ConfigurationSpace"}, "ConfigurationSpace", {"TuningParameters", "Conditions"});
  const auto& tps = member(cs, "TuningParameters", locate(f, {"ConfigurationSpace"}), "ConfigurationSpace");
  if (!tps.is_array())
    throw InputError(locate(f, {"ConfigurationSpace", "TuningParameters"}),
                     "ConfigurationSpace.TuningParameters must be a list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < tps.size(); ++i) {
    const auto& tp = tps[i];
    const std::vector<JsonStep> at{"ConfigurationSpace", "TuningParameters", i};
    const std::string name = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
    known_keys(f, tp, at, name, {"Name", "Type", "Values", "Default", "Description"});
    Parameter p;
    try {
      p.name = string_member(tp, "Name", where, "a tuning parameter");
      // Conditions name it, and backends define it as a macro.
      if (!spec_detail::is_identifier(p.name))
        throw InputError(where, "parameter name '" + p.name +
                                    "' is not a valid name (letters, digits and '_', not starting with a digit): no "
                                    "condition could name it");
      if (auto reserved = spec_detail::reserved_name_problem(p.name)) throw InputError(where, *reserved);
      if (!names.insert(p.name).second) throw InputError(where, "duplicate parameter '" + p.name + "'");
      std::string type;
      if (tp.contains("Type")) {
        static const std::vector<std::string> kTypes{"int", "uint", "float", "string", "bool"};
        const auto& t = tp["Type"];
        if (!t.is_string() || std::find(kTypes.begin(), kTypes.end(), t.get<std::string>()) == kTypes.end())
          throw InputError(where, fmt::format("Type {} is not a T1 type ({})", t.dump(), detail::join(kTypes)));
        type = t.get<std::string>();
      }
      p.where = where;
      const std::string what = "tuning parameter '" + p.name + "'";
      const auto& values = member(tp, "Values", where, what);
      if (values.is_string()) {
        try {
          p.values = evaluate_value_list(values.get<std::string>(), where);
        } catch (const InputError& e) {
          auto values_at = at;
          values_at.emplace_back(std::string("Values"));
          relocate(e, f, values_at, name + ".Values");
        }
      } else if (values.is_array()) {
        for (const auto& v : values) p.values.push_back(json_value(v, where, what));
      } else {
        throw InputError(where, what + ": Values must be a string or a list");
      }
      if (p.values.empty()) throw InputError(where, what + " has no values (its Values list is empty)");
      no_duplicate_values(p.values, what, where);
      if (auto bad = value_not_of_type(p.values, type)) {
        auto values_at = at;
        values_at.emplace_back(std::string("Values"));
        throw InputError(locate(f, values_at), fmt::format("{}: its Type is {}, and {}", what, type, *bad));
      }
    } catch (const InputError& e) {
      if (e.where().line > 0) throw;  // located already
      relocate(e, f, at, name);
    }
    out.parameters.push_back(std::move(p));
  }
  if (cs.contains("Conditions")) {
    const auto& conds = cs["Conditions"];
    if (!conds.is_array())
      throw InputError(locate(f, {"ConfigurationSpace", "Conditions"}), "ConfigurationSpace.Conditions must be a list");
    for (std::size_t i = 0; i < conds.size(); ++i) {
      const auto& c = conds[i];
      std::vector<JsonStep> at{"ConfigurationSpace", "Conditions", i};
      std::string name = fmt::format("ConfigurationSpace.Conditions[{}]", i);
      known_keys(f, c, at, name, {"Parameters", "Expression"});
      checked_parameter_list(f, c, at, name, out.parameters);
      try {
        std::string text = c.is_string() ? c.get<std::string>() : string_member(c, "Expression", where, "a condition");
        if (!c.is_string()) {
          at.emplace_back(std::string("Expression"));
          name += ".Expression";
        }
        out.constraints.push_back(Expression::parse(text, text_at(f, at, where)));
      } catch (const InputError& e) {
        relocate(e, f, at, name);
      }
    }
  }
  return out;
}

SpaceDefinition neutral_from_json(const JsonFile& f) {
  const nlohmann::json& j = f.json;
  const SourceLocation where{f.file.string(), 0, 0};
  SpaceDefinition out;
  out.format = "json";
  known_keys(f, j, {}, "the space file", {"name", "parameters", "constraints", "expected", "notes", "source"});
  out.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : f.file.stem().string();
  const auto& params = member(j, "parameters", where, "the space file");
  if (!params.is_array()) throw InputError(locate(f, {"parameters"}), "\"parameters\" must be a list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& pj = params[i];
    const std::vector<JsonStep> at{"parameters", i};
    const std::string name = fmt::format("parameters[{}]", i);
    known_keys(f, pj, at, name, {"name", "values"});
    Parameter p;
    try {
      p.name = string_member(pj, "name", where, "a parameter");
      if (!names.insert(p.name).second) throw InputError(where, "duplicate parameter '" + p.name + "'");
      p.where = where;
      const std::string what = "parameter '" + p.name + "'";
      const auto& values = member(pj, "values", where, what);
      if (!values.is_array()) throw InputError(where, what + ": \"values\" must be a list");
      for (const auto& v : values) p.values.push_back(json_value(v, where, what));
      if (p.values.empty()) throw InputError(where, what + " has no values");
      no_duplicate_values(p.values, what, where);
    } catch (const InputError& e) {
      if (e.where().line > 0) throw;
      relocate(e, f, at, name);
    }
    out.parameters.push_back(std::move(p));
  }
  if (j.contains("constraints")) {
    const auto& cs = j["constraints"];
    if (!cs.is_array()) throw InputError(locate(f, {"constraints"}), "\"constraints\" must be a list");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const std::vector<JsonStep> at{"constraints", i};
      const std::string name = fmt::format("constraints[{}]", i);
      if (!cs[i].is_string())
        throw InputError(locate(f, at), name + ": a constraint must be a string, got " + cs[i].dump());
      try {
        out.constraints.push_back(Expression::parse(cs[i].get<std::string>(), text_at(f, at, where)));
      } catch (const InputError& e) {
        relocate(e, f, at, name);
      }
    }
  }
  if (j.contains("expected") && j["expected"].is_object()) {
    const auto& e = j["expected"];
    if (e.contains("cartesian") && e["cartesian"].is_number_unsigned())
      out.expected_cartesian = e["cartesian"].get<std::uint64_t>();
    if (e.contains("valid") && e["valid"].is_number_unsigned()) out.expected_valid = e["valid"].get<std::uint64_t>();
  }
  return out;
}

}  // namespace

std::vector<Value> evaluate_value_list(std::string_view text, const SourceLocation& where) {
  ListParser parser(text, where);
  ListPtr e = parser.parse();
  ListEvaluator evaluator(parser);
  Bindings env;
  return evaluator.eval(*e, env);
}

SpaceDefinition load_t1(const fs::path& file) { return t1_from_json(read_json(file)); }

SpaceDefinition load_space_json(const fs::path& file) { return neutral_from_json(read_json(file)); }

std::optional<SpaceDefinition> load_space_file(const fs::path& file) {
  if (detail::lowercase_extension(file) != ".json") return std::nullopt;
  const JsonFile f = read_json(file);
  const nlohmann::json& j = f.json;
  if (j.is_object() && j.contains("ConfigurationSpace")) return t1_from_json(f);
  if (j.is_object() && j.contains("parameters") && j["parameters"].is_array()) return neutral_from_json(f);
  // A T1 file whose ConfigurationSpace is missing or misspelled would be
  // read as a spec and refused for its T1 keys: say what it lacks.
  if (j.is_object() && (j.contains("General") || j.contains("KernelSpecification"))) {
    for (const auto& [key, value] : j.items())
      if (std::find(kT1Sections.begin(), kT1Sections.end(), key) == kT1Sections.end())
        if (detail::closest_match(key, {"ConfigurationSpace"}))
          throw InputError(locate(f, {key}), fmt::format("a T1 file with no \"ConfigurationSpace\"; did you mean "
                                                         "\"ConfigurationSpace\" for \"{}\"?",
                                                         key));
    throw InputError(SourceLocation{f.file.string(), 0, 0},
                     "a T1 file (it has General or KernelSpecification) with no \"ConfigurationSpace\", which holds "
                     "its TuningParameters");
  }
  return std::nullopt;
}

SpaceDefinition space_definition(const Spec& spec) {
  SpaceDefinition out;
  out.format = "spec";
  out.name = spec.name;
  out.parameters = spec.parameters;
  out.constraints = spec.constraints;
  if (!spec.sizes.empty()) out.constants = spec.sizes.front();
  return out;
}

SpaceDefinition load_space_definition(const fs::path& file) {
  if (auto d = load_space_file(file)) return std::move(*d);
  return space_definition(load_spec(file));
}

}  // namespace tunekit
