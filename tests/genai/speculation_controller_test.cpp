// Oracles: the controller's choice is the k that minimises the documented cost model — plain
// decoding when verification costs as much per row as a whole step (a compute-bound backend),
// speculation when extra rows are nearly free and the draft agrees — and without adaptation it
// always proposes the configured number. The floor is arithmetic on a simulated backend: the
// total time of a run (plain steps, the draft's catch-up on the prompt, speculative steps) is at
// most 1/0.95 of n plain steps, for every prompt length and answer length, and a draft ruled
// out by its measured costs costs nothing more (no catch-up, no probes).
#include "genai/speculation_controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::genai {
namespace {

// A synthetic backend: a plain step costs 10 ms, each extra verified row `row_ms`, each draft
// token `draft_ms`, each token of draft catch-up `catch_up_ms`; a speculative step keeps
// `accepted_per_step` candidates. The draft starts `prompt` tokens behind (it has seen nothing).
struct Simulation {
  double row_ms, draft_ms;
  int accepted_per_step;
  double catch_up_ms = 0.1;
  std::int64_t prompt = 1;
  std::int64_t draft_behind = -1;
  int speculative_steps = 0;
  int steps = 0;
  std::int64_t tokens = 0;
  std::int64_t caught_up = 0;  // tokens of draft catch-up
  double total_ms = 0;

  void step(SpeculationController& c) {
    if (draft_behind < 0) draft_behind = prompt;
    ++steps;
    const SpeculationController::Plan plan = c.plan_step(draft_behind);
    if (plan.catch_up > 0) {
      EXPECT_EQ(plan.candidates, 0);
      EXPECT_LT(plan.catch_up, draft_behind) << "the last token is the proposal's";
      draft_behind -= plan.catch_up;
      caught_up += plan.catch_up;
      total_ms += catch_up_ms * double(plan.catch_up);
      c.record_catch_up(plan.catch_up, catch_up_ms * double(plan.catch_up));
    }
    const std::int64_t k = plan.candidates;
    if (k == 0) {
      total_ms += 10.0;
      c.record_plain_step(10.0);
      ++tokens;
      ++draft_behind;
      return;
    }
    ++speculative_steps;
    const std::int64_t accepted = std::min<std::int64_t>(k, accepted_per_step);
    // The proposal's first draft pass also computes the tokens the draft was behind.
    const double draft = draft_ms * double(k) + catch_up_ms * double(draft_behind - 1);
    const double verify = 10.0 + row_ms * double(k);
    total_ms += draft + verify;
    c.record_speculative_step(k, accepted, draft, verify);
    tokens += accepted + 1;
    draft_behind = accepted == k ? 2 : 1;
  }
  void run(SpeculationController& c, int n) {
    for (int i = 0; i < n; ++i) step(c);
  }
  void run_tokens(SpeculationController& c, std::int64_t n) {
    while (tokens < n) step(c);
  }
};

TEST(SpeculationController, FallsBackWhenRowsCostAsMuchAsSteps) {
  SpeculationController c(5, true);
  Simulation sim{.row_ms = 10.0, .draft_ms = 1.0, .accepted_per_step = 3};
  sim.run(c, 400);
  // Even accepting 3 of 5, (5·1 + 10 + 5·10) / 4 = 16 ms > 10 ms per token: plain wins, and the
  // perfect-acceptance bound rules out probing again after the first probe measured the rows.
  EXPECT_LE(sim.speculative_steps, 2);
  EXPECT_EQ(c.plan_step(1).candidates, 0);
}

TEST(SpeculationController, SpeculatesWhenRowsAreCheapAndTheDraftAgrees) {
  SpeculationController c(5, true);
  Simulation sim{.row_ms = 0.3, .draft_ms = 1.0, .accepted_per_step = 4};
  sim.run(c, 200);
  EXPECT_GT(sim.speculative_steps, 180);
  EXPECT_GT(c.plan_step(1).candidates, 0);
  EXPECT_LT(c.expected_ms_per_token(4), 10.0);
  EXPECT_LT(sim.total_ms, 10.0 * double(sim.tokens) / 2) << "a draft that agrees must pay off";
}

TEST(SpeculationController, ASlowStartDoesNotLockInSpeculation) {
  // The first plain steps cost 4x the usual (a cold start), so speculation looks good at first;
  // once plain steps are re-measured at 10 ms, (6 + 10 + 8) / 2 = 12 ms > 10 ms per token even
  // with every candidate accepted (a draft token 6 ms, a verified row 8 ms): plain decoding must
  // win the rest of the run.
  SpeculationController c(1, true);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(c.plan_step(1).candidates, 0);
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
  EXPECT_GT(sim.speculative_steps, 0);
  EXPECT_EQ(c.acceptance_rate(), 0.0);
}

TEST(SpeculationController, FloorHoldsForAnyPromptAndAnswerLength) {
  // A draft that agrees half the time but costs too much to win (a draft token 4 ms, a row 3 ms:
  // (2·4 + 10 + 2·3) / 2 = 12 ms > 10 ms per token at k = 2), priced by its size as a cheap one
  // (ratio 0.1), and a catch-up of 2 ms per token: time must stay within 1/0.95 of plain
  // decoding whatever the prompt (the draft's catch-up) and the answer length.
  for (const std::int64_t prompt : {1, 20, 110, 500, 4000}) {
    for (const std::int64_t answer : {4, 16, 128, 1000}) {
      SpeculationController c(5, true, 0.1);
      Simulation sim{.row_ms = 3.0, .draft_ms = 4.0, .accepted_per_step = 1, .catch_up_ms = 2.0, .prompt = prompt};
      c.record_prefill(prompt, 0.5 * double(prompt));
      sim.run_tokens(c, answer);
      EXPECT_LE(sim.total_ms, 10.0 * double(sim.tokens) / 0.95)
          << "prompt " << prompt << ", answer " << answer << ": " << sim.speculative_steps << " probes, "
          << sim.caught_up << " tokens of catch-up";
      EXPECT_LE(c.overhead_ms(), 0.05 * c.plain_equivalent_ms() + 1e-9);
    }
  }
}

TEST(SpeculationController, ADraftRuledOutByItsCostsIsNeverPaidForAgain) {
  // Draft tokens cost 8 ms and rows 5 ms: (8 + 10 + 5) / 2 > 10 ms per token even when every
  // candidate is accepted. Once one probe has measured that, no catch-up and no probe follows.
  SpeculationController c(5, true, 0.2);
  Simulation sim{.row_ms = 5.0, .draft_ms = 8.0, .accepted_per_step = 5, .catch_up_ms = 0.05, .prompt = 40};
  c.record_prefill(40, 4.0);
  while (sim.speculative_steps == 0 && sim.steps < 5000) sim.step(c);
  ASSERT_EQ(sim.speculative_steps, 1) << "the priors (a cheap draft) must allow one probe";
  const std::int64_t caught_up = sim.caught_up;
  sim.run(c, 3000);
  EXPECT_EQ(sim.speculative_steps, 1);
  EXPECT_EQ(sim.caught_up, caught_up);
}

TEST(SpeculationController, AWinningDraftCatchesUpOnALongPromptAndWins) {
  // Catch-up 0.1 ms per token on a 300-token prompt (30 ms, paid from 3% of plain time), then a
  // draft that agrees on 4 of 5 candidates: most of a long answer is speculative, and the whole
  // run is faster than plain decoding.
  SpeculationController c(5, true, 0.05);
  Simulation sim{.row_ms = 0.3, .draft_ms = 0.5, .accepted_per_step = 4, .catch_up_ms = 0.1, .prompt = 300};
  c.record_prefill(300, 30.0);
  sim.run_tokens(c, 2000);
  EXPECT_GE(sim.caught_up, 290);
  EXPECT_GT(sim.speculative_steps, 200);
  EXPECT_LT(sim.total_ms, 0.6 * 10.0 * double(sim.tokens));
}

TEST(SpeculationController, ADraftTooSlowToCatchUpCostsAtMostOneChunk) {
  // Catch-up at 1 ms per token gains less on the backlog than plain steps add to it (3% of 10 ms
  // per step): after the first chunk measures that, the draft is never fed again.
  SpeculationController c(5, true, 0.05);
  Simulation sim{.row_ms = 0.3, .draft_ms = 0.5, .accepted_per_step = 4, .catch_up_ms = 1.0, .prompt = 300};
  c.record_prefill(300, 30.0);
  sim.run_tokens(c, 3000);
  EXPECT_EQ(sim.speculative_steps, 0);
  EXPECT_LE(sim.caught_up, 8);
}

TEST(SpeculationController, WithoutAdaptationAlwaysProposesTheConfiguredNumber) {
  SpeculationController c(4, false);
  Simulation sim{.row_ms = 100.0, .draft_ms = 100.0, .accepted_per_step = 0};
  sim.run(c, 50);
  EXPECT_EQ(sim.speculative_steps, 50);
  EXPECT_EQ(sim.caught_up, 0);
}

}  // namespace
}  // namespace kiln::genai
