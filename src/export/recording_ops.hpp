// An Ops decorator that runs any backend and records statistics of the input of every linear
// call whose weight it was asked to watch, keyed by weight name (weights that multiply the same
// input, q/k/v or gate/up, share one InputStatistics). Calibration runs the model itself through
// it, so the statistics are those of the real forward pass, whatever host backend (CPU,
// REFERENCE) computes it: it reads the activations in host memory.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "export/activation_statistics.hpp"
#include "models/host_ops.hpp"

namespace kiln::exporter {

class RecordingOps final : public models::Ops {
 public:
  // `watched`: weight names to record, each with the statistics it needs; `pool` (may be null)
  // shares the statistics' products between the cores while the backend waits; `unread`: weights
  // whose products nothing reads, recorded (when watched) but not computed.
  RecordingOps(std::unique_ptr<models::Ops> inner, std::map<std::string, StatisticsConfig> watched,
               ThreadPool* pool = nullptr, std::set<std::string> unread = {});

  // Calibration marks sample boundaries (per-sample statistics such as token variance).
  void begin_sample();
  void end_sample();

  // Every recorded input, by the weight names that share it.
  std::map<std::string, std::shared_ptr<InputStatistics>> take_statistics();

  std::unique_ptr<models::Weight> load_weight(const ir::TensorView& tensor, models::WeightUse use) override;
  // The statistics cover every token of a sample, in every layer.
  bool reads_every_row() const override { return true; }
  std::unique_ptr<models::ActivationMemory> allocate_activations(std::int64_t floats) override {
    return inner_->allocate_activations(floats);
  }
  void gather_rows(models::Activations src, std::int64_t width, std::span<const std::int64_t> rows,
                   models::Activations dst) override {
    inner_->gather_rows(src, width, rows, dst);
  }
  void read(models::Activations src, std::int64_t count, float* out) override { inner_->read(src, count, out); }
  void allocate_kv_cache(const models::KvCacheLayout& layout) override { inner_->allocate_kv_cache(layout); }
  const models::KvCacheLayout& kv_cache_layout() const override { return inner_->kv_cache_layout(); }
  void embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations out) override;
  void rms_norm(models::Activations x, const models::Weight& gain, double eps, std::int64_t rows, std::int64_t dim,
                models::Activations out) override;
  void add_rms_norm(models::Activations residual, models::Activations x, const models::Weight& gain, double eps,
                    std::int64_t rows, std::int64_t dim, models::Activations out) override;
  void add(models::Activations acc, models::Activations x, std::int64_t count) override { inner_->add(acc, x, count); }
  void linear(models::Activations x, std::int64_t rows, std::span<const models::LinearTarget> targets) override;
  void rope(models::Activations q, models::Activations k, std::int64_t rows, std::int64_t num_heads,
            std::int64_t num_kv_heads, std::int64_t head_dim, const models::RotaryTable& table) override {
    inner_->rope(q, k, rows, num_heads, num_kv_heads, head_dim, table);
  }
  void silu_mul(models::Activations gate, models::Activations up, std::int64_t count,
                models::Activations out) override {
    inner_->silu_mul(gate, up, count, out);
  }
  void store_kv(std::int64_t layer, models::Activations k, models::Activations v,
                std::span<const std::int64_t> slots) override {
    inner_->store_kv(layer, k, v, slots);
  }
  void attention(std::int64_t layer, models::Activations q, std::int64_t num_heads,
                 std::span<const models::AttentionSequence> sequences, float scale, models::Activations out) override {
    inner_->attention(layer, q, num_heads, sequences, scale, out);
  }

 private:
  std::unique_ptr<models::Ops> inner_;
  std::map<std::string, StatisticsConfig> watched_;
  ThreadPool* pool_;
  std::set<std::string> unread_;
  std::map<std::string, std::shared_ptr<InputStatistics>> by_weight_;
  std::set<InputStatistics*> open_;  // inputs seen in the current sample
  std::vector<models::LinearTarget> inner_targets_;
};

}  // namespace kiln::exporter
