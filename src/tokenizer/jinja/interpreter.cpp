// Statement execution and the interpreter's bookkeeping (scopes, limits, calls). Scoping rules
// are Jinja2's: `if` shares its scope, every loop iteration, macro call, call block, filter
// block, set block and `with` gets a child scope.
#include "tokenizer/jinja/interpreter.hpp"

#include "tokenizer/jinja/filters.hpp"
#include "tokenizer/jinja/globals.hpp"
#include "tokenizer/jinja/objects.hpp"
#include "tokenizer/jinja/operators.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/render_memory.hpp"
#include "tokenizer/jinja/tests.hpp"

namespace kiln::jinja {

Value* Scope::find(std::string_view name) {
  for (Scope* s = this; s != nullptr; s = s->parent_) {
    for (auto& [key, value] : s->vars_) {
      if (key == name) return &value;
    }
  }
  return nullptr;
}

void Scope::set(std::string_view name, Value value) {
  for (auto& [key, old] : vars_) {
    if (key == name) {
      old = std::move(value);
      return;
    }
  }
  RenderMemory::acquire(sizeof(vars_[0]) + name.size());  // held, like the scope, to the render's end
  vars_.emplace_back(std::string(name), std::move(value));
}

Interpreter::Interpreter(std::string_view source, const RenderLimits& limits, LocalTimeSource local_time)
    : source_(source), limits_(limits), local_time_(std::move(local_time)) {}

Interpreter::~Interpreter() {
  // Namespaces are the only mutable objects, so every reference cycle passes through one.
  for (auto& ns : namespaces_) ns->clear();
}

std::string Interpreter::render(const ast::Body& body, const Dict& context) {
  RenderMemory memory(limits_.max_memory_bytes);
  deadline_ = std::chrono::steady_clock::now() + limits_.max_time;
  char stack_marker;
  stack_base_ = &stack_marker;
  Scope* globals = new_scope(nullptr);
  install_globals(*globals);
  Scope* root = new_scope(globals);
  for (const auto& [key, value] : context.entries()) {
    if (key.is_string()) root->set(key.as_string(), value);
  }
  std::string out;
  exec_body(body, root, out);
  return out;
}

Scope* Interpreter::new_scope(Scope* parent) {
  // Every scope lives to the end of the render (macros and loops may still refer to it), so a
  // long loop holds one for each turn: weighed like values, or a loop of millions of turns
  // within the time limit would hold gigabytes.
  RenderMemory::acquire(sizeof(Scope));
  return &scopes_.emplace_back(parent);
}

std::shared_ptr<Namespace> Interpreter::make_namespace() {
  auto ns = std::make_shared<Namespace>();
  namespaces_.push_back(ns);
  return ns;
}

void Interpreter::count_step() {
  if (++steps_ > limits_.max_steps) {
    raise(ErrorType::kLimitError, "template exceeded kiln's limit of {} evaluation steps", limits_.max_steps);
  }
  // The clock is read every 4096 steps (a few microseconds of work apart).
  if ((steps_ & 4095) == 0 && std::chrono::steady_clock::now() > deadline_) {
    raise(ErrorType::kLimitError, "template exceeded kiln's time limit of {} ms for one render",
          limits_.max_time.count());
  }
}

void Interpreter::check_stack() const {
  char marker;
  const auto used = static_cast<size_t>(stack_base_ - &marker);
  if (stack_base_ != nullptr && used > limits_.max_stack_bytes) {
    raise(ErrorType::kRecursionError, "maximum recursion depth exceeded (kiln's limit is {} bytes of stack)",
          limits_.max_stack_bytes);
  }
}

void Interpreter::check_size(size_t bytes) const {
  if (bytes > limits_.max_output_bytes) {
    raise(ErrorType::kLimitError, "template output exceeds kiln's limit of {} bytes", limits_.max_output_bytes);
  }
}

void Interpreter::check_items(size_t count) const {
  if (count > limits_.max_output_bytes / sizeof(Value)) {
    raise(ErrorType::kLimitError, "a list of {} items exceeds kiln's limit of {} bytes ({} bytes an item)", count,
          limits_.max_output_bytes, sizeof(Value));
  }
}

void Interpreter::append_output(std::string& out, std::string_view text) const {
  check_size(out.size() + text.size());
  out += text;
}

int Interpreter::line_of(uint32_t offset) const {
  int line = 1;
  for (size_t i = 0; i < offset && i < source_.size(); ++i) line += source_[i] == '\n';
  return line;
}

Interpreter::CallGuard::CallGuard(Interpreter& interp) : interp_(interp) {
  if (++interp_.call_depth_ > interp_.limits_.max_call_depth) {
    --interp_.call_depth_;
    raise(ErrorType::kRecursionError, "maximum recursion depth exceeded (kiln's limit is {} nested macro calls)",
          interp_.limits_.max_call_depth);
  }
}

Value Interpreter::call(const Value& callee, CallArgs args) {
  if (callee.is_undefined()) raise_undefined(callee);
  if (callee.is_object() && callee.as_object().is_callable()) {
    return callee.as_object().call(*this, std::move(args));
  }
  raise(ErrorType::kTypeError, "'{}' object is not callable", type_name(callee));
}

Value Interpreter::apply_filter(std::string_view name, const Value& input, CallArgs args) {
  const FilterEntry* entry = find_filter(name);
  if (entry == nullptr) {
    raise(ErrorType::kTemplateRuntimeError, "No filter named {}.", repr_string(name));
  }
  return entry->fn(*this, input, args);
}

bool Interpreter::apply_test(std::string_view name, const Value& input, CallArgs args) {
  const TestEntry* entry = find_test(name);
  if (entry == nullptr) {
    raise(ErrorType::kTemplateRuntimeError, "No test named {}.", repr_string(name));
  }
  return entry->fn(*this, input, args);
}

// ---- statements ----

Interpreter::Flow Interpreter::exec_body(const ast::Body& body, Scope* scope, std::string& out) {
  for (const ast::StmtPtr& stmt : body) {
    const Flow flow = exec(*stmt, scope, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const ast::Stmt& stmt, Scope* scope, std::string& out) {
  count_step();
  check_stack();
  try {
    switch (stmt.kind) {
      case ast::StmtKind::kOutput: return exec_output(static_cast<const ast::Output&>(stmt), scope, out);
      case ast::StmtKind::kIf: return exec_if(static_cast<const ast::If&>(stmt), scope, out);
      case ast::StmtKind::kFor: return exec_for(static_cast<const ast::For&>(stmt), scope, out);
      case ast::StmtKind::kAssign: {
        const auto& node = static_cast<const ast::Assign&>(stmt);
        assign(*node.target, eval(*node.value, scope), scope);
        return Flow::kNormal;
      }
      case ast::StmtKind::kAssignBlock:
        exec_assign_block(static_cast<const ast::AssignBlock&>(stmt), scope);
        return Flow::kNormal;
      case ast::StmtKind::kMacro: {
        const auto& node = static_cast<const ast::Macro&>(stmt);
        scope->set(node.name, Value::object(std::make_shared<Macro>(node.name, node.signature, node.body, scope)));
        return Flow::kNormal;
      }
      case ast::StmtKind::kCallBlock:
        exec_call_block(static_cast<const ast::CallBlock&>(stmt), scope, out);
        return Flow::kNormal;
      case ast::StmtKind::kFilterBlock:
        exec_filter_block(static_cast<const ast::FilterBlock&>(stmt), scope, out);
        return Flow::kNormal;
      case ast::StmtKind::kWith: exec_with(static_cast<const ast::With&>(stmt), scope, out); return Flow::kNormal;
      case ast::StmtKind::kBreak: return Flow::kBreak;
      case ast::StmtKind::kContinue: return Flow::kContinue;
      case ast::StmtKind::kScope:
        exec_body(static_cast<const ast::Scope&>(stmt).body, new_scope(scope), out);
        return Flow::kNormal;
    }
  } catch (Exception& e) {
    if (e.offset == kNoOffset) e.offset = stmt.offset;
    throw;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_output(const ast::Output& node, Scope* scope, std::string& out) {
  for (const ast::OutputPart& part : node.parts) {
    if (part.expr == nullptr) {
      append_output(out, part.text);
      continue;
    }
    const Value v = eval(*part.expr, scope);
    if (v.is_string()) {
      append_output(out, v.as_string());
    } else {
      append_output(out, python_str(v));
    }
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_if(const ast::If& node, Scope* scope, std::string& out) {
  for (const auto& [test, body] : node.branches) {
    if (truthy(eval(*test, scope))) return exec_body(body, scope, out);
  }
  return exec_body(node.else_body, scope, out);
}

Interpreter::Flow Interpreter::exec_for(const ast::For& node, Scope* scope, std::string& out) {
  run_loop(node, eval(*node.iterable, scope), scope, out, 1);
  return Flow::kNormal;
}

void Interpreter::run_loop(const ast::For& node, const Value& iterable, Scope* scope, std::string& out, int depth) {
  ValueList items = iterate(iterable);
  if (node.filter != nullptr) {
    ValueList kept;
    for (Value& item : items) {
      Scope* test_scope = new_scope(scope);
      assign(*node.target, item, test_scope);
      if (truthy(eval(*node.filter, test_scope))) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec_body(node.else_body, new_scope(scope), out);
    return;
  }
  auto loop = std::make_shared<LoopContext>(std::move(items), node.recursive ? &node : nullptr, scope, depth);
  const Value loop_value = Value::object(loop);
  for (size_t i = 0; i < loop->size(); ++i) {
    count_step();
    loop->advance(i);
    Scope* iteration = new_scope(scope);
    iteration->set("loop", loop_value);
    assign(*node.target, loop->item(i), iteration);
    if (exec_body(node.body, iteration, out) == Flow::kBreak) break;
  }
}

void Interpreter::assign(const ast::Expr& target, Value value, Scope* scope) {
  switch (target.kind) {
    case ast::ExprKind::kName: scope->set(static_cast<const ast::Name&>(target).name, std::move(value)); return;
    case ast::ExprKind::kNsRef: {
      const auto& ref = static_cast<const ast::NsRef&>(target);
      Value* ns = scope->find(ref.name);
      auto* object = ns != nullptr && ns->is_object() ? dynamic_cast<Namespace*>(&ns->as_object()) : nullptr;
      if (object == nullptr) {
        raise(ErrorType::kTemplateRuntimeError, "cannot assign attribute on non-namespace object");
      }
      object->set(ref.attribute, std::move(value));
      return;
    }
    case ast::ExprKind::kTuple: {
      const auto& targets = static_cast<const ast::Sequence&>(target).items;
      ValueList items = iterate(value);
      if (items.size() < targets.size()) {
        raise(ErrorType::kValueError, "not enough values to unpack (expected {}, got {})", targets.size(),
              items.size());
      }
      if (items.size() > targets.size()) {
        raise(ErrorType::kValueError, "too many values to unpack (expected {})", targets.size());
      }
      for (size_t i = 0; i < targets.size(); ++i) assign(*targets[i], std::move(items[i]), scope);
      return;
    }
    default: raise(ErrorType::kTemplateSyntaxError, "can't assign to this expression");
  }
}

void Interpreter::exec_assign_block(const ast::AssignBlock& node, Scope* scope) {
  Scope* inner = new_scope(scope);
  std::string captured;
  exec_body(node.body, inner, captured);
  Value value = Value::string(std::move(captured));
  if (node.filter != nullptr) value = eval_filter_chain(*node.filter, inner, value);
  assign(*node.target, std::move(value), scope);
}

void Interpreter::exec_call_block(const ast::CallBlock& node, Scope* scope, std::string& out) {
  const auto& call = static_cast<const ast::Call&>(*node.call);
  const Value callee = eval(*call.callee, scope);
  CallArgs args = eval_args(call.args, scope);
  args.keyword.emplace_back("caller",
                            Value::object(std::make_shared<Macro>("caller", node.signature, node.body, scope)));
  Value result;
  try {
    result = this->call(callee, std::move(args));
  } catch (Exception& e) {
    if (e.offset == kNoOffset) e.offset = call.offset;
    throw;
  }
  append_output(out, python_str(result));
}

void Interpreter::exec_filter_block(const ast::FilterBlock& node, Scope* scope, std::string& out) {
  Scope* inner = new_scope(scope);
  std::string captured;
  exec_body(node.body, inner, captured);
  const Value result = eval_filter_chain(*node.filter, inner, Value::string(std::move(captured)));
  append_output(out, python_str(result));
}

void Interpreter::exec_with(const ast::With& node, Scope* scope, std::string& out) {
  Scope* inner = new_scope(scope);
  for (size_t i = 0; i < node.targets.size(); ++i) {
    assign(*node.targets[i], eval(*node.values[i], scope), inner);
  }
  exec_body(node.body, inner, out);
}

}  // namespace kiln::jinja
