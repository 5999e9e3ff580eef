// Walks the syntax tree and renders it, with the semantics of Jinja2's compiled templates:
// per-iteration loop scopes, macros that see their defining scope at call time, `set` that
// leaks out of `if` but not out of `for`, and the immutable sandbox's attribute rules.
// Bounded: output bytes, memory held, call depth, evaluation steps and time (RenderLimits) end
// a runaway template with a clear error instead of exhausting memory, stack or time.
#pragma once

#include <chrono>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.hpp"
#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;   // any string or list the template builds, too
  size_t max_memory_bytes = size_t{256} << 20;  // what the render's values hold at once (RenderMemory)
  int max_call_depth = 128;                     // nested macro calls and recursive loops
  uint64_t max_steps = 20'000'000;              // evaluated nodes and loop iterations
  // Wall time of one render: real chat templates take well under a millisecond, so a hostile
  // one trips this long before the step limit (seconds of work on a slow machine).
  std::chrono::milliseconds max_time{1000};
  size_t max_stack_bytes = size_t{2} << 20;  // C++ stack the interpreter may use
};

// The broken-down local time strftime_now() formats; injectable so renders are reproducible.
using LocalTimeSource = std::function<std::tm()>;

// Variables visible to a template body. Lookups walk outwards to the globals.
class Scope {
 public:
  explicit Scope(Scope* parent) : parent_(parent) {}
  Value* find(std::string_view name);
  void set(std::string_view name, Value value);
  Scope* parent() const { return parent_; }

 private:
  Scope* parent_;
  std::vector<std::pair<std::string, Value>> vars_;  // few per scope: a linear scan is fastest
};

class Namespace;

class Interpreter {
 public:
  // `source` is the normalized template text the tree's offsets refer to.
  Interpreter(std::string_view source, const RenderLimits& limits, LocalTimeSource local_time);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders a template body with `context` as its variables (over the built-in globals).
  std::string render(const ast::Body& body, const Dict& context);

  // ---- services for filters, tests, methods and objects ----
  Value call(const Value& callee, CallArgs args);
  Value apply_filter(std::string_view name, const Value& input, CallArgs args);
  bool apply_test(std::string_view name, const Value& input, CallArgs args);
  Value getattr(const Value& object, std::string_view name);  // sandboxed `object.name`
  Value getitem(const Value& object, const Value& key);       // sandboxed `object[key]`
  // The items of an iterable as Python's iter() yields them (dict keys, string characters);
  // a TypeError for values that are not iterable.
  ValueList iterate(const Value& iterable);
  void count_step();
  void check_stack() const;
  void check_size(size_t bytes) const;  // a string about to be built; LimitError when too big
  // A list about to be built from others: each item weighs a Value against the same limit (a
  // 64 MiB list of items is gigabytes of Values).
  void check_items(size_t count) const;
  const RenderLimits& limits() const { return limits_; }
  std::tm local_time() const { return local_time_(); }
  std::shared_ptr<Namespace> make_namespace();

  // Used by macro and loop objects.
  Scope* new_scope(Scope* parent);
  enum class Flow : uint8_t { kNormal, kBreak, kContinue };
  Flow exec_body(const ast::Body& body, Scope* scope, std::string& out);
  Value eval(const ast::Expr& expr, Scope* scope);
  void run_loop(const ast::For& node, const Value& iterable, Scope* scope, std::string& out, int depth);

  // Tracks nesting of macro calls and recursive loops against max_call_depth.
  class CallGuard {
   public:
    explicit CallGuard(Interpreter& interp);
    ~CallGuard() { --interp_.call_depth_; }
    CallGuard(const CallGuard&) = delete;
    CallGuard& operator=(const CallGuard&) = delete;

   private:
    Interpreter& interp_;
  };

 private:
  Flow exec(const ast::Stmt& stmt, Scope* scope, std::string& out);
  Flow exec_output(const ast::Output& node, Scope* scope, std::string& out);
  Flow exec_if(const ast::If& node, Scope* scope, std::string& out);
  Flow exec_for(const ast::For& node, Scope* scope, std::string& out);
  void exec_assign_block(const ast::AssignBlock& node, Scope* scope);
  void exec_macro(const ast::Macro& node, Scope* scope);
  void exec_call_block(const ast::CallBlock& node, Scope* scope, std::string& out);
  void exec_filter_block(const ast::FilterBlock& node, Scope* scope, std::string& out);
  void exec_with(const ast::With& node, Scope* scope, std::string& out);
  void assign(const ast::Expr& target, Value value, Scope* scope);
  void append_output(std::string& out, std::string_view text) const;
  int line_of(uint32_t offset) const;

  Value eval_inner(const ast::Expr& expr, Scope* scope);
  Value eval_name(const ast::Name& node, Scope* scope);
  Value eval_call(const ast::Call& node, Scope* scope);
  CallArgs eval_args(const ast::Arguments& args, Scope* scope);
  Value eval_filter(const ast::Filter& node, Scope* scope);
  // Evaluates a {% filter %} / {% set x | f %} chain whose innermost operand is `input`.
  Value eval_filter_chain(const ast::Expr& filter, Scope* scope, const Value& input);
  Value eval_test(const ast::Test& node, Scope* scope);
  Value eval_compare(const ast::Compare& node, Scope* scope);
  Value eval_concat(const ast::Concat& node, Scope* scope);
  Value eval_getitem(const ast::Getitem& node, Scope* scope);
  Value eval_cond(const ast::CondExpr& node, Scope* scope);
  Value eval_dict(const ast::DictLiteral& node, Scope* scope);

  std::string_view source_;
  RenderLimits limits_;
  LocalTimeSource local_time_;
  std::deque<Scope> scopes_;                            // every scope of this render; freed together at the end
  std::vector<std::shared_ptr<Namespace>> namespaces_;  // cleared at the end to break cycles
  const char* stack_base_ = nullptr;                    // the stack address when render() started
  const Value* block_input_ = nullptr;                  // the body a filter chain of a block applies to
  uint64_t steps_ = 0;
  std::chrono::steady_clock::time_point deadline_;  // render()'s start + limits_.max_time
  int call_depth_ = 0;
};

}  // namespace kiln::jinja
