// The paged-attention OpenCL kernels (paged_attention.cl) against reference/paged_attention:
// store_kv writes the bytes and u8 params reference::encode_kv writes, copy_kv_blocks applies
// its copies in order, and attention over a batch of sequences equals reference::paged_attention
// of each sequence reading the same encoded cache within 1e-4 (float online softmax vs double).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <ostream>
#include <random>
#include <span>
#include <vector>

#include "gpu_test_util.hpp"
#include "kernels/opencl/build_options.hpp"
#include "kernels/opencl/opencl_sources.hpp"
#include "kernels/reference/paged_attention.hpp"

namespace kiln::runtime::gpu {
namespace {

using kernels::PagedKv;
using kiln::testing::download;
using kiln::testing::upload;

constexpr cl_int kAttentionGroupSize = 64;  // paged_attention.cl's ATTENTION_GROUP_SIZE

// One program per cache precision, built once per process: PoCL compiles at run time.
const cl::Program& attention_program(GpuContext& gpu, ElementType element) {
  static std::map<ElementType, cl::Program> programs;
  auto it = programs.find(element);
  if (it == programs.end()) {
    const std::string options = kernels::opencl::attention_build_options(element);
    const ProgramSource source{"paged_attention.cl", kernels::opencl::paged_attention_source()};
    it = programs.emplace(element, build_program(gpu, source, options, {}).program).first;
  }
  return it->second;
}

std::vector<float> random_floats(std::size_t count, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(count);
  for (float& v : x) v = dist(rng);
  return x;
}

// A host copy of one layer's cache: keys, values [num_blocks, num_kv_heads, block_size,
// head_dim] encoded elements; key_params, value_params [.., groups, 2] for u8.
struct HostCache {
  ElementType element;
  cl_int num_blocks, num_kv_heads, block_size, head_dim, group_size, groups;
  std::vector<std::uint8_t> keys, values;
  std::vector<float> key_params, value_params;

  HostCache(ElementType e, cl_int blocks, cl_int kv_heads, cl_int block, cl_int dim, cl_int group)
      : element(e),
        num_blocks(blocks),
        num_kv_heads(kv_heads),
        block_size(block),
        head_dim(dim),
        group_size(e == ElementType::kU8 ? group : 0),
        groups(e == ElementType::kU8 ? (dim + group - 1) / group : 0),
        keys(rows() * row_bytes()),
        values(keys.size()),
        key_params(rows() * groups * 2),
        value_params(key_params.size()) {}

  std::size_t rows() const { return std::size_t(num_blocks) * num_kv_heads * block_size; }
  std::size_t row_bytes() const { return element_bytes(element, head_dim); }

  // Encodes x [head_dim] into row `row` of keys (or values), as store_kv must.
  void encode(std::size_t row, const float* x, bool key) {
    std::uint8_t* dst = (key ? keys : values).data() + row * row_bytes();
    float* params = (key ? key_params : value_params).data() + row * groups * 2;
    kernels::reference::encode_kv(x, head_dim, element, group_size, dst, params);
  }

  PagedKv view() const {
    return {.element = element,
            .keys = keys.data(),
            .values = values.data(),
            .key_params = groups ? key_params.data() : nullptr,
            .value_params = groups ? value_params.data() : nullptr,
            .block_size = block_size,
            .num_kv_heads = num_kv_heads,
            .head_dim = head_dim,
            .group_size = group_size,
            .groups = groups};
  }
};

// The cache on the device; params buffers are null (unused) unless u8.
struct DeviceCache {
  cl::Buffer keys, values, key_params, value_params;

  DeviceCache(GpuContext& gpu, const HostCache& host) : keys(upload(gpu, host.keys)), values(upload(gpu, host.values)) {
    if (host.groups > 0) {
      key_params = upload(gpu, host.key_params);
      value_params = upload(gpu, host.value_params);
    }
  }
};

HostCache random_cache(ElementType element, cl_int num_blocks, cl_int num_kv_heads, cl_int block_size, cl_int head_dim,
                       std::mt19937& rng) {
  HostCache cache(element, num_blocks, num_kv_heads, block_size, head_dim, 32);
  for (std::size_t row = 0; row < cache.rows(); ++row) {
    for (const bool key : {true, false}) cache.encode(row, random_floats(head_dim, rng).data(), key);
  }
  return cache;
}

struct CacheShape {
  ElementType element;
  cl_int block_size;
  cl_int head_dim;
};

void PrintTo(const CacheShape& shape, std::ostream* os) {
  *os << kv_precision_name(shape.element) << ", block_size " << shape.block_size << ", head_dim " << shape.head_dim;
}

class AttentionKernels : public ::testing::TestWithParam<CacheShape> {};

TEST_P(AttentionKernels, StoreKvWritesTheBytesOfEncodeKv) {
  KILN_REQUIRE_GPU(gpu);
  const CacheShape shape = GetParam();
  std::mt19937 rng(1);
  const cl_int num_blocks = 6, num_kv_heads = 2, rows = 7;
  HostCache want(shape.element, num_blocks, num_kv_heads, shape.block_size, shape.head_dim, 32);
  const DeviceCache cache(*gpu, want);  // all zeros

  // Magnitudes from 1e-6 (f16 subnormals) to 100, and one constant u8 group (scale 0).
  std::vector<float> k(std::size_t(rows) * num_kv_heads * shape.head_dim), v(k.size());
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), exponent(-6.0f, 2.0f);
  for (float& x : k) x = unit(rng) * std::pow(10.0f, exponent(rng));
  for (float& x : v) x = unit(rng) * std::pow(10.0f, exponent(rng));
  std::fill_n(v.begin(), 32, 0.75f);
  std::vector<cl_long> slots(std::size_t(num_blocks) * shape.block_size);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  slots.resize(rows);

  for (cl_int r = 0; r < rows; ++r) {
    const cl_long block = slots[r] / shape.block_size, offset = slots[r] % shape.block_size;
    for (cl_int h = 0; h < num_kv_heads; ++h) {
      const std::size_t row = std::size_t((block * num_kv_heads + h) * shape.block_size + offset);
      const std::size_t src = std::size_t(r * num_kv_heads + h) * shape.head_dim;
      want.encode(row, &k[src], true);
      want.encode(row, &v[src], false);
    }
  }

  cl::Kernel kernel(attention_program(*gpu, shape.element), "store_kv");
  const cl::Buffer k_buffer = upload(*gpu, k), v_buffer = upload(*gpu, v), slot_buffer = upload(*gpu, slots);
  int arg = 0;
  for (const cl::Buffer* b : {&k_buffer, &v_buffer, &slot_buffer}) kernel.setArg(arg++, *b);
  for (const cl_int x : {num_kv_heads, shape.head_dim, shape.block_size, want.group_size, want.groups})
    kernel.setArg(arg++, x);
  for (const cl::Buffer* b : {&cache.keys, &cache.values, &cache.key_params, &cache.value_params})
    kernel.setArg(arg++, *b);
  const cl_int units = shape.element == ElementType::kU8 ? want.groups : shape.head_dim;
  gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(units, num_kv_heads, rows));

  EXPECT_EQ(download<std::uint8_t>(*gpu, cache.keys, want.keys.size()), want.keys);
  EXPECT_EQ(download<std::uint8_t>(*gpu, cache.values, want.values.size()), want.values);
  if (want.groups > 0) {
    // Bit for bit: the scales decide every later decode.
    EXPECT_EQ(download<float>(*gpu, cache.key_params, want.key_params.size()), want.key_params);
    EXPECT_EQ(download<float>(*gpu, cache.value_params, want.value_params.size()), want.value_params);
  }
}

TEST_P(AttentionKernels, CopyKvBlocksAppliesCopiesInOrder) {
  KILN_REQUIRE_GPU(gpu);
  const CacheShape shape = GetParam();
  std::mt19937 rng(2);
  HostCache want = random_cache(shape.element, 5, 2, shape.block_size, shape.head_dim, rng);
  const DeviceCache cache(*gpu, want);

  // 3 := 1, then 0 := 3 (now block 1's contents), then 1 := 2: a later copy reads an earlier
  // one's destination and overwrites an earlier one's source.
  const std::vector<cl_long> copies = {1, 3, 3, 0, 2, 1};  // (src, dst) pairs
  const std::size_t block_bytes = want.row_bytes() * want.num_kv_heads * want.block_size;
  const std::size_t block_params = std::size_t(want.num_kv_heads) * want.block_size * want.groups * 2;
  for (std::size_t c = 0; c < copies.size(); c += 2) {
    const auto src = std::size_t(copies[c]), dst = std::size_t(copies[c + 1]);
    for (std::vector<std::uint8_t>* bytes : {&want.keys, &want.values})
      std::memmove(bytes->data() + dst * block_bytes, bytes->data() + src * block_bytes, block_bytes);
    for (std::vector<float>* params : {&want.key_params, &want.value_params})
      std::copy_n(params->begin() + src * block_params, block_params, params->begin() + dst * block_params);
  }

  cl::Kernel kernel(attention_program(*gpu, shape.element), "copy_kv_blocks");
  const cl::Buffer copy_buffer = upload(*gpu, copies);
  const cl_long block_elements = cl_long(want.num_kv_heads) * want.block_size * want.head_dim;
  int arg = 0;
  for (const cl::Buffer* b : {&cache.keys, &cache.values, &cache.key_params, &cache.value_params, &copy_buffer})
    kernel.setArg(arg++, *b);
  kernel.setArg(arg++, cl_int(copies.size() / 2));
  kernel.setArg(arg++, block_elements);
  kernel.setArg(arg++, cl_long(block_params));
  gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange,
                                    cl::NDRange(std::max<std::size_t>(block_elements, block_params)));

  EXPECT_EQ(download<std::uint8_t>(*gpu, cache.keys, want.keys.size()), want.keys);
  EXPECT_EQ(download<std::uint8_t>(*gpu, cache.values, want.values.size()), want.values);
  if (want.groups > 0) {
    EXPECT_EQ(download<float>(*gpu, cache.key_params, want.key_params.size()), want.key_params);
    EXPECT_EQ(download<float>(*gpu, cache.value_params, want.value_params.size()), want.value_params);
  }
}

// One sequence of the batch, in the attention kernel's sequences layout.
struct Sequence {
  cl_int row_begin, num_rows, num_cached, window;
  std::vector<std::int32_t> block_table;
};

TEST_P(AttentionKernels, AttentionOfABatchMatchesEachSequencesReference) {
  KILN_REQUIRE_GPU(gpu);
  const CacheShape shape = GetParam();
  std::mt19937 rng(3);
  const cl_int num_heads = 8, num_kv_heads = 2, num_blocks = 40, head_dim = shape.head_dim;
  const HostCache host = random_cache(shape.element, num_blocks, num_kv_heads, shape.block_size, head_dim, rng);
  const DeviceCache cache(*gpu, host);

  // A prefill chunk after 9 cached positions, a decode row with a long context, and rows of a
  // sliding-window layer; their blocks drawn from a shuffled pool, so tables are out of order.
  // The last row belongs to no sequence: the kernel leaves it as it was.
  std::vector<Sequence> sequences = {{0, 6, 9, 0, {}}, {6, 1, 130, 0, {}}, {7, 3, 12, 7, {}}};
  std::vector<std::int32_t> pool(num_blocks);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<std::int32_t> tables;  // every sequence's block table, concatenated
  std::vector<cl_int> layout;        // [sequences, 5]: row_begin, num_rows, num_cached, table_begin, window
  for (Sequence& s : sequences) {
    const cl_int blocks = (s.num_cached + s.num_rows + shape.block_size - 1) / shape.block_size;
    ASSERT_LE(blocks, cl_int(pool.size()));
    s.block_table.assign(pool.end() - blocks, pool.end());
    pool.resize(pool.size() - std::size_t(blocks));
    layout.insert(layout.end(), {s.row_begin, s.num_rows, s.num_cached, cl_int(tables.size()), s.window});
    tables.insert(tables.end(), s.block_table.begin(), s.block_table.end());
  }
  const cl_int rows = 11;
  const std::vector<float> q = random_floats(std::size_t(rows) * num_heads * head_dim, rng, -3.0f, 3.0f);
  const float scale = 1.0f / std::sqrt(float(head_dim));

  std::vector<float> want(q.size(), 7.0f);
  for (const Sequence& s : sequences) {
    const std::size_t first = std::size_t(s.row_begin) * num_heads * head_dim;
    kernels::reference::paged_attention(&q[first], s.num_rows, s.num_cached, num_heads, s.block_table, host.view(),
                                        scale, &want[first], s.window);
  }

  cl::Kernel kernel(attention_program(*gpu, shape.element), "attention");
  const cl::Buffer q_buffer = upload(*gpu, q), table_buffer = upload(*gpu, tables),
                   layout_buffer = upload(*gpu, layout), out_buffer = upload(*gpu, std::vector<float>(q.size(), 7.0f));
  int arg = 0;
  for (const cl::Buffer* b :
       {&q_buffer, &cache.keys, &cache.values, &cache.key_params, &cache.value_params, &table_buffer, &layout_buffer})
    kernel.setArg(arg++, *b);
  for (const cl_int x :
       {cl_int(sequences.size()), num_heads, num_kv_heads, head_dim, shape.block_size, host.group_size, host.groups})
    kernel.setArg(arg++, x);
  kernel.setArg(arg++, scale);
  kernel.setArg(arg++, out_buffer);
  gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(kAttentionGroupSize, num_heads, rows),
                                    cl::NDRange(kAttentionGroupSize, 1, 1));

  const std::vector<float> got = download<float>(*gpu, out_buffer, q.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f) << "row " << i / (num_heads * head_dim) << ", head " << i / head_dim % num_heads
                                        << ", dim " << i % head_dim;
  }
}

std::string shape_name(const ::testing::TestParamInfo<CacheShape>& info) {
  return std::string(kv_precision_name(info.param.element)) + "_block" + std::to_string(info.param.block_size) +
         "_dim" + std::to_string(info.param.head_dim);
}

// u8 at head_dim 80 has a short last group (80 = 32 + 32 + 16); 256 is the largest head.
INSTANTIATE_TEST_SUITE_P(Shapes, AttentionKernels,
                         ::testing::Values(CacheShape{ElementType::kF32, 16, 64}, CacheShape{ElementType::kF32, 5, 256},
                                           CacheShape{ElementType::kF16, 16, 128}, CacheShape{ElementType::kF16, 5, 80},
                                           CacheShape{ElementType::kU8, 16, 64}, CacheShape{ElementType::kU8, 5, 80},
                                           CacheShape{ElementType::kF32, 8, 16}),
                         shape_name);

}  // namespace
}  // namespace kiln::runtime::gpu
