// Oracle: statistics recorded without the output head, where calibration leaves out the last
// layer's MLP product (nothing reads it), equal those recorded with the head, where every
// product is computed: the recorded inputs of every watched weight are the same bits.
#include "export/calibration.hpp"

#include <gtest/gtest.h>

#include "export_test_util.hpp"
#include "ir/hf_checkpoint.hpp"
#include "models/tensor_specs.hpp"

namespace kiln::exporter {
namespace {

using testing::golden_checkpoint_dir;

TEST(Calibration, LeavingOutTheUnreadLastMlpProductChangesNoStatistic) {
  const auto dir = golden_checkpoint_dir("llama3_tiny");
  auto checkpoint = std::make_shared<ir::HfCheckpoint>(dir);
  const ir::ModelConfig& config = checkpoint->config();
  std::map<std::string, StatisticsConfig> watched;
  for (const models::TensorSpec& spec : models::tensor_specs(config)) {
    if (spec.use == models::WeightUse::kMatrix && spec.layer >= 0) watched.emplace(spec.name, StatisticsConfig{});
  }
  const std::vector<std::int32_t> ids = testing::heldout_ids(dir, 70);
  CalibrationData data;
  data.samples = {{ids.begin(), ids.begin() + 30}, {ids.begin() + 30, ids.end()}};

  CalibrationRun without_head, with_head;
  with_head.run_head = true;
  const auto a = collect_statistics(config, checkpoint, data, watched, without_head);
  const auto b = collect_statistics(config, checkpoint, data, watched, with_head);
  const std::string last_down = fmt::format("model.layers.{}.mlp.down_proj.weight", config.num_layers - 1);
  ASSERT_TRUE(a.contains(last_down));
  ASSERT_EQ(a.size(), watched.size());
  ASSERT_EQ(b.size(), watched.size());
  for (const auto& [name, stats] : a) {
    const InputStatistics& other = *b.at(name);
    ASSERT_EQ(stats->num_samples(), 2) << name;
    EXPECT_EQ(stats->sample_means(), other.sample_means()) << name;
    EXPECT_EQ(stats->max_variance(), other.max_variance()) << name;
    for (std::int64_t c = 0; c < stats->in(); ++c) ASSERT_EQ(stats->mean_abs(c), other.mean_abs(c)) << name;
  }
}

}  // namespace
}  // namespace kiln::exporter
