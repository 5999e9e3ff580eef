// The operations a transformer forward pass is written in. Model code (llama.cpp, ...) calls
// these on opaque weights and activations and never sees a layout or a memory; a backend
// implements them: ReferenceOps (scalar f32, the oracle), the compiled CPU backend with repacked
// weights and ISA kernels, the GPU backend with both in device memory. Activations are
// row-major f32 [rows, width] in buffers the backend allocates (host_ops.hpp for the backends
// that compute in host memory); only the logits come back to the host, through read().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ir/tensor_view.hpp"
#include "models/kv_layout.hpp"
#include "util/error.hpp"

namespace kiln::models {

// A weight in whatever form the backend chose (mapped f32, repacked int4, ...).
class Weight {
 public:
  virtual ~Weight() = default;
};

// What a tensor is used as decides how a backend may store it.
enum class WeightUse : std::uint8_t {
  kMatrix,     // [out, in] multiplied by activations
  kEmbedding,  // [vocab, hidden] rows gathered by token id (may also serve as a tied head)
  kVector,     // norm gains and biases, applied element-wise
};

// f32 activations where the backend computes (host or device memory), made by
// Ops::allocate_activations.
class ActivationMemory {
 public:
  virtual ~ActivationMemory() = default;
  virtual std::int64_t size() const = 0;  // floats
};

// A handle to activations the backend allocated: ops read and write them whole, from the start.
struct Activations {
  ActivationMemory* buffer = nullptr;
};

// One output of linear(): out [rows, W.out] = x [rows, W.in] · Wᵀ (+ bias).
struct LinearTarget {
  const Weight* weight = nullptr;
  const Weight* bias = nullptr;  // may be null
  Activations out;
};

// One sequence's part of a step, for attention: its rows in the batch and its KV blocks.
struct AttentionSequence {
  std::int64_t row_begin = 0;  // first row of this sequence in q / out
  std::int64_t num_rows = 0;
  std::int64_t num_cached = 0;  // position of the first row
  std::span<const std::int32_t> block_table;
  // > 0: a row at position p sees only positions > p - window (sliding-window layers); the
  // older positions stay cached but are skipped.
  std::int64_t window = 0;
};

struct RotaryTable {
  const float* cos = nullptr;  // [rows, rotary_dim / 2]
  const float* sin = nullptr;  // [rows, rotary_dim / 2]
  // The leading dims of each head that rotate (partial rotary); the rest pass through.
  // 0 means head_dim.
  std::int64_t rotary_dim = 0;
};

class Ops {
 public:
  virtual ~Ops() = default;

  // Takes a tensor (mapped, never copied unless the backend repacks it) for the given use.
  virtual std::unique_ptr<Weight> load_weight(const ir::TensorView& tensor, WeightUse use) = 0;

  // True when the caller reads every row of every layer (calibration records each linear's
  // input); otherwise the model may drop rows whose hidden state nothing reads once their keys
  // and values are cached (the last layer's rows without logits).
  virtual bool reads_every_row() const { return false; }

  // A buffer of `floats` activations (contents undefined).
  virtual std::unique_ptr<ActivationMemory> allocate_activations(std::int64_t floats) = 0;
  // dst row r [width] = src row rows[r]; src and dst do not overlap.
  virtual void gather_rows(Activations src, std::int64_t width, std::span<const std::int64_t> rows,
                           Activations dst) = 0;
  // host [count] = src [count]: how results (the logits) reach the caller.
  virtual void read(Activations src, std::int64_t count, float* host) = 0;

  // Allocates the paged KV cache; earlier contents are gone.
  virtual void allocate_kv_cache(const KvCacheLayout& layout) = 0;
  virtual const KvCacheLayout& kv_cache_layout() const = 0;

  // out [ids, hidden] = rows of the embedding table.
  virtual void embed(const Weight& table, std::span<const std::int32_t> ids, Activations out) = 0;

  // out [rows, dim] = x / rms(x) * gain.
  virtual void rms_norm(Activations x, const Weight& gain, double eps, std::int64_t rows, std::int64_t dim,
                        Activations out) = 0;

  // residual [rows, dim] += x; out = rms_norm(residual): the residual add fused into the norm
  // that follows it, saving a pass over memory.
  virtual void add_rms_norm(Activations residual, Activations x, const Weight& gain, double eps, std::int64_t rows,
                            std::int64_t dim, Activations out) = 0;

  // acc [count] += x.
  virtual void add(Activations acc, Activations x, std::int64_t count) = 0;

  // Every target multiplies the same x [rows, in]; a backend may quantise x once for all.
  virtual void linear(Activations x, std::int64_t rows, std::span<const LinearTarget> targets) = 0;

  // Rotates q [rows, num_heads, head_dim] and k [rows, num_kv_heads, head_dim] in place, HF
  // "rotate_half" convention over the first rotary_dim dims of each head (dimension i pairs with
  // i + rotary_dim/2).
  virtual void rope(Activations q, Activations k, std::int64_t rows, std::int64_t num_heads, std::int64_t num_kv_heads,
                    std::int64_t head_dim, const RotaryTable& table) = 0;

  // out [count] = silu(gate) * up.
  virtual void silu_mul(Activations gate, Activations up, std::int64_t count, Activations out) = 0;

  // Writes k, v [rows, num_kv_heads, head_dim] of `layer` into the cache at `slots` [rows]
  // (slot = block_id * block_size + offset).
  virtual void store_kv(std::int64_t layer, Activations k, Activations v, std::span<const std::int64_t> slots) = 0;

  // For each copy, in the given order, block dst of every layer's keys and values becomes a copy
  // of block src (all block_size positions, with their scales when quantised). Order matters:
  // a source freed after its copy was planned may be reused as a later copy's destination.
  // Beam search and n-sample requests need it; a backend without it fails here (kUnsupported).
  virtual void copy_kv_blocks(std::span<const KvBlockCopy> copies);

  // Causal attention of q [rows, num_heads, head_dim] over each sequence's cached keys and
  // values (the current rows already stored), limited to each sequence's window when it has
  // one; out has q's shape. GQA: head h reads KV head h / (num_heads / num_kv_heads).
  virtual void attention(std::int64_t layer, Activations q, std::int64_t num_heads,
                         std::span<const AttentionSequence> sequences, float scale, Activations out) = 0;
};

inline void Ops::copy_kv_blocks(std::span<const KvBlockCopy> copies) {
  if (!copies.empty())
    fail(ErrorKind::kUnsupported, "this backend cannot copy KV blocks (needed by beam search and n samples)");
}

}  // namespace kiln::models
