#include "runtime/reference/reference_ops.hpp"

#include <algorithm>

#include "ir/tensor_convert.hpp"
#include "kernels/reference/elementwise.hpp"
#include "kernels/reference/paged_attention.hpp"
#include "util/error.hpp"

namespace kiln::runtime {
namespace {

namespace ref = kernels::reference;
using models::host;

// A mapped tensor; vectors (norm gains, biases) are converted to f32 once since they are tiny.
class ReferenceWeight final : public models::Weight {
 public:
  ReferenceWeight(const ir::TensorView& view, models::WeightUse use) : view_(view) {
    if (use == models::WeightUse::kVector) values_ = ir::to_f32(view);
  }
  const ir::TensorView& view() const { return view_; }
  std::int64_t rows() const { return view_.shape.front(); }
  std::int64_t cols() const { return view_.shape.size() > 1 ? view_.shape[1] : 1; }
  const float* vector() const { return values_.data(); }

 private:
  ir::TensorView view_;
  std::vector<float> values_;
};

const ReferenceWeight& as_reference(const models::Weight& w) { return static_cast<const ReferenceWeight&>(w); }

}  // namespace

std::unique_ptr<models::Weight> ReferenceOps::load_weight(const ir::TensorView& tensor, models::WeightUse use) {
  if (use != models::WeightUse::kVector && tensor.shape.size() != 2) {
    fail("tensor '{}': expected a matrix, got shape {}", tensor.name, ir::format_shape(tensor.shape));
  }
  return std::make_unique<ReferenceWeight>(tensor, use);
}

void ReferenceOps::allocate_kv_cache(const models::KvCacheLayout& layout) {
  if (layout.precision != ElementType::kF32) {
    fail(ErrorKind::kUnsupported, "the reference backend keeps its KV cache in f32 only");
  }
  kv_layout_ = layout;
  const auto per_layer =
      static_cast<std::size_t>(layout.num_blocks * layout.num_kv_heads * layout.block_size * layout.head_dim);
  keys_.assign(static_cast<std::size_t>(layout.num_layers), std::vector<float>(per_layer));
  values_.assign(static_cast<std::size_t>(layout.num_layers), std::vector<float>(per_layer));
}

void ReferenceOps::embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations rows) {
  float* out = host(rows);
  const ReferenceWeight& t = as_reference(table);
  const std::int64_t dim = t.cols();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ir::convert_to_f32(t.view(), ids[i] * dim, dim, out + static_cast<std::int64_t>(i) * dim);
  }
}

void ReferenceOps::rms_norm(models::Activations x, const models::Weight& gain, double eps, std::int64_t rows,
                            std::int64_t dim, models::Activations out) {
  ref::rms_norm(host(x), as_reference(gain).vector(), eps, rows, dim, host(out));
}

void ReferenceOps::add_rms_norm(models::Activations residual, models::Activations x, const models::Weight& gain,
                                double eps, std::int64_t rows, std::int64_t dim, models::Activations out) {
  ref::add(host(residual), host(x), rows * dim);
  ref::rms_norm(host(residual), as_reference(gain).vector(), eps, rows, dim, host(out));
}

void ReferenceOps::add(models::Activations acc, models::Activations x, std::int64_t count) {
  ref::add(host(acc), host(x), count);
}

void ReferenceOps::linear(models::Activations x_rows, std::int64_t rows,
                          std::span<const models::LinearTarget> targets) {
  const float* x = host(x_rows);
  for (const models::LinearTarget& target : targets) {
    const ReferenceWeight& w = as_reference(*target.weight);
    const std::int64_t out_dim = w.rows();
    const std::int64_t in_dim = w.cols();
    const float* bias = target.bias ? as_reference(*target.bias).vector() : nullptr;
    row_.resize(static_cast<std::size_t>(in_dim));
    for (std::int64_t o = 0; o < out_dim; ++o) {
      ir::convert_to_f32(w.view(), o * in_dim, in_dim, row_.data());
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * in_dim;
        double dot = bias ? bias[o] : 0.0;
        for (std::int64_t i = 0; i < in_dim; ++i) dot += double(xr[i]) * row_[i];
        host(target.out)[r * out_dim + o] = static_cast<float>(dot);
      }
    }
  }
}

void ReferenceOps::rope(models::Activations q_rows, models::Activations k_rows, std::int64_t rows,
                        std::int64_t num_heads, std::int64_t num_kv_heads, std::int64_t head_dim,
                        const models::RotaryTable& table) {
  float* q = host(q_rows);
  float* k = host(k_rows);
  const std::int64_t rotary = table.rotary_dim > 0 ? table.rotary_dim : head_dim;
  if (rotary == head_dim) {
    ref::rope_rotate_half(q, rows, num_heads, head_dim, table.cos, table.sin);
    ref::rope_rotate_half(k, rows, num_kv_heads, head_dim, table.cos, table.sin);
    return;
  }
  // Partial rotary: each head's leading `rotary` dims, one head at a time.
  const std::int64_t half = rotary / 2;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t h = 0; h < num_heads + num_kv_heads; ++h) {
      float* head =
          h < num_heads ? q + (r * num_heads + h) * head_dim : k + (r * num_kv_heads + h - num_heads) * head_dim;
      ref::rope_rotate_half(head, 1, 1, rotary, table.cos + r * half, table.sin + r * half);
    }
  }
}

void ReferenceOps::silu_mul(models::Activations gate, models::Activations up, std::int64_t count,
                            models::Activations out) {
  ref::silu_mul(host(gate), host(up), count, host(out));
}

void ReferenceOps::store_kv(std::int64_t layer, models::Activations k_rows, models::Activations v_rows,
                            std::span<const std::int64_t> slots) {
  const float* k = host(k_rows);
  const float* v = host(v_rows);
  const models::KvCacheLayout& l = kv_layout_;
  float* keys = keys_[static_cast<std::size_t>(layer)].data();
  float* values = values_[static_cast<std::size_t>(layer)].data();
  for (std::size_t r = 0; r < slots.size(); ++r) {
    const std::int64_t block = slots[r] / l.block_size;
    const std::int64_t offset = slots[r] % l.block_size;
    for (std::int64_t h = 0; h < l.num_kv_heads; ++h) {
      const std::int64_t src = (static_cast<std::int64_t>(r) * l.num_kv_heads + h) * l.head_dim;
      const std::int64_t dst = ((block * l.num_kv_heads + h) * l.block_size + offset) * l.head_dim;
      std::copy_n(k + src, l.head_dim, keys + dst);
      std::copy_n(v + src, l.head_dim, values + dst);
    }
  }
}

void ReferenceOps::copy_kv_blocks(std::span<const models::KvBlockCopy> copies) {
  const models::KvCacheLayout& l = kv_layout_;
  const std::int64_t block_floats = l.num_kv_heads * l.block_size * l.head_dim;  // [kv_heads, block_size, head_dim]
  for (const models::KvBlockCopy& c : copies) {
    if (c.src < 0 || c.src >= l.num_blocks || c.dst < 0 || c.dst >= l.num_blocks) {
      fail(ErrorKind::kInternal, "KV block copy {} -> {} is outside the cache's {} blocks", c.src, c.dst, l.num_blocks);
    }
    for (std::size_t layer = 0; layer < keys_.size(); ++layer) {
      std::copy_n(keys_[layer].data() + c.src * block_floats, block_floats, keys_[layer].data() + c.dst * block_floats);
      std::copy_n(values_[layer].data() + c.src * block_floats, block_floats,
                  values_[layer].data() + c.dst * block_floats);
    }
  }
}

void ReferenceOps::attention(std::int64_t layer, models::Activations q_rows, std::int64_t num_heads,
                             std::span<const models::AttentionSequence> sequences, float scale,
                             models::Activations out_rows) {
  const float* q = host(q_rows);
  float* out = host(out_rows);
  const models::KvCacheLayout& l = kv_layout_;
  const kernels::PagedKv kv =
      ref::f32_paged_kv(keys_[static_cast<std::size_t>(layer)].data(), values_[static_cast<std::size_t>(layer)].data(),
                        l.block_size, l.num_kv_heads, l.head_dim);
  const std::int64_t row_width = num_heads * l.head_dim;
  for (const models::AttentionSequence& s : sequences) {
    ref::paged_attention(q + s.row_begin * row_width, s.num_rows, s.num_cached, num_heads, s.block_table, kv, scale,
                         out + s.row_begin * row_width, s.window);
  }
}

}  // namespace kiln::runtime
