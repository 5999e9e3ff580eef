// Oracles: the window plan of transformers' "perplexity of fixed-length models" (every target
// after the first token scored exactly once; tinylm's window_plan on hand-checked cases), and
// for a window pass the full-forward logits transformers computed on the golden prompts
// (tests/data/checkpoints/*/golden_logits.safetensors) within 1e-3, whatever the chunk size.
#include <gtest/gtest.h>

#include "eval/sliding_window.hpp"
#include "eval_fixtures.hpp"
#include "ir/safetensors.hpp"
#include "ir/tensor_convert.hpp"

namespace kiln::eval {
namespace {

TEST(PlanWindows, MatchesTheTransformersLoop) {
  // N = 10, context 4, stride 3: windows [0,4) [3,7) [6,10); targets 1..3, 4..6, 7..9.
  const std::vector<Window> plan = plan_windows(10, 4, 3);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].begin, 0);
  EXPECT_EQ(plan[0].end, 4);
  EXPECT_EQ(plan[0].first_target, 1);
  EXPECT_EQ(plan[1].begin, 3);
  EXPECT_EQ(plan[1].end, 7);
  EXPECT_EQ(plan[1].first_target, 4);
  EXPECT_EQ(plan[2].begin, 6);
  EXPECT_EQ(plan[2].end, 10);
  EXPECT_EQ(plan[2].first_target, 7);
  // Disjoint windows (stride == context): [0,4) scores 1..3, [4,8) scores 5..7.
  const std::vector<Window> disjoint = plan_windows(8, 4, 4);
  ASSERT_EQ(disjoint.size(), 2u);
  EXPECT_EQ(disjoint[1].first_target, 5);
  // A text shorter than the context is one window.
  const std::vector<Window> one = plan_windows(5, 8, 4);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].end, 5);
}

// With stride < context every token after the first is scored once; with stride == context the
// windows are disjoint and each window's first token, which has no context in it, is not.
TEST(PlanWindows, ScoresEveryTargetAtMostOnce) {
  for (const std::int64_t n : {2, 3, 17, 100, 257}) {
    for (const std::int64_t context : {2, 5, 16, 64}) {
      for (const std::int64_t stride : {1, 2, 3, 7, 16, 64}) {
        if (stride > context) continue;
        std::vector<int> scored(static_cast<std::size_t>(n), 0);
        std::int64_t last_end = 0;
        std::vector<int> window_start(static_cast<std::size_t>(n), 0);
        for (const Window& w : plan_windows(n, context, stride)) {
          window_start[static_cast<std::size_t>(w.begin)] = 1;
          EXPECT_LE(w.end - w.begin, context);
          EXPECT_GT(w.first_target, w.begin);  // every target has its previous token in the window
          for (std::int64_t t = w.first_target; t < w.end; ++t) ++scored[static_cast<std::size_t>(t)];
          last_end = w.end;
        }
        EXPECT_EQ(last_end, n);
        EXPECT_EQ(scored[0], 0);
        for (std::int64_t t = 1; t < n; ++t) {
          const int want = stride == context && window_start[static_cast<std::size_t>(t)] ? 0 : 1;
          ASSERT_EQ(scored[static_cast<std::size_t>(t)], want) << n << " " << context << " " << stride << " " << t;
        }
      }
    }
  }
}

TEST(PlanWindows, RejectsBadSettings) {
  EXPECT_KILN_ERROR(plan_windows(10, 1, 1), "context >= 2", "context 1");
  EXPECT_KILN_ERROR(plan_windows(10, 4, 5), "stride <= context", "stride 5");
  EXPECT_KILN_ERROR(plan_windows(10, 4, 0), "stride 0");
  EXPECT_KILN_ERROR(plan_windows(1, 4, 2), "at least 2 tokens");
}

TEST(WindowPass, RowsEqualTransformersLogitsForAnyChunkSize) {
  for (const std::string name : {"llama3_tiny", "llama2_tiny"}) {
    const auto dir = testing::checkpoint_dir(name);
    genai::LoadedModel m = testing::load_for_eval(dir, 64);
    const Json golden = read_json_file(dir / "golden.json");
    ir::SafetensorsFile logits_file(dir / "golden_logits.safetensors");
    const std::int64_t vocab = m.model->config().vocab_size;
    for (const Json& record : golden["records"]) {
      const auto ids = record["ids"].get<std::vector<std::int32_t>>();
      const std::vector<float> want = ir::to_f32(logits_file.tensors().at(record["logits_tensor"].get<std::string>()));
      const auto n = static_cast<std::int64_t>(ids.size());
      for (const std::int64_t chunk : {1, 3, 512}) {
        // A later window (begin 2) scores from its own fresh sequence: compare against a
        // window from 0 only, where positions coincide with the golden forward pass.
        genai::Engine engine(*m.model, window_scheduler(chunk));
        WindowPass pass(engine, ids, Window{0, n, 1});
        std::int64_t next_target = 1;
        while (pass.next()) {
          ASSERT_TRUE(pass.num_rows() == 0 || pass.first_target() == next_target);
          for (std::int64_t r = 0; r < pass.num_rows(); ++r, ++next_target) {
            for (std::int64_t v = 0; v < vocab; ++v) {
              ASSERT_NEAR(pass.row(r)[static_cast<std::size_t>(v)],
                          want[static_cast<std::size_t>((next_target - 1) * vocab + v)], 1e-3)
                  << name << " target " << next_target << " token " << v << " chunk " << chunk;
            }
          }
        }
        EXPECT_EQ(next_target, n);  // rows for targets 1..n-1, the last token never run
      }
    }
  }
}

TEST(WindowPass, LaterWindowsSkipLogitsForTheUnscoredPrefix) {
  const auto dir = testing::checkpoint_dir("llama3_tiny");
  genai::LoadedModel m = testing::load_for_eval(dir, 64);
  std::vector<std::int32_t> ids(40);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i * 13 % 500);
  genai::Engine engine(*m.model, window_scheduler(8));
  WindowPass pass(engine, ids, Window{8, 40, 30});
  std::int64_t rows = 0, first = -1;
  while (pass.next()) {
    if (pass.num_rows() > 0 && first < 0) first = pass.first_target();
    rows += pass.num_rows();
  }
  EXPECT_EQ(first, 30);
  EXPECT_EQ(rows, 10);  // targets 30..39
}

TEST(WindowPass, RejectsWindowsBeyondTheCacheOrPositions) {
  const auto dir = testing::checkpoint_dir("llama2_tiny");  // 128 positions
  genai::LoadedModel m = testing::load_for_eval(dir, 32);
  std::vector<std::int32_t> ids(300, 5);
  genai::Engine engine(*m.model, window_scheduler(16));
  EXPECT_KILN_ERROR(WindowPass(engine, ids, Window{0, 64, 1}), "64 tokens", "KV cache of 32 tokens");
  // Four sequences' worth of cache hold 512 tokens, but the model has only 128 positions.
  genai::LoadedModel big = testing::load_for_eval(dir, 128, 4);
  genai::Engine big_engine(*big.model, window_scheduler(16));
  EXPECT_KILN_ERROR(WindowPass(big_engine, ids, Window{0, 200, 1}), "200 tokens", "max_position_embeddings 128");
  EXPECT_KILN_ERROR(window_scheduler(0), "chunk size must be positive");
}

}  // namespace
}  // namespace kiln::eval
