// Oracles: the controller's choice is the k that minimises the documented cost model — plain
// decoding when verification costs as much per row as a whole step (a compute-bound backend),
// speculation when extra rows are nearly free and the draft agrees — and without adaptation it
// always proposes the configured number. Its probes of a losing strategy are rare: over a long
// run at zero acceptance, speculative steps are a vanishing fraction.
#include "genai/speculation_controller.hpp"

#include <gtest/gtest.h>

namespace kiln::genai {
namespace {

// Feeds the controller a synthetic backend: a plain step costs 10 ms, each extra row `row_ms`,
// each draft token `draft_ms`; candidates are accepted while `accept(i)` says so.
struct Simulation {
  double row_ms, draft_ms;
  int accepted_per_step;
  int speculative_steps = 0;
  int steps = 0;

  void run(SpeculationController& c, int n) {
    for (int i = 0; i < n; ++i, ++steps) {
      const std::int64_t k = c.next_num_candidates();
      if (k == 0) {
        c.record_plain_step(10.0);
      } else {
        ++speculative_steps;
        c.record_speculative_step(k, std::min<std::int64_t>(k, accepted_per_step), draft_ms * double(k), 10.0 + row_ms * double(k));
      }
    }
  }
};

TEST(SpeculationController, FallsBackWhenRowsCostAsMuchAsSteps) {
  SpeculationController c(5, true);
  Simulation sim{.row_ms = 10.0, .draft_ms = 1.0, .accepted_per_step = 3};
  sim.run(c, 400);
  // Even accepting 3 of 5, (5·1 + 10 + 5·10) / 4 = 16 ms > 10 ms per token: plain wins, and the
  // perfect-acceptance bound rules out probing at all.
  EXPECT_LE(sim.speculative_steps, 2);
  EXPECT_EQ(c.next_num_candidates(), 0);
}

TEST(SpeculationController, SpeculatesWhenRowsAreCheapAndTheDraftAgrees) {
  SpeculationController c(5, true);
  Simulation sim{.row_ms = 0.3, .draft_ms = 1.0, .accepted_per_step = 4};
  sim.run(c, 200);
  EXPECT_GT(sim.speculative_steps, 190);
  EXPECT_GT(c.next_num_candidates(), 0);
  EXPECT_LT(c.expected_ms_per_token(c.next_num_candidates()), 10.0);
}

TEST(SpeculationController, ASlowStartDoesNotLockInSpeculation) {
  // The first plain steps cost 4x the usual (a cold start), so speculation looks good at first;
  // once plain steps are re-measured at 10 ms, (6 + 10 + 8) / 2 = 12 ms > 10 ms per token even
  // with every candidate accepted (a draft token 6 ms, a verified row 8 ms): plain decoding must
  // win the rest of the run.
  SpeculationController c(1, true);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(c.next_num_candidates(), 0);
    c.record_plain_step(40.0);
  }
  Simulation sim{.row_ms = 8.0, .draft_ms = 6.0, .accepted_per_step = 1};
  int late_speculative = 0;
  for (int i = 0; i < 400; ++i) {
    const int before = sim.speculative_steps;
    sim.run(c, 1);
    if (i >= 200) late_speculative += sim.speculative_steps - before;
  }
  EXPECT_LT(late_speculative, 200 / 8) << "speculated in " << late_speculative << " of the last 200 steps";
}

TEST(SpeculationController, RarelyProbesADraftThatNeverAgrees) {
  SpeculationController c(5, true);
  Simulation sim{.row_ms = 0.3, .draft_ms = 1.0, .accepted_per_step = 0};
  sim.run(c, 2000);
  // Probes after 8, 16, 32, ... plain steps (capped at 256): a few percent of the steps.
  EXPECT_LT(sim.speculative_steps, 2000 / 40);
  EXPECT_EQ(c.acceptance_rate(), 0.0);
}

TEST(SpeculationController, WithoutAdaptationAlwaysProposesTheConfiguredNumber) {
  SpeculationController c(4, false);
  Simulation sim{.row_ms = 100.0, .draft_ms = 100.0, .accepted_per_step = 0};
  sim.run(c, 50);
  EXPECT_EQ(sim.speculative_steps, 50);
}

}  // namespace
}  // namespace kiln::genai
