// What every backend that computes in host memory (CPU, REFERENCE, calibration's recorder over
// them) shares: activations as plain float arrays, and the gather and read that follow from it.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "models/ops.hpp"

namespace kiln::models {

class HostActivationMemory final : public ActivationMemory {
 public:
  explicit HostActivationMemory(std::int64_t floats) : data_(static_cast<std::size_t>(floats)) {}
  std::int64_t size() const override { return static_cast<std::int64_t>(data_.size()); }
  float* data() { return data_.data(); }

 private:
  std::vector<float> data_;
};

// The floats of host activations (made by a HostOps backend).
inline float* host(Activations a) { return static_cast<HostActivationMemory*>(a.buffer)->data(); }

class HostOps : public Ops {
 public:
  std::unique_ptr<ActivationMemory> allocate_activations(std::int64_t floats) override {
    return std::make_unique<HostActivationMemory>(floats);
  }
  void gather_rows(Activations src, std::int64_t width, std::span<const std::int64_t> rows, Activations dst) override {
    const float* from = host(src);
    float* to = host(dst);
    for (std::size_t r = 0; r < rows.size(); ++r) std::copy_n(from + rows[r] * width, width, to + r * width);
  }
  void read(Activations src, std::int64_t count, float* out) override { std::copy_n(host(src), count, out); }
};

}  // namespace kiln::models
