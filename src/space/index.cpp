// Building and querying the space index (see detail/index.hpp for its shape).
//
// Construction is one depth-first pass over the parameters in declaration
// order that builds the diagram bottom-up. What keeps it small and fast:
//
// 1. Independent components. Once a parameter has a value, the later
//    parameters of its component that no longer share a constraint are built
//    separately, and an edge's count is the product of theirs. The split is
//    decided once, from which parameters each constraint reads.
//
// 2. Memoisation by context, on values rather than on parameters. Every
//    constraint is cut, before parameter f, into its largest subexpressions
//    whose parameters all precede f (for `(bx*tx + 2*t) * (by*ty + 2*t) <= M`
//    after tx and ty: the values of bx*tx and by*ty). These values are
//    computed once, at the parameter that completes them, and the node of f
//    depends only on them: two prefixes that agree on them share the node.
//    Identical subexpressions of different constraints are one value.
//
// 3. Constraints run as compiled programs over these values (run_slots), so
//    a check at parameter f costs only the operations that involve f.
//
// Exactness. The expressions are pure, so evaluating a subexpression early
// gives the value Python would compute later. An evaluation error is kept as
// an error value and only makes the constraint false when Python would have
// evaluated that subexpression (`a == 0 or 1 / a > 2`: the error of 1 / a is
// harmless when a == 0), because the program that reads it fails only when
// it loads it. Context keys compare values exactly (type tag and bits; equal
// strings are interned to one pointer), so two prefixes share a node only if
// every later evaluation would see identical inputs.
#include "space/detail/index.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "constraint/detail/int_program.hpp"
#include "constraint/detail/program.hpp"
#include "core/detail/random.hpp"
#include "tunekit/stop.hpp"

namespace tunekit::detail {

namespace {

constexpr std::uint32_t kUnset = UINT32_MAX - 1;
constexpr std::uint64_t kDenseCells = 1u << 12;  // largest dense memo table (cells)
constexpr std::uint64_t kCap = SpaceIndex::kCap;

// a + b and a * b, or kCap with `overflow` set where they exceed 64 bits.
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b, bool& overflow) {
  std::uint64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  overflow = true;
  return kCap;
}
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b, bool& overflow) {
  std::uint64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  overflow = true;
  return kCap;
}

inline std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// Context -> node id, for one parameter. Keys are fixed-width rows of
// 64-bit words (a type tag and a payload per context value).
class Memo {
 public:
  void init(int values) { words_ = 2 * values; }

  // The entry for `key`, inserted (with id kUnset) if missing.
  std::uint32_t find_or_insert(const std::uint64_t* key) {
    if ((entries_ + 1) * 2 > table_.size()) grow();
    const std::size_t w = static_cast<std::size_t>(words_);
    for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const std::uint32_t t = table_[i];
      if (t == 0) {
        keys_.insert(keys_.end(), key, key + w);
        ids_.push_back(kUnset);
        table_[i] = static_cast<std::uint32_t>(++entries_);
        return static_cast<std::uint32_t>(entries_ - 1);
      }
      const std::uint64_t* k = keys_.data() + (t - 1) * w;
      std::size_t j = 0;
      while (j < w && k[j] == key[j]) ++j;
      if (j == w) return t - 1;
    }
  }
  std::uint32_t& id(std::uint32_t entry) { return ids_[entry]; }
  std::size_t bytes() const { return keys_.capacity() * 8 + ids_.capacity() * 4 + table_.capacity() * 4; }
  void release() {
    std::vector<std::uint64_t>().swap(keys_);
    std::vector<std::uint32_t>().swap(ids_);
    std::vector<std::uint32_t>().swap(table_);
  }

 private:
  std::uint64_t hash(const std::uint64_t* key) const {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int k = 0; k < words_; ++k) h = std::rotl(h ^ key[k], 27) * 0x9E3779B97F4A7C15ULL;
    return mix(h);
  }
  void grow() {
    const std::size_t size = table_.empty() ? 256 : table_.size() * 2;
    table_.assign(size, 0);
    mask_ = size - 1;
    const std::size_t w = static_cast<std::size_t>(words_);
    for (std::size_t e = 0; e < entries_; ++e) {
      std::size_t i = hash(keys_.data() + e * w) & mask_;
      while (table_[i] != 0) i = (i + 1) & mask_;
      table_[i] = static_cast<std::uint32_t>(e + 1);
    }
  }

  int words_ = 0;
  std::size_t entries_ = 0;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> ids_;
  std::vector<std::uint32_t> table_;
  std::size_t mask_ = 0;
};

}  // namespace

struct IndexInput {
  const std::vector<Parameter>* params = nullptr;
  std::vector<NodePtr> trees;            // per check: the bound constraint's tree
  std::vector<std::vector<int>> reads;   // per check: the parameters it reads, sorted
  std::vector<std::vector<int>> groups;  // independent groups of parameters
};

class IndexBuilder {
 public:
  IndexBuilder(SpaceIndex& out, const IndexInput& in, std::size_t budget, std::uint64_t* tries_left)
      : out_(out), in_(in), params_(*in.params), budget_(budget), tries_left_(tries_left) {}

  void run() {
    const int n = static_cast<int>(params_.size());
    out_.n_ = n;
    out_.layers_.assign(static_cast<std::size_t>(n), {});
    out_.children_.assign(static_cast<std::size_t>(n), {});
    pn_.resize(static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p) name_to_param_.emplace(params_[p].name, p);
    var_unit_.assign(static_cast<std::size_t>(n), -1);

    // Units: the distinct subexpressions of all constraints.
    for (const auto& t : in_.trees) check_root_.push_back(intern(t));
    // Every parameter's value has a slot.
    for (int p = 0; p < n; ++p)
      if (var_unit_[p] >= 0) slot_of_unit(var_unit_[p]);

    // The component tree.
    std::vector<int> owner(static_cast<std::size_t>(n), -1);
    for (std::size_t g = 0; g < in_.groups.size(); ++g)
      for (int p : in_.groups[g]) owner[p] = static_cast<int>(g);
    std::vector<std::vector<int>> group_checks(in_.groups.size());
    for (std::size_t c = 0; c < in_.reads.size(); ++c)
      group_checks[owner[in_.reads[c][0]]].push_back(static_cast<int>(c));
    for (std::size_t g = 0; g < in_.groups.size(); ++g) {
      out_.roots_.push_back(in_.groups[g][0]);
      split(in_.groups[g], group_checks[g]);
    }

    // Contexts, then the units each parameter computes, then their programs.
    for (int f = 0; f < n; ++f) {
      std::vector<int> units;
      for (int c : pn_[f].cons) cut(check_root_[c], f - 1, units);
      std::sort(units.begin(), units.end());
      units.erase(std::unique(units.begin(), units.end()), units.end());
      for (int u : units) pn_[f].ctx.push_back(slot_of_unit(u));
      pn_[f].memo.init(static_cast<int>(pn_[f].ctx.size()));
      ctx_units_.push_back(std::move(units));
    }
    for (int f = 0; f < n; ++f) {
      for (int c : pn_[f].checks) slot_of_unit(check_root_[c]);
      // Dense memo when the context is a few parameters' values.
      PNode& P = pn_[f];
      std::uint64_t cells = 1;
      bool vars_only = !ctx_units_[f].empty();
      for (int u : ctx_units_[f]) {
        vars_only = vars_only && units_[u].param >= 0;
        if (!vars_only) break;
        P.dense_params.push_back(units_[u].param);
        P.dense_strides.push_back(static_cast<std::uint32_t>(cells));
        cells *= params_[units_[u].param].values.size();
        if (cells > kDenseCells) vars_only = false;
      }
      if (vars_only) {
        P.dense.assign(static_cast<std::size_t>(cells), kUnset);
        bytes_ += cells * 4;
      } else {
        P.dense_params.clear();
        P.dense_strides.clear();
      }
    }
    vidx_.assign(static_cast<std::size_t>(n), 0);
    std::vector<int> ready_stamp(units_.size(), -1);
    for (int f = 0; f < n; ++f) plan(f, ready_stamp);

    // Parameter values as slots, strings interned.
    pv_.resize(static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p) {
      for (const auto& v : params_[p].values) pv_[p].push_back(intern_slot(slot_of(v)));
      auto& layer = out_.layers_[p];
      layer.arity = static_cast<int>(pn_[p].children.size());
      const std::size_t count = params_[p].values.size();
      layer.width = count <= 256 ? 1 : count <= 65536 ? 2 : 4;
      out_.children_[p] = pn_[p].children;
      pn_[p].var_slot = var_unit_[p] >= 0 ? units_[var_unit_[p]].slot : -1;
    }
    val_.assign(static_cast<std::size_t>(slots_), int_slot(0));
    std::size_t widest = 0;
    for (const auto& P : pn_) widest = std::max(widest, P.ctx.size());
    key_.assign(2 * widest, 0);

    // Build.
    std::uint64_t total = 1;
    bool overflow = false;
    for (int r : out_.roots_) {
      const std::uint32_t id = node(r);
      out_.root_nodes_.push_back(id);
      if (id == SpaceIndex::kDead) {
        total = 0;
      } else {
        const SpaceIndex::Layer& R = out_.layers_[r];
        overflow = overflow || R.overflowed(id);
        total = sat_mul(total, R.count(id), overflow);
      }
    }
    if (total == 0) {
      // Keep nothing: no config is valid.
      for (auto& layer : out_.layers_) layer = SpaceIndex::Layer{};
      out_.empty_ = true;
    }
    out_.total_ = total;
    out_.saturated_ = total != 0 && overflow;
    for (auto& P : pn_) {
      P.memo.release();
      std::vector<std::uint32_t>().swap(P.dense);
    }
    finish_layers();
  }

 private:
  struct Unit {
    NodePtr node;
    std::vector<int> kids;
    int level = -1;  // deepest parameter read; -1 = constant
    int param = -1;  // a bare parameter
    bool list = false;
    int slot = -1;
  };
  struct Step {
    int slot;
    const Program* prog;     // null: a check of a value computed earlier
    const IntProgram* fast;  // the int-only fast path of prog, if it has one
    bool check;
    NodePtr tree;  // what prog computes
  };
  struct PNode {
    std::vector<int> cons;              // constraints that read this parameter or a later one of its component
    std::vector<int> checks;            // constraints completed by this parameter
    std::vector<int> children;          // first parameter of each child component
    std::vector<int> ctx;               // slots: the context
    std::vector<Step> steps;            // per value: units to compute and checks, in order
    const IntProgram* fused = nullptr;  // all steps in one int-only program, if they allow it
    int var_slot = -1;
    Memo memo;
    std::uint32_t single = kUnset;  // the node, when the context is empty
    // When the context is only parameter values and their combinations are
    // few: a table indexed by their value indices (mixed radix).
    std::vector<int> dense_params;
    std::vector<std::uint32_t> dense_strides;
    std::vector<std::uint32_t> dense;
  };

  // ------------------------------------------------------------ analysis

  static void append_value_key(std::string& key, const Value& v) {
    if (v.is_int()) {
      key += 'i';
      key += std::to_string(v.as_int());
    } else if (v.is_float()) {
      key += 'f';
      key += std::to_string(std::bit_cast<std::uint64_t>(v.as_float()));
    } else {
      key += 's';
      key += std::to_string(v.as_string().size());
      key += ':';
      key += v.as_string();
    }
  }

  int intern(const NodePtr& np) {
    const Node& n = *np;
    std::vector<int> kids;
    kids.reserve(n.kids.size());
    for (const auto& k : n.kids) kids.push_back(intern(k));
    std::string key;
    key += static_cast<char>('A' + static_cast<int>(n.kind));
    key += std::to_string(n.op);
    key += '/';
    if (n.kind == Kind::Const) append_value_key(key, n.value);
    if (n.kind == Kind::Var) key += n.name;
    for (Cmp c : n.cmps) key += static_cast<char>('a' + static_cast<int>(c));
    key += '(';
    for (int k : kids) key += std::to_string(k) + ',';
    auto [it, fresh] = unit_of_key_.emplace(std::move(key), static_cast<int>(units_.size()));
    if (!fresh) return it->second;
    Unit u;
    u.node = np;
    u.kids = std::move(kids);
    u.list = n.kind == Kind::List;
    if (n.kind == Kind::Var) {
      auto p = name_to_param_.find(n.name);
      if (p == name_to_param_.end()) throw std::logic_error("space index: unbound name " + n.name);
      u.level = u.param = p->second;
      var_unit_[p->second] = it->second;
    } else {
      for (int k : u.kids) u.level = std::max(u.level, units_[k].level);
    }
    units_.push_back(std::move(u));
    return it->second;
  }

  int slot_of_unit(int u) {
    if (units_[u].slot < 0) units_[u].slot = slots_++;
    return units_[u].slot;
  }

  // The largest non-constant subexpressions of unit u that read only
  // parameters up to k (lists are not values: their elements are).
  void cut(int u, int k, std::vector<int>& out) const {
    const Unit& x = units_[u];
    if (x.level < 0) return;
    if (x.level <= k && !x.list) {
      out.push_back(u);
      return;
    }
    for (int kid : x.kids) cut(kid, k, out);
  }

  // Splits a component (parameters in declaration order) on its first
  // parameter; `cons` are the constraints that read its parameters.
  void split(const std::vector<int>& vars, const std::vector<int>& cons) {
    const int f = vars[0];
    PNode& P = pn_[f];
    P.cons = cons;
    std::vector<int> later;
    for (int c : cons) (in_.reads[c].back() == f ? P.checks : later).push_back(c);
    if (vars.size() == 1) return;
    // Union-find over the remaining parameters, linked by the later constraints.
    std::unordered_map<int, int> parent;
    for (std::size_t k = 1; k < vars.size(); ++k) parent[vars[k]] = vars[k];
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (int c : later) {
      int first = -1;
      for (int p : in_.reads[c]) {
        if (p <= f) continue;
        if (first < 0) first = find(p);
        else {
          int a = find(p);
          if (a != first) {
            parent[std::max(a, first)] = std::min(a, first);
            first = std::min(a, first);
          }
        }
      }
    }
    std::unordered_map<int, std::size_t> comp_of_root;
    std::vector<std::vector<int>> comps;
    for (std::size_t k = 1; k < vars.size(); ++k) {
      int root = find(vars[k]);
      auto [it, fresh] = comp_of_root.emplace(root, comps.size());
      if (fresh) comps.emplace_back();
      comps[it->second].push_back(vars[k]);
    }
    std::vector<std::vector<int>> comp_cons(comps.size());
    for (int c : later) {
      for (int p : in_.reads[c])
        if (p > f) {
          comp_cons[comp_of_root[find(p)]].push_back(c);
          break;
        }
    }
    for (std::size_t k = 0; k < comps.size(); ++k) {
      P.children.push_back(comps[k][0]);
      split(comps[k], comp_cons[k]);
    }
  }

  NodePtr var_node(int slot, const Node& origin) const {
    Node v;
    v.kind = Kind::Var;
    v.name = "$" + std::to_string(slot);
    v.begin = origin.begin;
    v.end = origin.end;
    v.op_pos = origin.op_pos;
    return std::make_shared<const Node>(std::move(v));
  }

  // Unit u as an expression over values available at parameter f: earlier
  // units of the context and units of f computed before it.
  NodePtr synth(int u, int f, bool top, const std::vector<int>& ready) const {
    const Unit& x = units_[u];
    if (x.level < 0) return x.node;
    if (!top && x.slot >= 0 && !x.list && (x.level < f || ready[u] == f)) return var_node(x.slot, *x.node);
    if (x.level < f && !x.list) throw std::logic_error("space index: a context value has no slot");
    if (x.param >= 0) throw std::logic_error("space index: parameter value not ready");
    Node copy = *x.node;
    copy.kids.clear();
    for (int k : x.kids) copy.kids.push_back(synth(k, f, false, ready));
    return std::make_shared<const Node>(std::move(copy));
  }

  // Units at level f with a slot, inside u (not u itself), deepest first.
  void emit_within(int u, int f, std::vector<int>& ready) {
    for (int k : units_[u].kids) {
      const Unit& w = units_[k];
      if (w.level != f) continue;
      if (w.slot >= 0 && !w.list) emit(k, f, ready);
      else emit_within(k, f, ready);
    }
  }
  void emit(int u, int f, std::vector<int>& ready) {
    if (ready[u] == f) return;
    const Unit& x = units_[u];
    if (x.param >= 0) {  // the parameter's own value: written directly
      ready[u] = f;
      return;
    }
    emit_within(u, f, ready);
    NodePtr tree = synth(u, f, true, ready);
    auto prog = compile("", {}, tree, slot_of_name_);
    const IntProgram* fast = nullptr;
    if (auto ip = IntProgram::compile(tree, slot_of_name_)) {
      fast_.push_back(std::make_unique<IntProgram>(std::move(*ip)));
      fast = fast_.back().get();
      if (regs_.size() < fast->registers()) regs_.resize(fast->registers());
    }
    pn_[f].steps.push_back(Step{x.slot, prog.get(), fast, false, tree});
    programs_.push_back(std::move(prog));
    ready[u] = f;
  }

  void plan(int f, std::vector<int>& ready) {
    PNode& P = pn_[f];
    if (var_unit_[f] >= 0) ready[var_unit_[f]] = f;
    std::vector<int> done_checks;
    for (int c : P.checks) {
      int r = check_root_[c];
      if (std::find(done_checks.begin(), done_checks.end(), r) != done_checks.end()) continue;
      done_checks.push_back(r);
      emit(r, f, ready);
      P.steps.push_back(Step{units_[r].slot, nullptr, nullptr, true, nullptr});
    }
    for (int child : P.children)
      for (int u : ctx_units_[child])
        if (units_[u].level == f) emit(u, f, ready);
    if (P.steps.size() > 1) {
      std::vector<IntProgram::Step> fused;
      for (const Step& s : P.steps) fused.push_back(IntProgram::Step{s.check ? nullptr : s.tree, s.slot});
      if (auto ip = IntProgram::compile_steps(fused, slot_of_name_)) {
        fast_.push_back(std::make_unique<IntProgram>(std::move(*ip)));
        P.fused = fast_.back().get();
        if (regs_.size() < P.fused->registers()) regs_.resize(P.fused->registers());
      }
    }
  }

  // ------------------------------------------------------------ values

  Slot intern_slot(Slot s) {
    if (s.tag == Tag::Str) s.s = &*strings_.insert(*s.s).first;
    return s;
  }

  static void key_words(const Slot& s, std::uint64_t* w) {
    w[0] = static_cast<std::uint64_t>(s.tag);
    switch (s.tag) {
      case Tag::Int:
        w[1] = static_cast<std::uint64_t>(s.i);
        return;
      case Tag::Float:
        w[1] = std::bit_cast<std::uint64_t>(s.d);
        return;
      case Tag::Str:
        w[1] = reinterpret_cast<std::uintptr_t>(s.s);
        return;
    }
    w[1] = 0;  // an error
  }

  static bool ok(const Slot& s) { return s.tag != kErrorTag && truthy(s); }

  Slot evaluate(const Step& s) {
    if (s.fast) {
      std::int64_t v = 0;
      switch (s.fast->run(val_.data(), regs_.data(), v)) {
        case IntProgram::Outcome::ok:
          return int_slot(v);
        case IntProgram::Outcome::error:
          return error_slot();
        case IntProgram::Outcome::bail:
          break;
      }
    }
    Slot r;
    if (!run_slots(*s.prog, val_.data(), r, temps_)) r = error_slot();
    else if (r.tag == Tag::Str) r = intern_slot(r);
    if (!temps_.strings.empty()) temps_.strings.clear();
    return r;
  }

  // ------------------------------------------------------------ build

  // The node of parameter f for the context now in val_, or kDead.
  std::uint32_t node(int f) {
    PNode& P = pn_[f];
    if (P.ctx.empty()) {
      if (P.single == kUnset) P.single = make_node(f);
      return P.single;
    }
    if (!P.dense.empty()) {
      std::size_t cell = 0;
      for (std::size_t k = 0; k < P.dense_params.size(); ++k) cell += vidx_[P.dense_params[k]] * P.dense_strides[k];
      if (P.dense[cell] == kUnset) {
        const std::uint32_t id = make_node(f);
        P.dense[cell] = id;  // the table does not move: make_node never resizes it
      }
      return P.dense[cell];
    }
    std::uint64_t* key = key_.data();
    for (std::size_t k = 0; k < P.ctx.size(); ++k) key_words(val_[P.ctx[k]], key + 2 * k);
    const std::size_t memo_held = P.memo.bytes();
    const std::uint32_t entry = P.memo.find_or_insert(key);
    // Every context is a memo entry, a dead end's too: in a space with few
    // or no valid configs the memo tables are all the build holds.
    charge(P.memo.bytes() - memo_held, P.memo.bytes());
    const std::uint32_t known = P.memo.id(entry);
    if (known != kUnset) return known;
    const std::uint32_t id = make_node(f);
    P.memo.id(entry) = id;
    return id;
  }

  std::uint32_t make_node(int f) {
    if (stop_requested()) throw CountingStopped();
    PNode& P = pn_[f];
    SpaceIndex::Layer& L = out_.layers_[f];
    // Only this call grows L (the recursion below builds later layers), so
    // the change in what L holds is this node's cost to the budget.
    const std::size_t held_before = held_by(L);
    const std::size_t start = L.edges();
    const auto nvalues = static_cast<std::uint32_t>(pv_[f].size());
    const Slot* values = pv_[f].data();
    if (tries_left_) {
      if (*tries_left_ < nvalues) throw IndexBudgetExceeded();
      *tries_left_ -= nvalues;
    }
    Slot* val = val_.data();
    std::uint64_t cum = 0;
    bool overflow = false;  // the node's count exceeds 64 bits
    for (std::uint32_t v = 0; v < nvalues; ++v) {
      if (P.var_slot >= 0) val[P.var_slot] = values[v];
      vidx_[f] = v;
      IntProgram::StepsOutcome fused = IntProgram::StepsOutcome::bail;
      if (P.fused) fused = P.fused->run_steps(val, regs_.data());
      if (fused == IntProgram::StepsOutcome::rejected) continue;
      if (fused == IntProgram::StepsOutcome::bail) {
        bool pass = true;
        for (const Step& s : P.steps) {
          if (s.prog) val[s.slot] = evaluate(s);
          if (s.check && !ok(val[s.slot])) {
            pass = false;
            break;
          }
        }
        if (!pass) continue;
      }
      std::uint64_t count = 1;
      bool edge_overflow = false;
      const std::size_t mark = L.kids.size();
      for (int child : P.children) {
        const std::uint32_t id = node(child);
        if (id == SpaceIndex::kDead) {
          count = 0;
          break;
        }
        L.kids.push_back(id);
        const SpaceIndex::Layer& C = out_.layers_[child];
        edge_overflow = edge_overflow || C.overflowed(id);
        count = sat_mul(count, C.count(id), edge_overflow);
      }
      if (count == 0) {
        L.kids.resize(mark);
        continue;
      }
      // Children may have reused val_ slots of their own levels; ours (level f
      // and earlier) are untouched.
      overflow = overflow || edge_overflow;  // a dead child's edge, left out, counts for nothing
      cum = sat_add(cum, count, overflow);
      for (int b = 0; b < L.width; ++b) L.values.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
      if (L.arity > 0) L.cum64.push_back(cum);
    }
    const std::size_t end = L.edges();
    if (end == start) {
      // A dead node keeps no edge, but the ones tried may have grown L.
      charge(held_by(L) - held_before, held_by(L));
      return SpaceIndex::kDead;
    }
    L.first.push_back(static_cast<std::uint32_t>(end));
    if (overflow) {
      L.saturated = true;
      L.overflowed_nodes.push_back(static_cast<std::uint32_t>(L.first.size() - 2));
    }
    charge(held_by(L) - held_before, held_by(L));
    if (end > UINT32_MAX - 2) throw IndexBudgetExceeded();
    return static_cast<std::uint32_t>(L.first.size() - 2);
  }

  // Adds `grown` bytes to what the build holds, `held` being what the
  // vector or table that grew now holds; throws past the budget.
  void charge(std::size_t grown, std::size_t held) {
    bytes_ += grown;
    biggest_ = std::max(biggest_, held);
    // A vector that doubles holds its old copy and the new one at once: the
    // attempt stops while the biggest one's next doubling keeps the process
    // within half as much again as the budget.
    if (bytes_ > budget_ || bytes_ + 2 * biggest_ > budget_ + budget_ / 2) throw IndexBudgetExceeded();
  }

  // What a layer's vectors hold as allocated, not as filled: a vector that
  // has just doubled holds twice its contents, and the budget bounds the
  // memory the process holds.
  static std::size_t held_by(const SpaceIndex::Layer& L) {
    return L.first.capacity() * 4 + L.values.capacity() + L.kids.capacity() * 4 + L.cum64.capacity() * 8 +
           L.overflowed_nodes.capacity() * 4;
  }

  void finish_layers() {
    for (auto& L : out_.layers_) {
      bool fits = !L.saturated;
      for (std::uint64_t c : L.cum64) fits = fits && c <= UINT32_MAX;
      if (fits && !L.cum64.empty()) {
        L.cum32.assign(L.cum64.begin(), L.cum64.end());
        std::vector<std::uint64_t>().swap(L.cum64);
      }
      L.first.shrink_to_fit();
      L.values.shrink_to_fit();
      L.kids.shrink_to_fit();
      L.cum64.shrink_to_fit();
      L.cum32.shrink_to_fit();
    }
  }

  SpaceIndex& out_;
  const IndexInput& in_;
  const std::vector<Parameter>& params_;
  std::size_t budget_;
  std::uint64_t* tries_left_;  // null: no bound on the values tried
  std::size_t bytes_ = 0;    // what the index's vectors and memo tables hold (their capacity)
  std::size_t biggest_ = 0;  // the most one layer's vectors, or one memo table, hold

  std::unordered_map<std::string, int> name_to_param_;
  std::unordered_map<std::string, int> unit_of_key_;
  std::vector<Unit> units_;
  std::vector<int> var_unit_;
  std::vector<int> check_root_;
  int slots_ = 0;
  std::vector<PNode> pn_;
  std::vector<std::vector<int>> ctx_units_;
  std::vector<std::shared_ptr<const Program>> programs_;
  std::vector<std::unique_ptr<IntProgram>> fast_;
  const std::function<int(const std::string&)> slot_of_name_ = [](const std::string& name) {
    return std::stoi(name.substr(1));  // synthesised variables are named $SLOT
  };
  std::vector<std::int64_t> regs_;

  std::vector<std::vector<Slot>> pv_;
  std::vector<Slot> val_;
  std::vector<std::uint64_t> key_;   // a context's key (sized for the widest)
  std::vector<std::uint32_t> vidx_;  // the current value index of each parameter
  std::unordered_set<std::string> strings_;
  Temps temps_;
};

// ---------------------------------------------------------------- SpaceIndex

SpaceIndex::SpaceIndex(const Space& space, std::size_t budget_bytes, std::uint64_t* tries_left) {
  n_ = static_cast<int>(space.params_.size());
  bool empty = space.constant_false_;
  for (const auto& p : space.params_) empty = empty || p.values.empty();
  if (empty) {
    layers_.assign(static_cast<std::size_t>(n_), {});
    children_.assign(static_cast<std::size_t>(n_), {});
    empty_ = true;
    total_ = 0;
    return;
  }
  IndexInput in;
  in.params = &space.params_;
  for (const auto& check : space.checks_) {
    if (check.slots.empty()) continue;  // constant: dropped or constant_false_
    in.trees.push_back(ExpressionAccess::program(check.expr)->tree);
    std::vector<int> reads = check.slots;
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    in.reads.push_back(std::move(reads));
  }
  in.groups = space.groups_;
  IndexBuilder(*this, in, budget_bytes, tries_left).run();
}

std::size_t SpaceIndex::bytes() const {
  std::size_t b = sizeof(*this);
  for (const auto& L : layers_)
    b += sizeof(L) + L.first.capacity() * 4 + L.values.capacity() + L.kids.capacity() * 4 + L.cum64.capacity() * 8 +
         L.cum32.capacity() * 4;
  for (const auto& c : children_) b += sizeof(c) + c.capacity() * sizeof(int);
  b += roots_.capacity() * sizeof(int) + root_nodes_.capacity() * 4;
  return b;
}

std::size_t SpaceIndex::node_count() const {
  std::size_t n = 0;
  for (const auto& L : layers_) n += L.first.size() - 1;
  return n;
}

std::size_t SpaceIndex::edge_count() const {
  std::size_t n = 0;
  for (const auto& L : layers_) n += L.edges();
  return n;
}

std::size_t SpaceIndex::Layer::find_value(std::uint32_t node, std::uint32_t v) const {
  std::size_t lo = first[node], hi = first[node + 1];
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    const std::uint32_t x = value(mid);
    if (x == v) return mid;
    if (x < v) lo = mid + 1;
    else hi = mid;
  }
  return SIZE_MAX;
}

std::size_t SpaceIndex::Layer::find_rank(std::uint32_t node, std::uint64_t q) const {
  const std::size_t f = first[node];
  if (arity == 0) return f + static_cast<std::size_t>(q);
  std::size_t lo = f, hi = first[node + 1] - 1;  // the answer is in [lo, hi]
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (cum(mid, f) > q) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

namespace {

// Current node per parameter, seeded with the roots. On the stack for
// spaces of up to kInline parameters: rank, at and contains run once per
// candidate a search looks at, and malloc and free were a large share of
// `auto`'s profile on the hub's GEMM space (bench/search/run.sh --large).
struct Cursor {
  static constexpr int kInline = 32;
  std::array<std::uint32_t, kInline> inline_{};
  std::vector<std::uint32_t> heap_;
  std::uint32_t* node;
  Cursor(int n, const std::vector<int>& roots, const std::vector<std::uint32_t>& root_nodes) {
    if (n <= kInline) {
      node = inline_.data();
    } else {
      heap_.assign(static_cast<std::size_t>(n), 0);
      node = heap_.data();
    }
    for (std::size_t r = 0; r < roots.size(); ++r) node[roots[r]] = root_nodes[r];
  }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
};

}  // namespace

void SpaceIndex::at(std::uint64_t i, std::uint32_t* out) const {
  Cursor cur(n_, roots_, root_nodes_);
  std::uint64_t prod = total_, rem = i;
  for (int f = 0; f < n_; ++f) {
    const Layer& L = layers_[f];
    const std::uint32_t N = cur.node[f];
    const std::uint64_t rest = prod / L.count(N);  // completions of the other open components
    const std::size_t first = L.first[N];
    const std::size_t e = L.find_rank(N, rem / rest);
    const std::uint64_t before = e == first ? 0 : L.cum(e - 1, first);
    rem -= before * rest;
    prod = rest * (L.cum(e, first) - before);
    out[f] = L.value(e);
    const std::size_t a = static_cast<std::size_t>(L.arity);
    for (std::size_t j = 0; j < a; ++j) cur.node[children_[f][j]] = L.kids[e * a + j];
  }
}

std::optional<std::uint64_t> SpaceIndex::rank(const std::uint32_t* idx) const {
  if (empty_) return std::nullopt;
  Cursor cur(n_, roots_, root_nodes_);
  std::uint64_t prod = total_, r = 0;
  for (int f = 0; f < n_; ++f) {
    const Layer& L = layers_[f];
    const std::uint32_t N = cur.node[f];
    const std::size_t e = L.find_value(N, idx[f]);
    if (e == SIZE_MAX) return std::nullopt;
    const std::size_t first = L.first[N];
    const std::uint64_t rest = prod / L.count(N);
    const std::uint64_t before = e == first ? 0 : L.cum(e - 1, first);
    r += before * rest;
    prod = rest * (L.cum(e, first) - before);
    const std::size_t a = static_cast<std::size_t>(L.arity);
    for (std::size_t j = 0; j < a; ++j) cur.node[children_[f][j]] = L.kids[e * a + j];
  }
  return r;
}

bool SpaceIndex::contains(const std::uint32_t* idx) const {
  return !empty_ && first_invalid(idx) == static_cast<std::size_t>(n_);
}

std::size_t SpaceIndex::first_invalid(const std::uint32_t* idx) const {
  if (empty_) return 0;
  Cursor cur(n_, roots_, root_nodes_);
  for (int f = 0; f < n_; ++f) {
    const Layer& L = layers_[f];
    const std::size_t e = L.find_value(cur.node[f], idx[f]);
    if (e == SIZE_MAX) return static_cast<std::size_t>(f);
    const std::size_t a = static_cast<std::size_t>(L.arity);
    for (std::size_t j = 0; j < a; ++j) cur.node[children_[f][j]] = L.kids[e * a + j];
  }
  return static_cast<std::size_t>(n_);
}

void SpaceIndex::random(std::mt19937_64& rng, std::uint32_t* out) const {
  if (empty_) throw std::out_of_range("Space::random: the space has no valid config");
  Cursor cur(n_, roots_, root_nodes_);
  for (int f = 0; f < n_; ++f) {
    const Layer& L = layers_[f];
    const std::uint32_t N = cur.node[f];
    const std::uint64_t c = L.count(N);
    if (L.overflowed(N)) throw std::overflow_error("Space::random: a count exceeds 64 bits");
    const std::size_t e = L.find_rank(N, uniform_below(rng, c));
    out[f] = L.value(e);
    const std::size_t a = static_cast<std::size_t>(L.arity);
    for (std::size_t j = 0; j < a; ++j) cur.node[children_[f][j]] = L.kids[e * a + j];
  }
}

bool SpaceIndex::for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit) const {
  if (empty_) return true;
  if (n_ == 0) return visit(std::span<const std::uint32_t>());
  // An odometer over the diagram: e[f] is parameter f's current edge; when
  // it moves, the later parameters restart at the first edge of their
  // (possibly new) nodes.
  Cursor cur(n_, roots_, root_nodes_);
  const auto n = static_cast<std::size_t>(n_);
  std::vector<std::uint32_t> idx(n, 0);
  std::vector<std::size_t> e(n, 0), end(n, 0);
  auto enter = [&](std::size_t f) {  // parameter f's edge e[f] is chosen
    const Layer& L = layers_[f];
    idx[f] = L.value(e[f]);
    const std::size_t a = static_cast<std::size_t>(L.arity);
    const std::uint32_t* kids = L.kids.data() + e[f] * a;
    for (std::size_t j = 0; j < a; ++j) cur.node[children_[f][j]] = kids[j];
  };
  auto restart = [&](std::size_t from) {
    for (std::size_t g = from; g < n; ++g) {
      const Layer& L = layers_[g];
      const std::uint32_t N = cur.node[g];
      e[g] = L.first[N];
      end[g] = L.first[N + 1];
      enter(g);
    }
  };
  restart(0);
  const std::span<const std::uint32_t> view(idx);
  while (true) {
    if (!visit(view)) return false;
    std::size_t f = n;
    while (f > 0 && e[f - 1] + 1 == end[f - 1]) --f;
    if (f == 0) return true;
    ++e[f - 1];
    enter(f - 1);
    restart(f);
  }
}

}  // namespace tunekit::detail
