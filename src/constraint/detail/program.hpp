#pragma once
// The parsed form of an Expression: a small immutable syntax tree (kept for
// bind()) and the flat postfix program the interpreter runs.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "constraint/detail/semantics.hpp"
#include "tunekit/constraint.hpp"
#include "tunekit/error.hpp"
#include "tunekit/value.hpp"

namespace tunekit::detail {

// ------------------------------------------------------------------ syntax

struct Node;
using NodePtr = std::shared_ptr<const Node>;

enum class Kind : std::uint8_t {
  Const,    // value
  Var,      // name
  Unary,    // op = UnOp, kids[0]
  Binary,   // op = BinOp, kids[0], kids[1]
  And,      // kids[0] and kids[1] and ...
  Or,       // kids[0] or kids[1] or ...
  Compare,  // kids[0] cmps[0] kids[1] cmps[1] kids[2] ... (a Python chain)
  Call,     // op = Fn, kids = arguments
  IfElse,   // kids[0] if kids[1] else kids[2]
  List,     // [a, b] or (a, b): only as the right operand of 'in'/'not in'
};

struct Node {
  Kind kind = Kind::Const;
  std::uint8_t op = 0;
  Value value;
  std::string name;
  std::vector<NodePtr> kids;
  std::vector<Cmp> cmps;
  int begin = 0;  // source span [begin, end) in bytes of the original text
  int end = 0;
  int op_pos = 0;  // byte offset of the operator / function name
  int depth = 1;   // height of the subtree (bounded by the parser)
};

// Parses `text` into a tree; throws InputError located relative to `where`.
NodePtr parse_tree(std::string_view text, const SourceLocation& where);

// Substitutes the names found in `constants` (may be null) and folds every
// operation whose operands are constant and that evaluates without error.
NodePtr simplify(const NodePtr& node, const Bindings* constants);

// ------------------------------------------------------------------ program

enum class Op : std::uint8_t {
  Const,  // push consts[arg]
  Var,    // push variable arg
  // binary arithmetic: pop b, pop a, push a OP b
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
  Neg,
  Pos,
  Invert,
  Not,
  // comparisons: pop b, pop a, push bool
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  In,
  NotIn,
  // chained comparison step: pop b, pop a; if a OP b push b and go on,
  // else push False and jump to arg. `cmp` holds the Cmp.
  Chain,
  InList,            // pop arg elements and x, push x in elements
  NotInList,         // pop arg elements and x, push x not in elements
  JumpIfFalseOrPop,  // if top is falsy jump to arg, else pop
  JumpIfTrueOrPop,   // if top is truthy jump to arg, else pop
  PopJumpIfFalse,    // pop; if falsy jump to arg
  Jump,
  Call,  // `cmp` holds the Fn, arg the number of arguments
};

struct Instr {
  Op op;
  std::uint8_t sub = 0;
  std::int32_t arg = 0;
};

struct Program {
  std::string text;
  SourceLocation where;
  std::vector<std::string> variables;
  NodePtr tree;  // simplified tree, the input of bind()

  std::vector<Instr> code;
  std::vector<Value> constants;  // owns the strings const_slots point at
  std::vector<Slot> const_slots;
  std::vector<const Node*> origin;  // per instruction: the node it came from (for messages)
  int max_stack = 0;

  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
};

// Builds the program for `tree`.
std::shared_ptr<const Program> compile(std::string text, SourceLocation where, NodePtr tree);
// Same, but a Var instruction's argument is var_index(name) rather than the
// name's position in `variables` (for run_slots over a caller's slot array).
std::shared_ptr<const Program> compile(std::string text, SourceLocation where, NodePtr tree,
                                       const std::function<int(const std::string&)>& var_index);

struct Failure {
  Fail kind = Fail::None;
  int pc = -1;
  Tag a = Tag::Int, b = Tag::Int;  // operand types of the failing instruction
};

// Runs `p`; false on an evaluation error (described in `failure` if given).
bool run(const Program& p, std::span<const Value> vars, Slot& result, Temps& temps, Failure* failure);

// A stack slot that stands for a deferred evaluation error (the space engine
// evaluates subexpressions ahead of time; an error there surfaces only when
// the value is used). Never produced by run(); run_slots() fails on loading it.
inline constexpr Tag kErrorTag = static_cast<Tag>(3);
inline Slot error_slot() {
  Slot r;
  r.tag = kErrorTag;
  r.i = 0;
  return r;
}

// Runs `p` with its variables read from `vars[arg]` (the Var instructions'
// arguments index `vars` directly: the caller renumbers them). Loading an
// error slot is an evaluation error. False on an evaluation error.
bool run_slots(const Program& p, const Slot* vars, Slot& result, Temps& temps);

// Read access to an Expression's compiled program.
struct ExpressionAccess {
  static const std::shared_ptr<const Program>& program(const Expression& e) { return e.program_; }
};

// Byte offset -> 0-based character index (UTF-8 aware).
int char_index(std::string_view text, int byte_offset);

}  // namespace tunekit::detail
