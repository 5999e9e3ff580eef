// ContinuousBatchingPipeline on the GPU device (PoCL's CPU device where there is no GPU): the
// scheduler, sampler and prefix cache are the CPU's, only the step runs on the device. Oracles:
// transformers' greedy continuations (every request of a preempting, over-full batch must get
// them) and the same beam and sampling requests run alone on the REFERENCE device.
#include <gtest/gtest.h>

#include "../models/golden_checkpoint.hpp"
#include "../runtime/gpu/gpu_test_util.hpp"
#include "kiln/continuous_batching_pipeline.hpp"
#include "kiln/llm_pipeline.hpp"
#include "test_models.hpp"

namespace kiln {
namespace {

PipelineProperties gpu_properties() {
  PipelineProperties p;
  p.context_tokens = 256;
  p.kv_cache_sequences = 8;
  p.kv_block_size = 4;
  p.device_properties = {{"KV_CACHE_PRECISION", "f32"}};
  return p;
}

TEST(GpuContinuousBatching, AnOverfullBatchGetsTransformersGreedy) {
  KILN_REQUIRE_GPU(gpu);
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  // Room for about 4 sequences and 40 requests at once: the newest are preempted and recompute.
  ContinuousBatchingPipeline pipe(testing::checkpoint_dir("llama3_tiny"),
                                  {.max_num_batched_tokens = 64, .max_num_seqs = 16, .num_kv_blocks = 44}, "GPU",
                                  gpu_properties());
  std::vector<GenerationHandle> handles;
  for (std::uint64_t i = 0; i < 40; ++i)
    handles.push_back(pipe.add_request(i, g.prompts[i % g.prompts.size()].ids, testing::greedy_config(16)));
  for (std::uint64_t i = 0; i < 40; ++i) {
    const std::vector<GenerationOutput> out = handles[i]->read_all();
    ASSERT_EQ(out.size(), 1u);
    const std::vector<std::int32_t>& want = g.prompts[i % g.prompts.size()].greedy_ids;
    EXPECT_EQ(out[0].generated_ids, std::vector<std::int32_t>(want.begin(), want.begin() + 16)) << "request " << i;
  }
  EXPECT_GT(pipe.get_metrics().num_preemptions, 0);
  EXPECT_EQ(pipe.get_metrics().cache_usage, 0.0);
}

TEST(GpuContinuousBatching, BeamsAndSamplesInABatchMatchTheReferenceAlone) {
  KILN_REQUIRE_GPU(gpu);
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  ContinuousBatchingPipeline pipe(testing::checkpoint_dir("llama3_tiny"), {}, "GPU", gpu_properties());
  LLMPipeline alone(testing::checkpoint_dir("llama3_tiny"), "REFERENCE", gpu_properties());
  GenerationConfig beams = testing::greedy_config(16);
  beams.num_beams = 3;
  beams.num_return_sequences = 2;
  GenerationConfig samples = testing::greedy_config(16);
  samples.do_sample = true;
  samples.top_k = 20;
  samples.rng_seed = 7;
  samples.num_return_sequences = 2;
  GenerationHandle b = pipe.add_request(1, g.prompts[0].prompt, beams);
  GenerationHandle s = pipe.add_request(2, g.prompts[1].prompt, samples);
  GenerationHandle p = pipe.add_request(3, g.prompts[2].prompt, testing::greedy_config(32));
  const auto expect_same_tokens = [](const std::vector<GenerationOutput>& got, const DecodedResults& want) {
    ASSERT_EQ(got.size(), want.tokens.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].generated_ids, want.tokens[i]) << "sequence " << i;
  };
  expect_same_tokens(b->read_all(), alone.generate(g.prompts[0].prompt, beams));
  expect_same_tokens(s->read_all(), alone.generate(g.prompts[1].prompt, samples));
  EXPECT_EQ(p->read_all()[0].generated_ids, g.prompts[2].greedy_ids);
}

}  // namespace
}  // namespace kiln
