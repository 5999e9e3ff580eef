// Oracle: llama.cpp's gguf package. golden.json holds every tensor of tiny.gguf as
// gguf.quants.dequantize decodes it (tools/make_gguf_fixtures.py): one tensor of each block
// format, random bits with finite scales. kiln's decoding must agree to float rounding.
#include "ir/gguf_dequantize.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln::ir {
namespace {

TEST(GgufDequantize, EveryFormatMatchesLlamaCppsDecoder) {
  const GgufFile file(testing::test_data_dir() / "gguf" / "tiny.gguf");
  const Json golden = read_json_file(testing::test_data_dir() / "gguf" / "golden.json");
  ASSERT_EQ(file.tensors().size(), golden["tensors"].size());
  for (std::size_t i = 0; i < file.tensors().size(); ++i) {
    const GgufTensor& t = file.tensors()[i];
    const auto want = golden["tensors"][i]["values"].get<std::vector<float>>();
    std::vector<float> got(t.elements());
    dequantize_gguf(t.type, t.bytes, got);
    ASSERT_EQ(got.size(), want.size()) << t.name;
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
      if (std::abs(got[k] - want[k]) > 1e-6f * std::max(1.0f, std::abs(want[k]))) {
        if (wrong++ < 3) ADD_FAILURE() << t.name << "[" << k << "] = " << got[k] << ", gguf says " << want[k];
      }
    }
    EXPECT_EQ(wrong, 0u) << t.name;
  }
}

TEST(GgufDequantize, SizesMustAgree) {
  std::vector<std::uint8_t> block(18);
  std::vector<float> out(31);
  EXPECT_KILN_ERROR(dequantize_gguf(GgmlType::kQ4_0, block, out), "Q4_0");
  std::vector<float> whole(32);
  EXPECT_KILN_ERROR(dequantize_gguf(GgmlType::kQ8_K, block, whole), "Q8_K");
}

}  // namespace
}  // namespace kiln::ir
