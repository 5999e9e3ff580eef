// The element-wise parts of a transformer layer on f32 activations [rows, width]: RMS norm (with
// the residual add fused in), add, silu_mul, rotate_half RoPE and a row gather. Twins of
// reference/elementwise; sums are accumulated in float, so results match the double reference to
// ~1e-6 relative.

// The norms' work-group size: a power of two, so the sum of squares reduces as a tree.
#ifndef NORM_GROUP_SIZE
#define NORM_GROUP_SIZE 128
#endif

// The sum of x^2 over this work-group's row: each work-item passes its partial sum; all get the total.
float group_sum(float partial, __local float* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = partial;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = NORM_GROUP_SIZE / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

// out [rows, dim] = x * gain / sqrt(mean(x^2) + eps); out may alias x (each work-item writes
// only the elements it read). NDRange (NORM_GROUP_SIZE * rows), work-group (NORM_GROUP_SIZE).
__kernel __attribute__((reqd_work_group_size(NORM_GROUP_SIZE, 1, 1))) void
rms_norm(__global const float* x, __global const float* gain, float eps, int dim, __global float* out) {
  __local float scratch[NORM_GROUP_SIZE];
  const int lid = get_local_id(0);
  const long base = (long)get_group_id(0) * dim;
  float sum_sq = 0.0f;
  for (int first = 0; first < dim; first += NORM_GROUP_SIZE) {  // one trip count for all (paged_attention.cl)
    const int i = first + lid;
    if (i < dim) sum_sq += x[base + i] * x[base + i];
  }
  const float inv_rms = 1.0f / sqrt(group_sum(sum_sq, scratch) / dim + eps);
  for (int i = lid; i < dim; i += NORM_GROUP_SIZE) out[base + i] = x[base + i] * inv_rms * gain[i];
}

// residual [rows, dim] += x; out = rms_norm(residual). out may alias x or residual. Launched
// as rms_norm.
__kernel __attribute__((reqd_work_group_size(NORM_GROUP_SIZE, 1, 1))) void
add_rms_norm(__global float* residual, __global const float* x, __global const float* gain, float eps, int dim,
             __global float* out) {
  __local float scratch[NORM_GROUP_SIZE];
  const int lid = get_local_id(0);
  const long base = (long)get_group_id(0) * dim;
  float sum_sq = 0.0f;
  for (int first = 0; first < dim; first += NORM_GROUP_SIZE) {
    const int i = first + lid;
    if (i < dim) {
      const float r = residual[base + i] + x[base + i];
      residual[base + i] = r;
      sum_sq += r * r;
    }
  }
  const float inv_rms = 1.0f / sqrt(group_sum(sum_sq, scratch) / dim + eps);
  for (int i = lid; i < dim; i += NORM_GROUP_SIZE) out[base + i] = residual[base + i] * inv_rms * gain[i];
}

// acc [count] += x. NDRange (>= count), any work-group.
__kernel void add(__global float* acc, __global const float* x, long count) {
  const long i = get_global_id(0);
  if (i < count) acc[i] += x[i];
}

// out [count] = silu(gate) * up, silu(g) = g / (1 + e^-g); out may alias gate or up.
// NDRange (>= count), any work-group.
__kernel void silu_mul(__global const float* gate, __global const float* up, long count, __global float* out) {
  const long i = get_global_id(0);
  if (i < count) {
    const float g = gate[i];
    out[i] = g / (1.0f + exp(-g)) * up[i];
  }
}

// Rotates q [rows, num_heads, head_dim] and k [rows, num_kv_heads, head_dim] in place over the
// first rotary_dim dims of each head (HF rotate_half: i pairs with i + rotary_dim / 2); cos/sin
// [rows, rotary_dim / 2]. NDRange (rotary_dim / 2, num_heads + num_kv_heads, rows), any
// work-group: one work-item per rotated pair.
__kernel void rope(__global float* q, __global float* k, int num_heads, int num_kv_heads, int head_dim, int rotary_dim,
                   __global const float* cos_table, __global const float* sin_table) {
  const int i = get_global_id(0);
  const int h = get_global_id(1);
  const long r = get_global_id(2);
  const int half_dim = rotary_dim / 2;
  __global float* v =
      h < num_heads ? q + (r * num_heads + h) * head_dim : k + (r * num_kv_heads + (h - num_heads)) * head_dim;
  const float c = cos_table[r * half_dim + i];
  const float s = sin_table[r * half_dim + i];
  const float a = v[i];
  const float b = v[i + half_dim];
  v[i] = a * c - b * s;
  v[i + half_dim] = b * c + a * s;
}

// dst row r [width] = src row rows[r] (int64); src and dst do not overlap. NDRange (width, number
// of rows), any work-group.
__kernel void gather_rows(__global const float* src, __global const long* rows, int width, __global float* dst) {
  const int i = get_global_id(0);
  const long r = get_global_id(1);
  dst[r * width + i] = src[rows[r] * width + i];
}
