// The paged KV cache on the GPU: storing K/V rows (f32, f16 or group-wise u8), copying blocks,
// and causal GQA attention through per-sequence block tables with an online softmax in float.
// Twins of reference/paged_attention; the cache precision is a build option, exactly one of
// -DKV_F32, -DKV_F16, -DKV_U8 (a model has one), so every kernel reads one element type.
//
// Cache layout, per layer: keys, values [num_blocks, num_kv_heads, block_size, head_dim]
// elements; u8 only: key_params, value_params [num_blocks, num_kv_heads, block_size, groups, 2]
// as (scale, min), x ~ code * scale + min, groups = ceil(head_dim / group_size). Where the
// precision is not u8 the params arguments are unused and may be null.

#if defined(KV_F32)
typedef float kv_t;
#elif defined(KV_F16)
// The bits of a half: read and written through vload_half / vstore_half, so the device needs no
// cl_khr_fp16 (OpenCL C 1.2 cannot dereference a half pointer without it).
typedef ushort kv_t;
#elif defined(KV_U8)
typedef uchar kv_t;
#else
#error "build with one of -DKV_F32, -DKV_F16, -DKV_U8"
#endif

// The attention kernel's work-group size.
#ifndef ATTENTION_GROUP_SIZE
#define ATTENTION_GROUP_SIZE 64
#endif
#define MAX_HEAD_DIM 256

// Element d of cache row `row` (the row's index in [num_blocks * num_kv_heads * block_size]).
float load_kv(__global const kv_t* cache, __global const float* params, long row, int d, int head_dim,
              int group_size, int groups) {
#if defined(KV_F32)
  return cache[row * head_dim + d];
#elif defined(KV_F16)
  return vload_half(row * head_dim + d, (__global const half*)cache);
#else
  __global const float* p = params + (row * groups + d / group_size) * 2;
  return fma((float)cache[row * head_dim + d], p[0], p[1]);
#endif
}

#if defined(KV_U8)
// a / b rounded to nearest even, whatever the precision of the device's `/` (OpenCL allows
// 2.5 ulp): the quantiser must reproduce the CPU's scales bit for bit. fma's residual is exact,
// so one correction step lands within a neighbour of the rounded quotient, and the nearest of
// the three is the one with the smallest residual (no quotient of floats is a midpoint).
float divide_rn(float a, float b) {
  float q = a / b;
  q = fma(fma(-q, b, a), 1.0f / b, q);
  const float below = nextafter(q, -INFINITY), above = nextafter(q, INFINITY);
  float best = q, best_residual = fabs(fma(-q, b, a));
  if (fabs(fma(-below, b, a)) < best_residual) {
    best = below;
    best_residual = fabs(fma(-below, b, a));
  }
  if (fabs(fma(-above, b, a)) < best_residual) best = above;
  return best;
}

// One group of a u8 row, as reference::encode_kv: scale = (max - min) / 255 and code =
// round_half_even((x - min) * (1 / scale)) clamped to [0, 255]; a constant group stores scale 0.
void encode_group(__global const float* x, int count, __global uchar* dst, __global float* params) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < count; ++i) {
    lo = fmin(lo, x[i]);
    hi = fmax(hi, x[i]);
  }
  const float scale = divide_rn(hi - lo, 255.0f);
  const float inverse = scale > 0.0f ? divide_rn(1.0f, scale) : 0.0f;
  for (int i = 0; i < count; ++i) dst[i] = (uchar)clamp(rint((x[i] - lo) * inverse), 0.0f, 255.0f);
  params[0] = scale;
  params[1] = lo;
}
#endif

// Writes k, v [rows, num_kv_heads, head_dim] into the cache at slots [rows] (int64: slot =
// block * block_size + offset). NDRange (units, num_kv_heads, rows), any work-group, where a
// unit is one element (f32, f16: units = head_dim) or one quantisation group (u8: units = groups).
__kernel void store_kv(__global const float* k, __global const float* v, __global const long* slots, int num_kv_heads,
                       int head_dim, int block_size, int group_size, int groups, __global kv_t* keys,
                       __global kv_t* values, __global float* key_params, __global float* value_params) {
  const int unit = get_global_id(0);
  const int h = get_global_id(1);
  const long r = get_global_id(2);
  const long slot = slots[r];
  const long row = (slot / block_size * num_kv_heads + h) * block_size + slot % block_size;
  const long src = (r * num_kv_heads + h) * head_dim;
#if defined(KV_F32)
  keys[row * head_dim + unit] = k[src + unit];
  values[row * head_dim + unit] = v[src + unit];
#elif defined(KV_F16)
  vstore_half_rte(k[src + unit], row * head_dim + unit, (__global half*)keys);
  vstore_half_rte(v[src + unit], row * head_dim + unit, (__global half*)values);
#else
  const int first = unit * group_size;
  const int count = min(group_size, head_dim - first);
  const long dst = row * head_dim + first;
  const long p = (row * groups + unit) * 2;
  encode_group(k + src + first, count, keys + dst, key_params + p);
  encode_group(v + src + first, count, values + dst, value_params + p);
#endif
}

// For each copy in order, block dst of keys, values (and u8 params) := block src. copies
// [num_copies, 2] (src, dst) int64, the layout of models::KvBlockCopy. block_elements =
// num_kv_heads * block_size * head_dim, block_params = num_kv_heads * block_size * groups * 2
// (0 unless u8). NDRange (>= max(block_elements, block_params)), any work-group. NOTE: one
// launch applies every copy in order without a barrier: a work-item moves the same offset of
// every block, so a later copy that reads an earlier one's destination reads this work-item's
// own write.
__kernel void copy_kv_blocks(__global kv_t* keys, __global kv_t* values, __global float* key_params,
                             __global float* value_params, __global const long* copies, int num_copies,
                             long block_elements, long block_params) {
  const long i = get_global_id(0);
  for (int c = 0; c < num_copies; ++c) {
    const long src = copies[2 * c], dst = copies[2 * c + 1];
    if (i < block_elements) {
      keys[dst * block_elements + i] = keys[src * block_elements + i];
      values[dst * block_elements + i] = values[src * block_elements + i];
    }
    if (i < block_params) {
      key_params[dst * block_params + i] = key_params[src * block_params + i];
      value_params[dst * block_params + i] = value_params[src * block_params + i];
    }
  }
}

// Causal attention of q [rows, num_heads, head_dim] over the cache, written to out (q's shape).
// sequences [num_sequences, 5] int32: (row_begin, num_rows, num_cached, table_begin, window);
// sequence s's rows are q rows [row_begin, row_begin + num_rows), row i at position
// num_cached + i, and its block table is block_tables[table_begin ...]. A row at position p
// sees positions [0, p], or (p - window, p] when window > 0. GQA: head h reads KV head
// h / (num_heads / num_kv_heads). head_dim <= 256. Rows of no sequence are left as they are.
// NDRange (ATTENTION_GROUP_SIZE, num_heads, rows), work-group (ATTENTION_GROUP_SIZE, 1, 1):
// one work-group per (row, head); each work-item scores one position of a chunk and owns the
// output dims d = its id + k * ATTENTION_GROUP_SIZE.
__kernel __attribute__((reqd_work_group_size(ATTENTION_GROUP_SIZE, 1, 1))) void
attention(__global const float* q, __global const kv_t* keys, __global const kv_t* values,
          __global const float* key_params, __global const float* value_params, __global const int* block_tables,
          __global const int* sequences, int num_sequences, int num_heads, int num_kv_heads, int head_dim,
          int block_size, int group_size, int groups, float scale, __global float* out) {
  __local float q_local[MAX_HEAD_DIM];
  __local float acc[MAX_HEAD_DIM];
  __local float probs[ATTENTION_GROUP_SIZE];
  const int lid = get_local_id(0);
  const int h = get_group_id(1);
  const int r = get_group_id(2);

  int s = 0;
  while (s < num_sequences && !(r >= sequences[5 * s] && r < sequences[5 * s] + sequences[5 * s + 1])) ++s;
  if (s == num_sequences) return;  // the whole work-group leaves: no barrier is skipped
  __global const int* seq = sequences + 5 * s;
  __global const int* table = block_tables + seq[3];
  const int end = seq[2] + (r - seq[0]) + 1;
  const int begin = seq[4] > 0 ? max(0, end - seq[4]) : 0;
  const int kv_head = h / (num_heads / num_kv_heads);

  const long q_base = ((long)r * num_heads + h) * head_dim;
  // NOTE: every dims loop runs the same trip count in every work-item (the tail is masked): PoCL
  // 3.1 miscompiled this kernel's loops when their trip count depended on the local id (a crash
  // at head_dim 16 with 64 work-items). The norms in elementwise.cl follow the same rule.
  for (int base = 0; base < head_dim; base += ATTENTION_GROUP_SIZE) {
    const int d = base + lid;
    if (d < head_dim) {
      q_local[d] = q[q_base + d];
      acc[d] = 0.0f;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // The running max and sum of exponentials, the same in every work-item.
  float run_max = -INFINITY, run_sum = 0.0f;
  for (int chunk = begin; chunk < end; chunk += ATTENTION_GROUP_SIZE) {
    const int pos = chunk + lid;
    float score = -INFINITY;
    if (pos < end) {
      const long row = ((long)table[pos / block_size] * num_kv_heads + kv_head) * block_size + pos % block_size;
      float dot = 0.0f;
      for (int d = 0; d < head_dim; ++d)
        dot = fma(q_local[d], load_kv(keys, key_params, row, d, head_dim, group_size, groups), dot);
      score = dot * scale;
    }
    probs[lid] = score;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int count = min(ATTENTION_GROUP_SIZE, end - chunk);
    float chunk_max = run_max;
    for (int t = 0; t < count; ++t) chunk_max = fmax(chunk_max, probs[t]);
    barrier(CLK_LOCAL_MEM_FENCE);
    probs[lid] = exp(score - chunk_max);  // 0 past the end
    barrier(CLK_LOCAL_MEM_FENCE);
    const float alpha = exp(run_max - chunk_max);  // 0 on the first chunk
    float chunk_sum = 0.0f;
    for (int t = 0; t < count; ++t) chunk_sum += probs[t];
    run_sum = run_sum * alpha + chunk_sum;
    run_max = chunk_max;

    // The value rows by their positions in this chunk; each work-item reads only its dims.
    for (int base = 0; base < head_dim; base += ATTENTION_GROUP_SIZE) {
      const int d = base + lid;
      if (d < head_dim) {
        float a = acc[d] * alpha;
        for (int t = 0; t < count; ++t) {
          const int p = chunk + t;
          const long v_row = ((long)table[p / block_size] * num_kv_heads + kv_head) * block_size + p % block_size;
          a = fma(probs[t], load_kv(values, value_params, v_row, d, head_dim, group_size, groups), a);
        }
        acc[d] = a;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // probs is rewritten by the next chunk
  }
  for (int base = 0; base < head_dim; base += ATTENTION_GROUP_SIZE) {
    const int d = base + lid;
    if (d < head_dim) out[q_base + d] = acc[d] / run_sum;
  }
}
