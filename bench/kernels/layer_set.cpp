// Random canonical matrices (codes and f16 scales drawn directly, no f32 quantisation pass),
// packed for the ISA under test.
#include "layer_set.hpp"

#include <random>

#include "util/error.hpp"
#include "util/half.hpp"

namespace kiln::bench {
namespace {

constexpr std::size_t kHidden = 2048, kIntermediate = 8192, kKvDim = 512, kVocab = 128256;

kernels::PackedMatrix random_packed(Isa isa, WeightScheme scheme, std::size_t out, std::size_t in,
                                    std::size_t group_size, unsigned seed) {
  if (group_size == 0) group_size = in;  // per-channel
  QuantizedMatrix m(scheme, out, in, is_float_scheme(scheme) ? in : group_size);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> value(-0.05f, 0.05f);
  if (is_float_scheme(scheme)) {
    // Finite values in every float format: draw f32 and convert.
    std::vector<float> w(out * in);
    for (float& v : w) v = value(rng);
    return kernels::pack_weights(quantize_weights(w, out, in, scheme, in, "bench").view(), isa, "bench");
  }
  for (auto& b : m.data()) b = static_cast<std::uint8_t>(byte(rng));
  for (auto& s : m.scales()) s = f32_to_f16(value(rng) * 0.01f + 0.001f);
  for (auto& z : m.zero_points()) z = static_cast<std::uint8_t>(byte(rng));
  return kernels::pack_weights(m.view(), isa, "bench");
}

}  // namespace

std::vector<BenchMatrix> make_layer_set(Isa isa, WeightScheme scheme, std::size_t group_size, std::size_t layers) {
  std::vector<BenchMatrix> set;
  unsigned seed = 1;
  for (std::size_t l = 0; l < layers; ++l) {
    set.push_back({"q", 0, random_packed(isa, scheme, kHidden, kHidden, group_size, seed++)});
    set.push_back({"k", 0, random_packed(isa, scheme, kKvDim, kHidden, group_size, seed++)});
    set.push_back({"v", 0, random_packed(isa, scheme, kKvDim, kHidden, group_size, seed++)});
    set.push_back({"o", 1, random_packed(isa, scheme, kHidden, kHidden, group_size, seed++)});
    set.push_back({"gate", 2, random_packed(isa, scheme, kIntermediate, kHidden, group_size, seed++)});
    set.push_back({"up", 2, random_packed(isa, scheme, kIntermediate, kHidden, group_size, seed++)});
    set.push_back({"down", 3, random_packed(isa, scheme, kHidden, kIntermediate, group_size, seed++)});
  }
  return set;
}

std::vector<BenchMatrix> make_head(Isa isa, WeightScheme scheme, std::size_t group_size) {
  std::vector<BenchMatrix> set;
  set.push_back({"head", 0, random_packed(isa, scheme, kVocab, kHidden, group_size, 99)});
  return set;
}

std::vector<BenchMatrix> make_cached(Isa isa, WeightScheme scheme, std::size_t group_size) {
  std::vector<BenchMatrix> set;
  set.push_back({"q", 0, random_packed(isa, scheme, kHidden, kHidden, group_size, 7)});
  return set;
}

std::vector<BenchMatrix> make_matrix(Isa isa, WeightScheme scheme, std::size_t group_size, std::size_t out,
                                     std::size_t in) {
  std::vector<BenchMatrix> set;
  set.push_back(
      {std::to_string(out) + "x" + std::to_string(in), 0, random_packed(isa, scheme, out, in, group_size, 11)});
  return set;
}

std::vector<BenchMatrix> make_decode_op(Isa isa, WeightScheme scheme, std::size_t group_size, const std::string& op) {
  if (op == "head") return make_head(isa, scheme, group_size);
  struct Shape {
    const char* name;
    std::size_t out, in;
  };
  std::vector<Shape> job;  // matrices that share one input
  if (op == "qkv") job = {{"q", kHidden, kHidden}, {"k", kKvDim, kHidden}, {"v", kKvDim, kHidden}};
  if (op == "o") job = {{"o", kHidden, kHidden}};
  if (op == "gate_up") job = {{"gate", kIntermediate, kHidden}, {"up", kIntermediate, kHidden}};
  if (op == "down") job = {{"down", kHidden, kIntermediate}};
  if (job.empty()) fail("decode op '{}': expected qkv, o, gate_up, down or head", op);
  constexpr std::size_t kSetBytes = std::size_t{128} << 20;
  std::vector<BenchMatrix> set;
  unsigned seed = 1;
  for (std::size_t copy = 0; packed_bytes(set) < kSetBytes; ++copy) {
    for (const Shape& m : job)
      set.push_back({m.name, copy, random_packed(isa, scheme, m.out, m.in, group_size, seed++)});
  }
  return set;
}

std::size_t packed_bytes(const std::vector<BenchMatrix>& set) {
  std::size_t bytes = 0;
  for (const BenchMatrix& m : set) {
    const kernels::PackedLayout& l = m.packed.layout();
    bytes += l.data_bytes + l.scales_bytes + l.zeros_bytes;
  }
  return bytes;
}

}  // namespace kiln::bench
