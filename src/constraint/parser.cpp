// Lexer and recursive-descent parser for the Python expression subset.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "constraint/detail/program.hpp"

namespace tunekit::detail {

int char_index(std::string_view text, int byte_offset) {
  int n = 0;
  for (int i = 0; i < byte_offset && i < static_cast<int>(text.size()); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  if (byte_offset > static_cast<int>(text.size())) n += byte_offset - static_cast<int>(text.size());
  return n;
}

namespace {

enum class Tok : std::uint8_t { End, Int, Float, Str, Name, Op, LParen, RParen, LBrack, RBrack, Comma };

struct Token {
  Tok kind = Tok::End;
  int begin = 0, end = 0;
  std::string_view text;  // source text of the token
  Value value;            // literals
};

constexpr std::array<std::string_view, 7> kFunctions{"min", "max", "abs", "ceil_div", "int", "float", "round"};
constexpr std::array<Fn, 7> kFunctionIds{Fn::Min, Fn::Max, Fn::Abs, Fn::CeilDiv, Fn::Int, Fn::Float, Fn::Round};

bool is_reserved(std::string_view w) {
  static constexpr std::array<std::string_view, 27> words{
      "None",   "as",       "assert", "async",   "await",  "break", "class",  "continue", "def",
      "del",    "elif",     "except", "finally", "for",    "from",  "global", "import",   "is",
      "lambda", "nonlocal", "pass",   "raise",   "return", "try",   "while",  "with",     "yield"};
  for (auto r : words)
    if (r == w) return true;
  return false;
}

class Parser {
 public:
  Parser(std::string_view text, const SourceLocation& where) : text_(text), where_(where) {}

  NodePtr parse() {
    // Kernel Tuner takes a restriction as a function of the config too; the
    // lexer would stop at its ':' and say only that.
    if (const auto at = text_.find_first_not_of(" \t");
        at != std::string_view::npos && text_.substr(at).starts_with("lambda") &&
        (text_.size() == at + 6 || text_[at + 6] == ' ' || text_[at + 6] == ':'))
      fail(static_cast<int>(at),
           "a Python lambda (Kernel Tuner's restriction as a function) is not an expression here: write its body "
           "over the parameter names, 'block_size_x * block_size_y <= 1024' for 'lambda p: p[\"block_size_x\"] * "
           "p[\"block_size_y\"] <= 1024'");
    lex();
    if (tokens_.front().kind == Tok::End) fail(0, "empty expression");
    NodePtr n = expression();
    const Token& t = peek();
    if (t.kind != Tok::End) {
      if (t.kind == Tok::RParen || t.kind == Tok::RBrack) fail(t.begin, "unmatched '" + std::string(t.text) + "'");
      if (t.kind == Tok::Comma)
        fail(t.begin, "unexpected ','; a list or tuple needs brackets and can only follow 'in'");
      if (t.kind == Tok::LBrack && pos_ > 0 && tokens_[pos_ - 1].kind == Tok::Name)
        fail(t.begin, "unexpected '[' after '" + std::string(tokens_[pos_ - 1].text) +
                          "': there is no subscript; name a parameter or size itself ('block_size_x', not "
                          "'p[\"block_size_x\"]' as in a Kernel Tuner restriction function)");
      fail(t.begin, "unexpected " + describe(t) + "; expected an operator or the end of the expression");
    }
    validate(*n, false);
    return n;
  }

 private:
  // ---------------------------------------------------------------- errors
  [[noreturn]] void fail(int byte_offset, const std::string& message) const {
    throw InputError(where_.shifted(char_index(text_, byte_offset)), message);
  }

  int column_of(int byte_offset) const { return where_.shifted(char_index(text_, byte_offset)).column; }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End:
        return "the end of the expression";
      case Tok::Int:
      case Tok::Float:
        return "number " + std::string(t.text);
      case Tok::Str:
        return "string " + std::string(t.text);
      case Tok::Name:
        return "name '" + std::string(t.text) + "'";
      default:
        return "'" + std::string(t.text) + "'";
    }
  }

  // ---------------------------------------------------------------- lexer
  void lex() {
    int n = static_cast<int>(text_.size());
    int i = 0;
    while (true) {
      while (i < n && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) ++i;
      Token t;
      t.begin = i;
      if (i >= n) {
        t.kind = Tok::End;
        t.end = i;
        tokens_.push_back(t);
        return;
      }
      char c = text_[i];
      auto at = [&](int k) { return i + k < n ? text_[i + k] : '\0'; };
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && std::isdigit(static_cast<unsigned char>(at(1))))) {
        i = number(i, t);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i < n && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_')) ++i;
        t.kind = Tok::Name;
      } else if (c == '\'' || c == '"') {
        i = string(i, t);
      } else {
        t.kind = Tok::Op;
        std::string_view two = text_.substr(i, 2);
        if (two == "**" || two == "//" || two == "==" || two == "!=" || two == "<=" || two == ">=" || two == "<<" ||
            two == ">>") {
          i += 2;
        } else if (two == "&&" || two == "||") {
          fail(i,
               std::string("unexpected '") + std::string(two) + "'; use '" + (c == '&' ? "and" : "or") + "' instead");
        } else {
          switch (c) {
            case '+':
            case '-':
            case '*':
            case '/':
            case '%':
            case '<':
            case '>':
            case '&':
            case '|':
            case '^':
            case '~':
              break;
            case '(':
              t.kind = Tok::LParen;
              break;
            case ')':
              t.kind = Tok::RParen;
              break;
            case '[':
              t.kind = Tok::LBrack;
              break;
            case ']':
              t.kind = Tok::RBrack;
              break;
            case ',':
              t.kind = Tok::Comma;
              break;
            case '!':
              fail(i, "unexpected '!'; use 'not' instead");
            case '=':
              fail(i, "unexpected '='; did you mean '=='?");
            default: {
              int len = 1;
              auto u = static_cast<unsigned char>(c);
              if (u >= 0xC0) {
                while (i + len < n && (static_cast<unsigned char>(text_[i + len]) & 0xC0) == 0x80) ++len;
              }
              fail(i, "unexpected character '" + std::string(text_.substr(i, len)) + "'");
            }
          }
          i += 1;
        }
      }
      t.end = i;
      t.text = text_.substr(t.begin, t.end - t.begin);
      tokens_.push_back(t);
    }
  }

  int number(int i, Token& t) {
    int n = static_cast<int>(text_.size());
    int start = i;
    auto digits = [&](auto pred) {
      while (i < n && (pred(text_[i]) || text_[i] == '_')) ++i;
    };
    auto dec = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
    std::string clean;
    auto check_underscores = [&](std::string_view s, std::string_view prefix) {
      clean.clear();
      bool based = !prefix.empty();
      auto digit = [based](char ch) {
        return based ? std::isalnum(static_cast<unsigned char>(ch)) != 0
                     : std::isdigit(static_cast<unsigned char>(ch)) != 0;
      };
      for (std::size_t k = 0; k < s.size(); ++k) {
        if (s[k] == '_') {
          bool ok = k > 0 && k + 1 < s.size() && digit(s[k + 1]) && (digit(s[k - 1]) || k == prefix.size());
          if (!ok) fail(start + static_cast<int>(k), "invalid number literal '" + std::string(s) + "'");
          continue;
        }
        clean += s[k];
      }
    };
    char c1 = i + 1 < n ? static_cast<char>(std::tolower(static_cast<unsigned char>(text_[i + 1]))) : '\0';
    if (text_[i] == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
      int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
      i += 2;
      digits([](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; });
      std::string_view lit = text_.substr(start, i - start);
      check_underscores(lit, lit.substr(0, 2));
      std::string body = clean.substr(2);
      if (body.empty()) fail(start, "invalid number literal '" + std::string(lit) + "'");
      errno = 0;
      char* end = nullptr;
      unsigned long long v = std::strtoull(body.c_str(), &end, base);
      if (end != body.c_str() + body.size()) fail(start, "invalid number literal '" + std::string(lit) + "'");
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
        fail(start, "integer literal '" + std::string(lit) + "' does not fit in 64 bits");
      t.kind = Tok::Int;
      t.value = Value(static_cast<std::int64_t>(v));
      return i;
    }
    bool is_float = false;
    digits(dec);
    if (i < n && text_[i] == '.') {
      is_float = true;
      ++i;
      digits(dec);
    }
    if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
      int save = i;
      ++i;
      if (i < n && (text_[i] == '+' || text_[i] == '-')) ++i;
      if (i < n && dec(text_[i])) {
        is_float = true;
        digits(dec);
      } else {
        fail(start, "invalid number literal '" + std::string(text_.substr(start, save + 1 - start)) +
                        "'; expected digits after the exponent");
      }
    }
    if (i < n && (std::isalpha(static_cast<unsigned char>(text_[i])) || text_[i] == '_'))
      fail(i, "invalid number literal '" + std::string(text_.substr(start, i + 1 - start)) + "'");
    std::string_view lit = text_.substr(start, i - start);
    check_underscores(lit, "");
    if (is_float) {
      char* end = nullptr;
      double d = std::strtod(clean.c_str(), &end);
      if (end != clean.c_str() + clean.size()) fail(start, "invalid number literal '" + std::string(lit) + "'");
      t.kind = Tok::Float;
      t.value = Value(d);
    } else {
      if (clean.size() > 1 && clean[0] == '0' && clean.find_first_not_of('0') != std::string::npos)
        fail(start, "leading zeros are not allowed in '" + std::string(lit) + "' (Python 3 syntax)");
      errno = 0;
      char* end = nullptr;
      unsigned long long v = std::strtoull(clean.c_str(), &end, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
        fail(start, "integer literal '" + std::string(lit) + "' does not fit in 64 bits");
      t.kind = Tok::Int;
      t.value = Value(static_cast<std::int64_t>(v));
    }
    return i;
  }

  int string(int i, Token& t) {
    int n = static_cast<int>(text_.size());
    char quote = text_[i];
    int start = i++;
    std::string out;
    while (true) {
      if (i >= n) fail(start, "unterminated string literal");
      char c = text_[i];
      if (c == quote) {
        ++i;
        break;
      }
      if (c == '\n') fail(start, "unterminated string literal");
      if (c == '\\' && i + 1 < n) {
        char e = text_[i + 1];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case '0':
            out += '\0';
            break;
          case '\\':
            out += '\\';
            break;
          case '\'':
            out += '\'';
            break;
          case '"':
            out += '"';
            break;
          default:
            out += '\\';
            out += e;
            break;  // Python keeps unknown escapes
        }
        i += 2;
        continue;
      }
      out += c;
      ++i;
    }
    t.kind = Tok::Str;
    t.value = Value(std::move(out));
    return i;
  }

  // ---------------------------------------------------------------- tokens
  const Token& peek(int k = 0) const {
    std::size_t j = pos_ + static_cast<std::size_t>(k);
    return j < tokens_.size() ? tokens_[j] : tokens_.back();
  }
  const Token& take() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    last_ = &t;
    return t;
  }
  bool is_op(std::string_view s, int k = 0) const {
    const Token& t = peek(k);
    return t.kind == Tok::Op && t.text == s;
  }
  bool is_word(std::string_view s, int k = 0) const {
    const Token& t = peek(k);
    return t.kind == Tok::Name && t.text == s;
  }

  NodePtr make(Node n) const {
    n.depth = 1;
    for (const auto& k : n.kids) n.depth = std::max(n.depth, k->depth + 1);
    if (n.depth > kMaxDepth) fail(n.begin, "expression nested too deeply");
    return std::make_shared<const Node>(std::move(n));
  }
  static constexpr int kMaxDepth = 1000;

  // ---------------------------------------------------------------- grammar
  // expression: disjunction ['if' disjunction 'else' expression]
  // Bounds the recursion of the parser and of the passes over the tree.
  struct Nesting {
    Parser& p;
    explicit Nesting(Parser& parser, int at) : p(parser) {
      if (++p.depth_ > kMaxNesting) p.fail(at, "expression nested too deeply");
    }
    ~Nesting() { --p.depth_; }
  };
  static constexpr int kMaxNesting = 256;

  NodePtr expression() {
    Nesting guard(*this, peek().begin);
    NodePtr body = disjunction();
    if (!is_word("if")) return body;
    const Token& kw = take();
    NodePtr cond = operand_after(kw, [this] { return disjunction(); });
    if (!is_word("else"))
      fail(peek().begin,
           "expected 'else' after the condition of 'if' at column " + std::to_string(column_of(kw.begin)));
    const Token& el = take();
    NodePtr other = operand_after(el, [this] { return expression(); });
    Node n;
    n.kind = Kind::IfElse;
    n.begin = body->begin;
    n.end = other->end;
    n.op_pos = kw.begin;
    n.kids = {body, cond, other};
    return make(std::move(n));
  }

  // Parses the operand that must follow `op` with a helpful message when
  // there is none.
  template <class F>
  NodePtr operand_after(const Token& op, F parse_operand) {
    if (!starts_operand(peek())) {
      const Token& t = peek();
      if (t.kind == Tok::End) fail(t.begin, "expected an expression after '" + std::string(op.text) + "'");
      fail(t.begin, "expected an expression after '" + std::string(op.text) + "', found " + describe(t));
    }
    return parse_operand();
  }

  bool starts_operand(const Token& t) const {
    switch (t.kind) {
      case Tok::Int:
      case Tok::Float:
      case Tok::Str:
      case Tok::LParen:
      case Tok::LBrack:
        return true;
      case Tok::Name:
        return t.text != "and" && t.text != "or" && t.text != "in" && t.text != "if" && t.text != "else";
      case Tok::Op:
        return t.text == "-" || t.text == "+" || t.text == "~";
      default:
        return false;
    }
  }

  NodePtr disjunction() {
    return logical("or", Kind::Or, [this] { return conjunction(); });
  }
  NodePtr conjunction() {
    return logical("and", Kind::And, [this] { return inversion(); });
  }

  template <class F>
  NodePtr logical(std::string_view word, Kind kind, F next) {
    NodePtr first = next();
    if (!is_word(word)) return first;
    Node n;
    n.kind = kind;
    n.begin = first->begin;
    n.kids.push_back(first);
    while (is_word(word)) {
      const Token& op = take();
      if (n.kids.size() == 1) n.op_pos = op.begin;
      n.kids.push_back(operand_after(op, next));
    }
    n.end = n.kids.back()->end;
    return make(std::move(n));
  }

  NodePtr inversion() {
    if (is_word("not")) {
      Nesting guard(*this, peek().begin);
      const Token& op = take();
      NodePtr arg = operand_after(op, [this] { return inversion(); });
      Node n;
      n.kind = Kind::Unary;
      n.op = static_cast<std::uint8_t>(UnOp::Not);
      n.begin = op.begin;
      n.end = arg->end;
      n.op_pos = op.begin;
      n.kids = {arg};
      return make(std::move(n));
    }
    return comparison();
  }

  std::optional<Cmp> comparison_operator(int& width) const {
    width = 1;
    const Token& t = peek();
    if (t.kind == Tok::Op) {
      if (t.text == "==") return Cmp::Eq;
      if (t.text == "!=") return Cmp::Ne;
      if (t.text == "<") return Cmp::Lt;
      if (t.text == "<=") return Cmp::Le;
      if (t.text == ">") return Cmp::Gt;
      if (t.text == ">=") return Cmp::Ge;
      return std::nullopt;
    }
    if (is_word("in")) return Cmp::In;
    if (is_word("not") && is_word("in", 1)) {
      width = 2;
      return Cmp::NotIn;
    }
    if (is_word("is")) fail(t.begin, "'is' is not supported; use '==' or '!='");
    return std::nullopt;
  }

  NodePtr comparison() {
    NodePtr first = bit_or();
    int width = 1;
    auto op = comparison_operator(width);
    if (!op) return first;
    Node n;
    n.kind = Kind::Compare;
    n.begin = first->begin;
    n.op_pos = peek().begin;
    n.kids.push_back(first);
    while ((op = comparison_operator(width))) {
      const Token* tok = &take();
      if (width == 2) tok = &take();
      n.cmps.push_back(*op);
      Token shown = *tok;
      if (width == 2) shown.text = "not in";
      n.kids.push_back(operand_after(shown, [this] { return bit_or(); }));
    }
    n.end = n.kids.back()->end;
    return make(std::move(n));
  }

  template <class F>
  NodePtr binary_level(std::initializer_list<std::pair<std::string_view, BinOp>> ops, F next) {
    NodePtr left = next();
    while (true) {
      std::optional<BinOp> found;
      for (auto [s, op] : ops)
        if (is_op(s)) found = op;
      if (!found) return left;
      const Token& tok = take();
      NodePtr right = operand_after(tok, next);
      Node n;
      n.kind = Kind::Binary;
      n.op = static_cast<std::uint8_t>(*found);
      n.begin = left->begin;
      n.end = right->end;
      n.op_pos = tok.begin;
      n.kids = {left, right};
      left = make(std::move(n));
    }
  }

  NodePtr bit_or() {
    return binary_level({{"|", BinOp::BitOr}}, [this] { return bit_xor(); });
  }
  NodePtr bit_xor() {
    return binary_level({{"^", BinOp::BitXor}}, [this] { return bit_and(); });
  }
  NodePtr bit_and() {
    return binary_level({{"&", BinOp::BitAnd}}, [this] { return shift(); });
  }
  NodePtr shift() {
    return binary_level({{"<<", BinOp::Shl}, {">>", BinOp::Shr}}, [this] { return sum(); });
  }
  NodePtr sum() {
    return binary_level({{"+", BinOp::Add}, {"-", BinOp::Sub}}, [this] { return term(); });
  }
  NodePtr term() {
    return binary_level({{"*", BinOp::Mul}, {"/", BinOp::Div}, {"//", BinOp::FloorDiv}, {"%", BinOp::Mod}},
                        [this] { return factor(); });
  }

  // factor: ('+'|'-'|'~') factor | power
  NodePtr factor() {
    std::optional<UnOp> op;
    if (is_op("-")) op = UnOp::Neg;
    else if (is_op("+")) op = UnOp::Pos;
    else if (is_op("~")) op = UnOp::Invert;
    if (!op) return power();
    Nesting guard(*this, peek().begin);
    const Token& tok = take();
    NodePtr arg = operand_after(tok, [this] { return factor(); });
    Node n;
    n.kind = Kind::Unary;
    n.op = static_cast<std::uint8_t>(*op);
    n.begin = tok.begin;
    n.end = arg->end;
    n.op_pos = tok.begin;
    n.kids = {arg};
    return make(std::move(n));
  }

  // power: primary ['**' factor]   (right-associative through factor)
  NodePtr power() {
    NodePtr base = primary();
    if (!is_op("**")) return base;
    Nesting guard(*this, peek().begin);  // 1**1**1...: each ** a level deeper
    const Token& tok = take();
    NodePtr exp = operand_after(tok, [this] { return factor(); });
    Node n;
    n.kind = Kind::Binary;
    n.op = static_cast<std::uint8_t>(BinOp::Pow);
    n.begin = base->begin;
    n.end = exp->end;
    n.op_pos = tok.begin;
    n.kids = {base, exp};
    return make(std::move(n));
  }

  NodePtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int:
      case Tok::Float:
      case Tok::Str: {
        take();
        Node n;
        n.kind = Kind::Const;
        n.value = t.value;
        n.begin = t.begin;
        n.end = t.end;
        n.op_pos = t.begin;
        if (peek().kind == Tok::LParen) fail(peek().begin, "a literal cannot be called like a function");
        return make(std::move(n));
      }
      case Tok::Name:
        return name();
      case Tok::LParen:
        return parenthesized();
      case Tok::LBrack:
        return list();
      default:
        break;
    }
    if (t.kind == Tok::End) {
      if (last_) fail(t.begin, "expected an expression after '" + std::string(last_->text) + "'");
      fail(t.begin, "expected an expression");
    }
    if (last_) fail(t.begin, "expected an expression after '" + std::string(last_->text) + "', found " + describe(t));
    fail(t.begin, "expected an expression, found " + describe(t));
  }

  NodePtr name() {
    const Token& t = take();
    Node n;
    n.begin = t.begin;
    n.end = t.end;
    n.op_pos = t.begin;
    if (t.text == "True" || t.text == "False") {
      n.kind = Kind::Const;
      n.value = Value(std::int64_t{t.text == "True" ? 1 : 0});
      return make(std::move(n));
    }
    if (t.text == "and" || t.text == "or" || t.text == "not" || t.text == "in" || t.text == "if" || t.text == "else")
      fail(t.begin, "expected an expression, found '" + std::string(t.text) + "'");
    if (is_reserved(t.text)) fail(t.begin, "'" + std::string(t.text) + "' is not supported in expressions");
    if (peek().kind != Tok::LParen) {
      n.kind = Kind::Var;
      n.name = std::string(t.text);
      return make(std::move(n));
    }
    // A call.
    std::optional<Fn> fn;
    for (std::size_t k = 0; k < kFunctions.size(); ++k)
      if (kFunctions[k] == t.text) fn = kFunctionIds[k];
    if (!fn)
      fail(t.begin,
           "unknown function '" + std::string(t.text) + "'; known: abs, ceil_div, float, int, max, min, round");
    const Token& open = take();
    std::vector<NodePtr> args = sequence(open, Tok::RParen, ")");
    n.end = last_->end;
    n.kind = Kind::Call;
    n.op = static_cast<std::uint8_t>(*fn);
    n.name = std::string(t.text);
    int count = static_cast<int>(args.size());
    std::string fname(t.text);
    if (*fn == Fn::Min || *fn == Fn::Max) {
      if (count == 1 && args[0]->kind == Kind::List) {
        NodePtr list = args[0];
        args = list->kids;
        if (args.empty()) fail(list->begin, fname + "() of an empty sequence");
      } else if (count < 2) {
        fail(t.begin, fname + "() expects at least 2 arguments or one list, got " + std::to_string(count));
      }
    } else {
      int want = *fn == Fn::CeilDiv ? 2 : 1;
      if (count != want)
        fail(t.begin, fname + "() expects " + std::to_string(want) + " argument" + (want == 1 ? "" : "s") + ", got " +
                          std::to_string(count));
    }
    n.kids = std::move(args);
    return make(std::move(n));
  }

  // Comma-separated expressions up to the closing token; the opening token
  // has been taken. Allows a trailing comma.
  std::vector<NodePtr> sequence(const Token& open, Tok close, const char* close_text) {
    std::vector<NodePtr> items;
    while (true) {
      if (peek().kind == close) break;
      if (!starts_operand(peek())) expected_close(open, close_text);
      items.push_back(expression());
      if (peek().kind == Tok::Comma) {
        take();
        continue;
      }
      if (peek().kind != close) expected_close(open, close_text);
    }
    take();
    return items;
  }

  [[noreturn]] void expected_close(const Token& open, const char* close_text) {
    const Token& t = peek();
    std::string msg = std::string("expected '") + close_text + "' to close '" + std::string(open.text) +
                      "' at column " + std::to_string(column_of(open.begin));
    if (t.kind != Tok::End) msg += ", found " + describe(t);
    fail(t.begin, msg);
  }

  NodePtr parenthesized() {
    const Token& open = take();
    int begin = open.begin;
    if (peek().kind == Tok::RParen) {  // () is the empty tuple
      take();
      Node n;
      n.kind = Kind::List;
      n.begin = begin;
      n.end = last_->end;
      n.op_pos = begin;
      return make(std::move(n));
    }
    if (!starts_operand(peek())) {
      const Token& t = peek();
      if (t.kind == Tok::End) fail(t.begin, "expected an expression after '('");
      fail(t.begin, "expected an expression after '(', found " + describe(t));
    }
    NodePtr inner = expression();
    if (peek().kind == Tok::RParen) {
      take();
      Node widened = *inner;  // the span includes the parentheses
      widened.begin = begin;
      widened.end = last_->end;
      return make(std::move(widened));
    }
    if (peek().kind != Tok::Comma) expected_close(open, ")");
    take();
    std::vector<NodePtr> rest = sequence(open, Tok::RParen, ")");
    Node n;
    n.kind = Kind::List;
    n.begin = begin;
    n.end = last_->end;
    n.op_pos = begin;
    n.kids.push_back(inner);
    n.kids.insert(n.kids.end(), rest.begin(), rest.end());
    return make(std::move(n));
  }

  NodePtr list() {
    const Token& open = take();
    Node n;
    n.kind = Kind::List;
    n.begin = open.begin;
    n.op_pos = open.begin;
    n.kids = sequence(open, Tok::RBrack, "]");
    n.end = last_->end;
    return make(std::move(n));
  }

  // Lists may only be the right operand of 'in'/'not in' (min/max lists were
  // already unpacked).
  void validate(const Node& n, bool list_allowed) const {
    if (n.kind == Kind::List && !list_allowed)
      fail(n.begin, "a list or tuple can only be used on the right of 'in' or 'not in'");
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
      bool allowed = false;
      if (n.kind == Kind::Compare && k + 1 == n.kids.size() && k > 0)
        allowed = n.cmps[k - 1] == Cmp::In || n.cmps[k - 1] == Cmp::NotIn;
      validate(*n.kids[k], allowed);
    }
  }

  std::string_view text_;
  const SourceLocation& where_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const Token* last_ = nullptr;
  int depth_ = 0;
};

}  // namespace

NodePtr parse_tree(std::string_view text, const SourceLocation& where) { return Parser(text, where).parse(); }

}  // namespace tunekit::detail
