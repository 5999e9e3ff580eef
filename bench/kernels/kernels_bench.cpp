// Kernel microbenchmarks: decode GEMV over a Llama-3.2-1B-shaped weight set (GB/s of weight
// bytes and their share of the streaming-read bandwidth measured around each benchmark, the
// roofline); GEMM at n = 26 and 512 (prefill) and 64 (a continuous-batching decode step), bf16
// and kiln-tiny's f16 shapes at 128 (GFLOP/s); decode attention over 64 sequences (K/V GB/s
// against the same roofline). Threads split the work as the runtime will.
//   kernels_bench [--isa=avx2|avx512|...] [google-benchmark flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

#include "attention_decode.hpp"
#include "kernels/matmul.hpp"
#include "layer_set.hpp"
#include "runtime/cpu/linear_runner.hpp"
#include "runtime/thread_pool.hpp"
#include "stream_read.hpp"

namespace kiln::bench {
namespace {

constexpr std::size_t kMaxThreads = 2;
constexpr std::size_t kProbeBytes = std::size_t{1} << 30;  // 1 GiB: far beyond any L3 here
std::uint8_t* g_probe_buffer = nullptr;
Isa g_isa = Isa::kScalar;

ThreadPool& pool_for(std::size_t threads) {
  static std::map<std::size_t, std::unique_ptr<ThreadPool>> pools;
  auto& p = pools[threads];
  if (!p) p = std::make_unique<ThreadPool>(ThreadPoolOptions{.num_threads = threads});
  return *p;
}

// Median of `runs` streaming reads of the 1 GiB buffer, GB/s.
double stream_bandwidth(std::size_t threads, int runs = 5) {
  std::vector<double> gbs(runs);
  for (double& r : gbs) r = measure_read_bandwidth_gbs(pool_for(threads), g_probe_buffer, kProbeBytes);
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}

void measure_bandwidth() {
  g_probe_buffer = static_cast<std::uint8_t*>(std::aligned_alloc(4096, kProbeBytes));
  std::memset(g_probe_buffer, 1, kProbeBytes);
  for (std::size_t t = 1; t <= kMaxThreads; ++t) {
    std::printf("stream read, %zu thread(s), 1 GiB: median %.1f GB/s\n", t, stream_bandwidth(t, 9));
  }
}

// scheme, group, layers (0 = head, -1 = cached), out, in (both 0 unless one matrix of that
// shape), decode op (empty unless one of make_decode_op's)
using SetKey = std::tuple<WeightScheme, std::size_t, int, std::size_t, std::size_t, std::string>;

const std::vector<BenchMatrix>& weight_set(WeightScheme scheme, std::size_t group, int layers, std::size_t out,
                                           std::size_t in, const std::string& op) {
  static std::map<SetKey, std::vector<BenchMatrix>> sets;
  auto& set = sets[{scheme, group, layers, out, in, op}];
  if (set.empty()) {
    set = !op.empty()   ? make_decode_op(g_isa, scheme, group, op)
          : out != 0    ? make_matrix(g_isa, scheme, group, out, in)
          : layers == 0 ? make_head(g_isa, scheme, group)
          : layers < 0  ? make_cached(g_isa, scheme, group)
                        : make_layer_set(g_isa, scheme, group, layers);
  }
  return set;
}

// One matrix of a job: its kernel, arguments and the running count of tiles before it.
struct Target {
  kernels::PackedWeights w;
  kernels::MatmulFn fn;
  kernels::MatmulArgs args;
  std::size_t first_tile;
};

// Matrices that share an input run as one job, as the runtime's linear() does for Q/K/V and
// gate/up: their tiles form one index space, split into contiguous ranges as linear() splits it.
void run_job(ThreadPool& pool, const Target* targets, std::size_t count, std::size_t total_tiles) {
  std::size_t bytes = 0;
  for (std::size_t m = 0; m < count; ++m) {
    const kernels::PackedLayout& l = targets[m].w.layout;
    bytes += l.data_bytes + l.scales_bytes + l.zeros_bytes;
  }
  const std::size_t tasks = runtime::linear_task_count(total_tiles, bytes, pool.num_threads());
  pool.parallel_for(tasks, [&](std::size_t task, std::size_t) {
    const std::size_t tile_begin = runtime::linear_task_begin(task, tasks, total_tiles);
    const std::size_t tile_end = runtime::linear_task_begin(task + 1, tasks, total_tiles);
    for (std::size_t m = 0; m < count; ++m) {
      const Target& t = targets[m];
      const std::size_t tiles = t.w.layout.tiles;
      const std::size_t begin = std::max(tile_begin, t.first_tile), end = std::min(tile_end, t.first_tile + tiles);
      if (begin >= end) continue;
      const std::size_t rows = t.w.layout.tile_rows;
      t.fn(t.w, t.args, (begin - t.first_tile) * rows, std::min(t.w.layout.out, (end - t.first_tile) * rows));
    }
  });
}

struct Config {
  WeightScheme scheme;
  std::size_t group;
  kernels::ActivationMode mode;
  std::size_t act_group;  // kInt8 only
  int layers;             // 0 = output head, -1 = one cache-resident matrix
  std::size_t n;          // activation rows
  std::size_t threads;
  std::size_t out = 0, in = 0;  // one [out, in] matrix instead of the set `layers` names
  std::string op = {};          // one decode op (make_decode_op) instead of the above
};

// One pass over the set: per group of matrices sharing an input, quantise it once (kInt8) and
// run the group as one job. y holds each group member's output side by side.
void run_pass(const Config& c, const std::vector<BenchMatrix>& set, const std::vector<float>& x, std::vector<float>& y,
              std::vector<std::unique_ptr<kernels::ActivationBuffer>>& acts, kernels::QuantizeActivationsFn quantize,
              ThreadPool& pool) {
  constexpr std::size_t kMaxGroup = 3;
  for (std::size_t first = 0; first < set.size();) {
    std::size_t last = first + 1;
    while (last < set.size() && last - first < kMaxGroup && set[last].input == set[first].input) ++last;
    kernels::QuantizedActivations q;
    if (c.mode == kernels::ActivationMode::kInt8) {
      q = acts[set[first].input]->view(c.n);
      pool.parallel_for(c.n, [&](std::size_t i, std::size_t) { quantize(x.data(), q, i, i + 1); });
    }
    std::array<Target, kMaxGroup> targets;
    std::size_t tiles = 0, y_offset = 0;
    for (std::size_t m = first; m < last; ++m) {
      const kernels::PackedLayout& l = set[m].packed.layout();
      const kernels::MatmulKernels k = kernels::find_matmul_kernels(g_isa, l.scheme, c.mode);
      targets[m - first] = Target{set[m].packed.view(), k.for_rows(c.n),
                                  kernels::MatmulArgs{c.n, x.data(), &q, y.data() + y_offset, l.out, nullptr}, tiles};
      tiles += l.tiles;
      y_offset += c.n * l.out;
    }
    run_job(pool, targets.data(), last - first, tiles);
    first = last;
  }
}

void bench_matmul(benchmark::State& state, Config c) {
  const std::vector<BenchMatrix>& set = weight_set(c.scheme, c.group, c.layers, c.out, c.in, c.op);
  ThreadPool& pool = pool_for(c.threads);
  std::size_t max_in = 0, sum_out = 0, flops = 0;
  for (const BenchMatrix& m : set) {
    max_in = std::max(max_in, m.packed.layout().in);
    sum_out += m.packed.layout().out;
    flops += 2 * c.n * m.packed.layout().out * m.packed.layout().in;
  }
  std::vector<float> x(c.n * max_in, 0.5f), y(c.n * sum_out);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  std::vector<std::unique_ptr<kernels::ActivationBuffer>> acts;
  if (c.mode == kernels::ActivationMode::kInt8) {
    std::vector<std::size_t> width;  // input width per distinct activation vector
    for (const BenchMatrix& m : set) {
      width.resize(std::max(width.size(), m.input + 1), 0);
      width[m.input] = m.packed.layout().in;
      kernels::check_activation_groups(m.packed.layout(), c.act_group, m.name);
    }
    for (std::size_t in : width) {
      acts.push_back(std::make_unique<kernels::ActivationBuffer>(c.n, std::max<std::size_t>(in, 1), c.act_group));
    }
  }
  const kernels::QuantizeActivationsFn quantize = kernels::find_quantize_activations(g_isa);
  run_pass(c, set, x, y, acts, quantize, pool);  // warm-up
  // The roofline is the streaming bandwidth measured around this benchmark, with its threads:
  // on a shared machine the bandwidth available drifts between benchmarks.
  const bool decode = c.n == 1 && c.layers >= 0;  // roofline: DRAM-sized decode sets only
  const double bandwidth_before = decode ? stream_bandwidth(c.threads) : 0.0;
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    run_pass(c, set, x, y, acts, quantize, pool);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(y.data());
  }
  const double passes = static_cast<double>(state.iterations());
  const double gbs = static_cast<double>(packed_bytes(set)) * passes / seconds / 1e9;
  state.counters["weight_GB/s"] = gbs;
  if (decode) {
    const double bandwidth = (bandwidth_before + stream_bandwidth(c.threads)) / 2;
    state.counters["stream_GB/s"] = bandwidth;
    state.counters["roofline_%"] = 100.0 * gbs / bandwidth;
  }
  state.counters["GFLOP/s"] = static_cast<double>(flops) * passes / seconds / 1e9;
  state.counters["ms/pass"] = 1e3 * seconds / passes;
  state.counters["MB"] = static_cast<double>(packed_bytes(set)) / 1e6;
}

std::string config_name(const char* kind, const Config& c) {
  // fmt rather than chains of string operator+, on which gcc 12 warns falsely (-Wrestrict).
  std::string name = fmt::format("{}/{}", kind, weight_scheme_name(c.scheme));
  if (!is_float_scheme(c.scheme)) name += c.group == 0 ? std::string("_channel") : fmt::format("_g{}", c.group);
  name += c.mode == kernels::ActivationMode::kInt8 ? fmt::format("/x_int8_g{}", c.act_group) : std::string("/x_f32");
  if (!c.op.empty()) {
    name += fmt::format("/op_{}", c.op);
  } else if (c.out != 0) {
    name += fmt::format("/{}x{}", c.out, c.in);
  } else if (c.layers == 0) {
    name += "/head";
  } else if (c.layers < 0) {
    name += "/cached";
  } else {
    name += fmt::format("/layers{}", c.layers);
  }
  name += fmt::format("/n{}/threads:{}", c.n, c.threads);
  return name;
}

// The cost a kernel split pays per op: one parallel_for of trivial tasks (wake-up + barrier).
void bench_pool_overhead(benchmark::State& state, std::size_t threads) {
  ThreadPool& pool = pool_for(threads);
  std::size_t sink = 0;
  for (auto _ : state) {
    pool.parallel_for(threads * 4, [&](std::size_t task, std::size_t) { benchmark::DoNotOptimize(task + sink); });
  }
  benchmark::DoNotOptimize(sink);
}

void register_all() {
  for (std::size_t threads : {1, 2}) {
    benchmark::RegisterBenchmark(("pool/parallel_for/threads:" + std::to_string(threads)).c_str(), bench_pool_overhead,
                                 threads)
        ->UseRealTime();
  }
  using kernels::ActivationMode;
  struct Weights {
    WeightScheme scheme;
    std::size_t group;
  };
  const Weights decode_sets[] = {{WeightScheme::kInt4Sym, 128}, {WeightScheme::kInt8Sym, 0}};
  for (const Weights& w : decode_sets) {
    // Kernel throughput on a cache-resident matrix, one thread: the headroom over DRAM.
    for (std::size_t act_group : {std::size_t{32}, std::size_t{128}}) {
      const Config c{w.scheme, w.group, ActivationMode::kInt8, act_group, -1, 1, 1};
      benchmark::RegisterBenchmark(config_name("gemv", c).c_str(), bench_matmul, c)->UseRealTime();
    }
    const Config cf{w.scheme, w.group, ActivationMode::kF32, 0, -1, 1, 1};
    benchmark::RegisterBenchmark(config_name("gemv", cf).c_str(), bench_matmul, cf)->UseRealTime();
    for (int layers : {4, 0}) {
      for (std::size_t threads : {1, 2}) {
        for (std::size_t act_group : {std::size_t{32}, std::size_t{128}}) {
          const Config c{w.scheme, w.group, ActivationMode::kInt8, act_group, layers, 1, threads};
          benchmark::RegisterBenchmark(config_name("gemv", c).c_str(), bench_matmul, c)->UseRealTime();
        }
        const Config f{w.scheme, w.group, ActivationMode::kF32, 0, layers, 1, threads};
        benchmark::RegisterBenchmark(config_name("gemv", f).c_str(), bench_matmul, f)->UseRealTime();
      }
    }
  }
  const Weights prefill_sets[] = {{WeightScheme::kInt4Sym, 128}, {WeightScheme::kInt8Sym, 0}, {WeightScheme::kBf16, 0}};
  for (const Weights& w : prefill_sets) {
    for (std::size_t n : {26, 64, 128, 512}) {
      // 128 rows: one calibration sample of `kiln export`, which runs its forward on bf16 weights.
      if (n == 128 && w.scheme != WeightScheme::kBf16) continue;
      for (std::size_t threads : {1, 2}) {
        const ActivationMode mode = is_float_scheme(w.scheme) ? ActivationMode::kF32 : ActivationMode::kInt8;
        // 32 is OpenVINO's default DYNAMIC_QUANTIZATION_GROUP_SIZE; 128 (kiln's) matches the weights.
        for (std::size_t act_group : {std::size_t{32}, std::size_t{128}}) {
          if (mode == ActivationMode::kF32 && act_group != 128) continue;  // f32: no groups, one run
          const Config c{w.scheme, w.group, mode, act_group, 1, n, threads};
          benchmark::RegisterBenchmark(config_name("gemm", c).c_str(), bench_matmul, c)->UseRealTime();
        }
      }
    }
  }
  // f16 weights at one calibration sample (128 rows) of `kiln export` on models/kiln-tiny:
  // its gate/up, down and q shapes, f32 activations.
  const std::size_t tiny_shapes[][2] = {{704, 256}, {256, 704}, {256, 256}};
  for (const auto& [out, in] : tiny_shapes) {
    const Config c{WeightScheme::kF16, 0, ActivationMode::kF32, 0, 1, 128, 1, out, in};
    benchmark::RegisterBenchmark(config_name("gemm", c).c_str(), bench_matmul, c)->UseRealTime();
  }
  // Each decode op of the 1B model from memory, as the runtime runs it (int4 sym g128 layers, the
  // int8 asymmetric per-channel head, act group 32): the per-op share of the stream bandwidth.
  for (const char* op : {"qkv", "o", "gate_up", "down", "head"}) {
    const bool head = std::string(op) == "head";
    for (std::size_t threads : {1, 2}) {
      const Config c{head ? WeightScheme::kInt8Asym : WeightScheme::kInt4Sym,
                     head ? std::size_t{0} : 128,
                     ActivationMode::kInt8,
                     32,
                     1,
                     1,
                     threads,
                     0,
                     0,
                     op};
      benchmark::RegisterBenchmark(config_name("gemv", c).c_str(), bench_matmul, c)->UseRealTime();
    }
  }
  // Decode attention of a 64-sequence batch at the serving benchmark's mean context (128-token
  // prompts, 128 new tokens) and at a long one, in the default (f16) and u8 KV precisions.
  for (ElementType element : {ElementType::kF16, ElementType::kU8}) {
    for (std::int64_t context : {192, 1024}) {
      for (std::size_t threads : {1, 2}) {
        const AttentionDecodeConfig c{element, 64, context};
        const std::string name = "attention/decode/kv_" + std::string(element_type_name(element)) + "/seqs" +
                                 std::to_string(c.sequences) + "/context" + std::to_string(context) +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), [c, threads](benchmark::State& state) {
          bench_attention_decode(state, c, g_isa, pool_for(threads), stream_bandwidth(threads));
        })->UseRealTime();
      }
    }
  }
  // Each projection shape of the 1B model alone at the 26-token prompt, int4 × int8 (act group
  // 32, the runtime default): q/o, k/v, gate/up, down.
  const std::size_t shapes[][2] = {{2048, 2048}, {512, 2048}, {8192, 2048}, {2048, 8192}};
  for (const auto& [out, in] : shapes) {
    for (std::size_t threads : {1, 2}) {
      const Config c{WeightScheme::kInt4Sym, 128, ActivationMode::kInt8, 32, 1, 26, threads, out, in};
      benchmark::RegisterBenchmark(config_name("gemm", c).c_str(), bench_matmul, c)->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  kiln::bench::g_isa = kiln::select_isa();
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--isa=", 6) == 0) {
      kiln::bench::g_isa = kiln::select_isa(kiln::parse_isa(argv[i] + 6));
      argv[i] = argv[--argc];
      --i;
    }
  }
  std::printf("kernels: isa %s; cpu %s\n", std::string(kiln::isa_name(kiln::bench::g_isa)).c_str(),
              kiln::describe_cpu_features().c_str());
  kiln::bench::measure_bandwidth();
  kiln::bench::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
