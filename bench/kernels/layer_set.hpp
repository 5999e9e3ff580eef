// Weight sets shaped like Llama-3.2-1B for the kernel benchmarks (hidden 2048, intermediate
// 8192, 8 KV heads of 64, vocab 128256), with random codes: speed depends on the bytes and
// shapes, not on the values. Packing happens once per benchmark process.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/matmul.hpp"

namespace kiln::bench {

struct BenchMatrix {
  std::string name;
  std::size_t input = 0;  // which activation vector feeds it (QKV and gate/up share one)
  kernels::PackedMatrix packed;
};

// `layers` decoder layers (q, k, v, o, gate, up, down each), or the output head alone.
// group_size 0 = per-channel.
std::vector<BenchMatrix> make_layer_set(Isa isa, WeightScheme scheme, std::size_t group_size, std::size_t layers);
std::vector<BenchMatrix> make_head(Isa isa, WeightScheme scheme, std::size_t group_size);
// One [2048, 2048] matrix (the q projection): small enough to stay in L2 / L3, so a GEMV over it
// measures the kernel's own throughput, the headroom it has over the DRAM roofline.
std::vector<BenchMatrix> make_cached(Isa isa, WeightScheme scheme, std::size_t group_size);
// One [out, in] matrix: a single projection shape of the 1B model, to see what share of the
// kernel's peak each GEMM shape reaches (the weights of one exceed L2 but not L3).
std::vector<BenchMatrix> make_matrix(Isa isa, WeightScheme scheme, std::size_t group_size, std::size_t out,
                                     std::size_t in);

// One decode op of the 1B model as the runtime runs it (q/k/v and gate/up each one job): "qkv",
// "o", "gate_up" or "down", repeated until the set exceeds 128 MB (4× this machine's L3) so a
// pass streams from memory, each copy its own job; "head" is one [128256, 2048] matrix.
std::vector<BenchMatrix> make_decode_op(Isa isa, WeightScheme scheme, std::size_t group_size, const std::string& op);

// Bytes a pass over the set reads: packed codes, scales and zero points.
std::size_t packed_bytes(const std::vector<BenchMatrix>& set);

}  // namespace kiln::bench
