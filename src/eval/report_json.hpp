// Machine-readable results of `kiln eval` and `kiln budget` (`--json FILE`): one JSON object per
// result type, field names in snake_case with their unit (bytes, seconds). Stable: scripts
// and BENCHMARKS.md tables read them.
#pragma once

#include "eval/compare.hpp"
#include "eval/perplexity.hpp"
#include "eval/repetition.hpp"
#include "eval/task_eval.hpp"
#include "eval/weight_budget.hpp"
#include "util/json.hpp"

namespace kiln::eval {

Json to_json(const PerplexityResult& r);
Json to_json(const CompareResult& r);
Json to_json(const TaskReport& r);
Json to_json(const RepetitionReport& r);
// {"embedding": bytes, ..., "total": bytes, "num_params": n, "tensors": [...] when `with_tensors`}.
Json to_json(const WeightBudget& b, bool with_tensors);

}  // namespace kiln::eval
