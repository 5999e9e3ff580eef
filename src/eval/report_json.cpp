#include "eval/report_json.hpp"

namespace kiln::eval {

Json to_json(const PerplexityResult& r) {
  return {{"tokens", r.num_tokens},           {"scored_tokens", r.num_scored}, {"bytes", r.num_bytes},
          {"windows", r.num_windows},         {"nll_nats", r.nll_nats},        {"ppl", r.ppl},
          {"bits_per_byte", r.bits_per_byte}, {"seconds", r.seconds}};
}

Json to_json(const CompareResult& r) {
  return {{"tokens", r.num_tokens},
          {"scored_tokens", r.num_scored},
          {"bytes", r.num_bytes},
          {"windows", r.num_windows},
          {"mean_kl", r.mean_kl},
          {"max_kl", r.max_kl},
          {"top1_agreement", r.top1_agreement},
          {"ppl_model", r.ppl_model},
          {"ppl_reference", r.ppl_reference},
          {"bits_per_byte_model", r.bits_per_byte_model},
          {"bits_per_byte_reference", r.bits_per_byte_reference},
          {"seconds", r.seconds}};
}

Json to_json(const TaskReport& r) {
  Json items = Json::array();
  for (const TaskResult& t : r.items) {
    items.push_back({{"id", t.id},
                     {"prompt", t.prompt},
                     {"answer", t.answer},
                     {"completion", t.completion},
                     {"generated_tokens", t.num_generated},
                     {"right", t.right}});
  }
  return {{"right", r.num_right},
          {"total", r.items.size()},
          {"accuracy", r.accuracy},
          {"seconds", r.seconds},
          {"items", std::move(items)}};
}

Json to_json(const RepetitionReport& r) {
  Json items = Json::array();
  for (const RepetitionItem& g : r.items) {
    items.push_back({{"prompt", g.prompt},
                     {"completion", g.completion},
                     {"generated_tokens", g.num_tokens},
                     {"repeated_4gram_ratio", g.ratio}});
  }
  return {{"mean_repeated_4gram_ratio", r.mean_ratio}, {"seconds", r.seconds}, {"items", std::move(items)}};
}

Json to_json(const WeightBudget& b, bool with_tensors) {
  Json j = Json::object();
  for (std::size_t c = 0; c < kNumWeightClasses; ++c) j[std::string(weight_class_name(WeightClass(c)))] = b.bytes[c];
  j["total"] = b.total_bytes();
  j["num_params"] = b.num_params;
  if (!with_tensors) return j;
  Json tensors = Json::array();
  for (const TensorPlan& t : b.tensors) {
    tensors.push_back({{"name", t.name},
                       {"role", models::tensor_role_name(t.role)},
                       {"scheme", weight_scheme_name(t.scheme)},
                       {"params", t.num_params},
                       {"group_size", t.group_size},
                       {"data_bytes", t.data_bytes},
                       {"scale_bytes", t.scale_bytes},
                       {"zero_point_bytes", t.zero_point_bytes}});
  }
  j["tensors"] = std::move(tensors);
  return j;
}

}  // namespace kiln::eval
