#include "kernels/opencl/build_options.hpp"

#include <cctype>

#include <fmt/format.h>

#include "util/error.hpp"

namespace kiln::kernels::opencl {

std::string matmul_build_options(WeightScheme scheme) {
  std::string name(weight_scheme_name(scheme));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string options = fmt::format("{} -DSCHEME_{}", kLanguageOption, name);
  if (scheme == WeightScheme::kNf4) {
    options += " -DNF4_LEVELS=";
    for (std::size_t i = 0; i < kNf4Levels.size(); ++i) {
      options += fmt::format("{}{:a}f", i == 0 ? "" : ",", kNf4Levels[i]);  // hex: exact, no spaces
    }
  }
  return options;
}

std::string attention_build_options(ElementType precision) {
  switch (precision) {
    case ElementType::kF32: return fmt::format("{} -DKV_F32", kLanguageOption);
    case ElementType::kF16: return fmt::format("{} -DKV_F16", kLanguageOption);
    case ElementType::kU8: return fmt::format("{} -DKV_U8", kLanguageOption);
    default:
      fail(ErrorKind::kUnsupported, "the GPU device keeps its KV cache in f32, f16 or u8, not {}",
           kv_precision_name(precision));
  }
}

}  // namespace kiln::kernels::opencl
