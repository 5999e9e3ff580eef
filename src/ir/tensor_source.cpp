#include "ir/tensor_source.hpp"

#include "ir/fused_projections.hpp"
#include "util/error.hpp"

namespace kiln::ir {

const TensorView* TensorMap::find(std::string_view name) const {
  const auto it = views_.find(name);
  return it == views_.end() ? nullptr : &it->second;
}

std::vector<std::string> TensorMap::names() const {
  std::vector<std::string> out;
  out.reserve(views_.size());
  for (const auto& [name, view] : views_) out.push_back(name);
  return out;
}

void TensorMap::split_fused(const ModelConfig& config) {
  for (SplitProjection& split : split_fused_projections(config, [&](const std::string& name) { return find(name); })) {
    views_.erase(split.fused_name);
    for (TensorView& part : split.parts) {
      if (views_.contains(part.name)) {
        fail("{}: holds both '{}' and the fused '{}' it would be cut from", origin(), part.name, split.fused_name);
      }
      views_.emplace(part.name, std::move(part));
    }
  }
}

}  // namespace kiln::ir
