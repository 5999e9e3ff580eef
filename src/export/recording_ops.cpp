#include "export/recording_ops.hpp"

namespace kiln::exporter {
namespace {

// The backend's weight, with the tensor name recording is keyed by.
class NamedWeight final : public models::Weight {
 public:
  NamedWeight(std::string name, std::int64_t in, std::unique_ptr<models::Weight> inner)
      : name_(std::move(name)), in_(in), inner_(std::move(inner)) {}
  const std::string& name() const { return name_; }
  std::int64_t in() const { return in_; }
  const models::Weight& inner() const { return *inner_; }

 private:
  std::string name_;
  std::int64_t in_;  // input width of a matrix
  std::unique_ptr<models::Weight> inner_;
};

const NamedWeight& named(const models::Weight& w) { return static_cast<const NamedWeight&>(w); }
const models::Weight* inner_of(const models::Weight* w) { return w ? &named(*w).inner() : nullptr; }

}  // namespace

RecordingOps::RecordingOps(std::unique_ptr<models::Ops> inner, std::map<std::string, StatisticsConfig> watched,
                           ThreadPool* pool, std::set<std::string> unread)
    : inner_(std::move(inner)), watched_(std::move(watched)), pool_(pool), unread_(std::move(unread)) {}

void RecordingOps::begin_sample() { open_.clear(); }

void RecordingOps::end_sample() {
  for (InputStatistics* s : open_) s->end_sample();
  open_.clear();
}

std::map<std::string, std::shared_ptr<InputStatistics>> RecordingOps::take_statistics() {
  return std::move(by_weight_);
}

std::unique_ptr<models::Weight> RecordingOps::load_weight(const ir::TensorView& tensor, models::WeightUse use) {
  const std::int64_t in = tensor.shape.empty() ? 0 : tensor.shape.back();
  return std::make_unique<NamedWeight>(tensor.name, in, inner_->load_weight(tensor, use));
}

void RecordingOps::embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations out) {
  inner_->embed(named(table).inner(), ids, out);
}

void RecordingOps::rms_norm(models::Activations x, const models::Weight& gain, double eps, std::int64_t rows,
                            std::int64_t dim, models::Activations out) {
  inner_->rms_norm(x, named(gain).inner(), eps, rows, dim, out);
}

void RecordingOps::add_rms_norm(models::Activations residual, models::Activations x, const models::Weight& gain,
                                double eps, std::int64_t rows, std::int64_t dim, models::Activations out) {
  inner_->add_rms_norm(residual, x, named(gain).inner(), eps, rows, dim, out);
}

void RecordingOps::linear(models::Activations x, std::int64_t rows, std::span<const models::LinearTarget> targets) {
  // Every target multiplies the same x: record it once, shared by all watched targets.
  std::shared_ptr<InputStatistics> shared;
  for (const models::LinearTarget& t : targets) {
    auto it = by_weight_.find(named(*t.weight).name());
    if (it != by_weight_.end()) shared = it->second;
  }
  for (const models::LinearTarget& t : targets) {
    const NamedWeight& w = named(*t.weight);
    auto watched = watched_.find(w.name());
    if (watched == watched_.end()) continue;
    if (!shared) shared = std::make_shared<InputStatistics>(w.in(), watched->second);
    by_weight_[w.name()] = shared;
  }
  if (shared) {
    if (open_.insert(shared.get()).second) shared->begin_sample();
    shared->add_rows(models::host(x), rows, pool_);
  }
  inner_targets_.clear();
  for (const models::LinearTarget& t : targets) {
    if (unread_.contains(named(*t.weight).name())) continue;
    inner_targets_.push_back({inner_of(t.weight), inner_of(t.bias), t.out});
  }
  if (!inner_targets_.empty()) inner_->linear(x, rows, inner_targets_);
}

}  // namespace kiln::exporter
