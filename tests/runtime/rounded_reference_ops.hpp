// The oracle for the compiled backend's deliberate roundings: the reference backend (scalar f32,
// double accumulation) that also rounds what the compiled kernels round by design — every K/V
// row stored through the KV cache's element type (the scalar encode/decode twins), the
// activations multiplied by bf16 weights to bf16 (as vdpbf16ps needs), and with an activation
// group size (DYNAMIC_QUANTIZATION_GROUP_SIZE) the inputs of int4/int8 weights to int8 codes per
// group and back (the reference quantiser the kernels match bit for bit). What remains between
// the two is accumulation order, so the tolerance can stay tight.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "ir/weight_format.hpp"
#include "kernels/activation_quant.hpp"
#include "kernels/reference/paged_attention.hpp"
#include "runtime/reference/reference_ops.hpp"
#include "util/half.hpp"

namespace kiln::runtime::testing {

class RoundedReferenceOps final : public models::HostOps {
 public:
  explicit RoundedReferenceOps(ElementType kv_element, std::size_t act_group_size = 0)
      : kv_element_(kv_element), act_group_size_(act_group_size) {}

  std::unique_ptr<models::Weight> load_weight(const ir::TensorView& tensor, models::WeightUse use) override {
    auto w = std::make_unique<Wrapped>();
    w->inner = inner_.load_weight(tensor, use);
    w->bf16_activations = use != models::WeightUse::kVector && tensor.dtype == ElementType::kBf16;
    w->int8_activations = use != models::WeightUse::kVector && act_group_size_ > 0 && tensor.is_quantized() &&
                          is_integer_scheme(tensor.quantization->scheme);
    w->in = tensor.shape.size() == 2 ? static_cast<std::size_t>(tensor.shape[1]) : 0;
    return w;
  }
  // The reference keeps f32 K/V; the rounding happens in store_kv.
  void allocate_kv_cache(const models::KvCacheLayout& layout) override {
    layout_ = layout;
    models::KvCacheLayout f32 = layout;
    f32.precision = ElementType::kF32;
    inner_.allocate_kv_cache(f32);
    group_size_ = static_cast<std::size_t>(std::min(layout.u8_group_size, layout.head_dim));
  }
  const models::KvCacheLayout& kv_cache_layout() const override { return layout_; }

  void embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations out) override {
    inner_.embed(unwrap(table), ids, out);
  }
  void rms_norm(models::Activations x, const models::Weight& gain, double eps, std::int64_t rows, std::int64_t dim,
                models::Activations out) override {
    inner_.rms_norm(x, unwrap(gain), eps, rows, dim, out);
  }
  void add_rms_norm(models::Activations residual, models::Activations x, const models::Weight& gain, double eps,
                    std::int64_t rows, std::int64_t dim, models::Activations out) override {
    inner_.add_rms_norm(residual, x, unwrap(gain), eps, rows, dim, out);
  }
  void add(models::Activations acc, models::Activations x, std::int64_t count) override { inner_.add(acc, x, count); }

  // Each target on its own, with x rounded to bf16 where its weight is bf16, or through int8
  // codes where its weight is int4/int8 and activations are quantised.
  void linear(models::Activations x_rows, std::int64_t rows, std::span<const models::LinearTarget> targets) override {
    const float* x = models::host(x_rows);
    for (const models::LinearTarget& t : targets) {
      const auto& w = static_cast<const Wrapped&>(*t.weight);
      models::Activations input = x_rows;
      if (w.bf16_activations) {
        float* r = rounded(static_cast<std::size_t>(rows) * w.in);
        for (std::size_t i = 0; i < static_cast<std::size_t>(rows) * w.in; ++i) r[i] = bf16_to_f32(f32_to_bf16(x[i]));
        input = {rounded_.get()};
      } else if (w.int8_activations) {
        round_through_int8(x, static_cast<std::size_t>(rows), w.in);
        input = {rounded_.get()};
      }
      const models::LinearTarget inner{w.inner.get(), t.bias ? &unwrap(*t.bias) : nullptr, t.out};
      inner_.linear(input, rows, {&inner, 1});
    }
  }
  void rope(models::Activations q, models::Activations k, std::int64_t rows, std::int64_t num_heads,
            std::int64_t num_kv_heads, std::int64_t head_dim, const models::RotaryTable& table) override {
    inner_.rope(q, k, rows, num_heads, num_kv_heads, head_dim, table);
  }
  void silu_mul(models::Activations gate, models::Activations up, std::int64_t count,
                models::Activations out) override {
    inner_.silu_mul(gate, up, count, out);
  }
  // K/V rows [rows, kv_heads, head_dim] pass through the KV element type before the store.
  void store_kv(std::int64_t layer, models::Activations k, models::Activations v,
                std::span<const std::int64_t> slots) override {
    const models::KvCacheLayout& l = layout_;
    const auto count = static_cast<std::int64_t>(slots.size()) * l.num_kv_heads;
    const auto hd = static_cast<std::size_t>(l.head_dim);
    models::HostActivationMemory k_rounded(count * l.head_dim), v_rounded(count * l.head_dim);
    std::copy_n(models::host(k), count * l.head_dim, k_rounded.data());
    std::copy_n(models::host(v), count * l.head_dim, v_rounded.data());
    for (std::int64_t r = 0; r < count; ++r) {
      round_row(k_rounded.data() + r * l.head_dim, hd);
      round_row(v_rounded.data() + r * l.head_dim, hd);
    }
    inner_.store_kv(layer, {&k_rounded}, {&v_rounded}, slots);
  }
  void copy_kv_blocks(std::span<const models::KvBlockCopy> copies) override { inner_.copy_kv_blocks(copies); }
  void attention(std::int64_t layer, models::Activations q, std::int64_t num_heads,
                 std::span<const models::AttentionSequence> sequences, float scale, models::Activations out) override {
    inner_.attention(layer, q, num_heads, sequences, scale, out);
  }

 private:
  struct Wrapped final : models::Weight {
    std::unique_ptr<models::Weight> inner;
    bool bf16_activations = false;
    bool int8_activations = false;
    std::size_t in = 0;  // matrices: the input width
  };
  static const models::Weight& unwrap(const models::Weight& w) { return *static_cast<const Wrapped&>(w).inner; }
  // rounded_ = x [rows, in] quantised per activation group and dequantised: code · scale.
  void round_through_int8(const float* x, std::size_t rows, std::size_t in) {
    const kernels::ActivationBuffer buffer(rows, in, act_group_size_);
    const kernels::QuantizedActivations q = buffer.view(rows);
    kernels::quantize_activations_reference(x, q, 0, rows);
    float* out = rounded(rows * in);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t k = 0; k < in; ++k) {
        out[r * in + k] = static_cast<float>(q.codes[r * q.row_stride + k]) * q.scales[r * q.groups + k / q.group_size];
      }
    }
  }
  // rounded_, grown to `floats` at least.
  float* rounded(std::size_t floats) {
    const auto n = static_cast<std::int64_t>(floats);
    if (!rounded_ || rounded_->size() < n) rounded_ = std::make_unique<models::HostActivationMemory>(n);
    return rounded_->data();
  }
  void round_row(float* row, std::size_t hd) const {
    std::vector<std::uint8_t> code(hd * 4);
    std::vector<float> params((hd + group_size_ - 1) / group_size_ * 2);
    kernels::reference::encode_kv(row, hd, kv_element_, group_size_, code.data(), params.data());
    kernels::reference::decode_kv(code.data(), hd, kv_element_, group_size_, params.data(), row);
  }

  runtime::ReferenceOps inner_;
  models::KvCacheLayout layout_;
  ElementType kv_element_;
  std::size_t group_size_ = 32;
  std::size_t act_group_size_ = 0;                         // 0: activations stay f32
  std::unique_ptr<models::HostActivationMemory> rounded_;  // [rows, in]
};

}  // namespace kiln::runtime::testing
