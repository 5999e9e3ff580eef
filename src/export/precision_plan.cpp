#include "export/precision_plan.hpp"

#include <algorithm>
#include <numeric>

#include "util/error.hpp"

namespace kiln::exporter {
namespace {

// The stored precision of a float tensor, as a scheme.
WeightScheme source_scheme(const ir::TensorSource& source, const std::string& name) {
  const ir::TensorView* t = source.find(name);
  if (t == nullptr) fail(ErrorKind::kInternal, "plan: tensor '{}' vanished", name);
  switch (t->dtype) {
    case ElementType::kF16: return WeightScheme::kF16;
    case ElementType::kBf16: return WeightScheme::kBf16;
    default: return WeightScheme::kF32;
  }
}

std::int64_t resolved_group(std::int64_t group_size, std::int64_t in) {
  return group_size == -1 || group_size > in ? in : group_size;
}

void assign(TensorPlan& p, WeightScheme scheme, std::int64_t group_size) {
  p.scheme = scheme;
  p.group_size = is_float_scheme(scheme) ? 0 : resolved_group(group_size, p.spec.shape.back());
}

WeightScheme backup_scheme(BackupPrecision b) {
  return b == BackupPrecision::kInt8Sym ? WeightScheme::kInt8Sym : WeightScheme::kInt8Asym;
}

}  // namespace

std::int64_t TensorPlan::num_parameters() const {
  return std::accumulate(spec.shape.begin(), spec.shape.end(), std::int64_t{1}, std::multiplies<>());
}

bool is_ratio_defining(const models::TensorSpec& spec, const ExportRecipe& recipe) {
  if (!recipe.is_4bit()) return false;
  switch (spec.role) {
    case models::TensorRole::kAttention:
    case models::TensorRole::kMlp: return spec.use == models::WeightUse::kMatrix;
    case models::TensorRole::kEmbedding:
    case models::TensorRole::kHead: return recipe.all_layers;
    case models::TensorRole::kNorm: return false;
  }
  return false;
}

std::vector<TensorPlan> plan_tensors(const ir::ModelConfig& config, const ir::TensorSource& source,
                                     const ExportRecipe& recipe, const std::map<std::string, double>& scores) {
  std::vector<TensorPlan> plan;
  for (const models::TensorSpec& spec : models::tensor_specs(config)) {
    TensorPlan p;
    p.spec = spec;
    const bool is_vector = spec.use == models::WeightUse::kVector;
    if (recipe.is_float()) {
      // A float export stores everything in that format; vectors included.
      assign(p, recipe.primary, 0);
    } else if (is_vector) {
      // Norm gains and biases stay f32: they are tiny and AWQ folds scales into the gains.
      assign(p, WeightScheme::kF32, 0);
    } else if (recipe.is_int8()) {
      assign(p, recipe.primary, -1);
    } else {
      p.ratio_defining = is_ratio_defining(spec, recipe);
      if (recipe.backup == BackupPrecision::kNone) {
        assign(p, source_scheme(source, spec.name), 0);
      } else {
        assign(p, backup_scheme(recipe.backup), -1);
      }
    }
    plan.push_back(std::move(p));
  }
  if (!recipe.is_4bit()) return plan;

  std::vector<TensorPlan*> candidates;
  for (TensorPlan& p : plan) {
    if (p.ratio_defining) candidates.push_back(&p);
  }
  if (recipe.ratio < 1.0) {
    for (TensorPlan* p : candidates) {
      if (!scores.contains(p->spec.name))
        fail(ErrorKind::kInternal, "plan: no sensitivity score for '{}'", p->spec.name);
    }
    // Least sensitive first (stable, so ties keep model order), as NNCF's MixedPrecisionCriterion.
    std::stable_sort(candidates.begin(), candidates.end(), [&](const TensorPlan* a, const TensorPlan* b) {
      return scores.at(a->spec.name) < scores.at(b->spec.name);
    });
  }
  std::int64_t total = 0;
  for (const TensorPlan* p : candidates) total += p->num_parameters();
  std::int64_t in_primary = 0;
  for (TensorPlan* p : candidates) {
    if (recipe.ratio < 1.0 &&
        static_cast<double>(in_primary + p->num_parameters()) / static_cast<double>(total) >= recipe.ratio) {
      break;
    }
    assign(*p, recipe.primary, recipe.group_size);
    p->primary = true;
    in_primary += p->num_parameters();
  }
  return plan;
}

}  // namespace kiln::exporter
