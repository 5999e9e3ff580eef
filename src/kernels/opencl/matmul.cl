// Matmul and embedding gather on the canonical weight layout (ir/weight_format.hpp), read as the
// bytes model.bin stores, f32 activations, f32 accumulation. Twin: reference/matmul.hpp.
//
// Build options (matmul_build_options): exactly one -DSCHEME_<NAME> (F32, F16, BF16, INT8_SYM,
// INT8_ASYM, INT4_SYM, INT4_ASYM, NF4; NF4 with -DNF4_LEVELS), and optionally -DWG_SIZE=<power of two, at least 8> (default 64), the matmul's
// work-group size, which its launch must use.
//
// Weight buffers, for a matrix [rows, in] in groups of group_size columns:
//   w_data         values (f32, f16, bf16) or codes, 4-bit ones two per byte over row * in + col
//   w_scales       f16 [rows, num_groups]; quantised schemes only, else may be NULL
//   w_zero_points  [rows, num_groups], u8 or packed u4 like the codes; asym schemes only
// Dequantisation is the same single f32 multiply as dequantize_value, so gathered rows equal
// dequantize_row exactly.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

// Activation rows one pass of the matmul accumulates: each dequantised weight is reused from a
// register for this many rows, so the weight row is read ceil(n / MATMUL_ROWS) times.
#define MATMUL_ROWS 8

#ifdef SCHEME_NF4
// QLoRA's normal-float levels: kNf4Levels itself, passed as -DNF4_LEVELS (build_options.cpp).
__constant float kNf4Levels[16] = {NF4_LEVELS};
#endif

// 4-bit value at a flat index: even index in the low nibble.
inline uint read_nibble(__global const uchar* bytes, size_t index) {
  return (bytes[index >> 1] >> ((index & 1) * 4)) & 0xFu;
}

// dequant(W)[row, k].
inline float weight_at(__global const uchar* w_data, __global const half* w_scales, __global const uchar* w_zero_points,
                       uint in, uint group_size, uint row, uint k) {
  const size_t index = (size_t)row * in + k;
#if defined(SCHEME_F32)
  return ((__global const float*)w_data)[index];
#elif defined(SCHEME_F16)
  return vload_half(index, (__global const half*)w_data);
#elif defined(SCHEME_BF16)
  return as_float((uint)((__global const ushort*)w_data)[index] << 16);
#else
  const size_t group = (size_t)row * ((in + group_size - 1) / group_size) + k / group_size;
  const float scale = vload_half(group, w_scales);
#if defined(SCHEME_INT8_SYM)
  return (float)((__global const char*)w_data)[index] * scale;
#elif defined(SCHEME_INT8_ASYM)
  return (float)((int)w_data[index] - (int)w_zero_points[group]) * scale;
#elif defined(SCHEME_INT4_SYM)
  // Sign-extend the two's-complement nibble: 8..15 -> -8..-1.
  return (float)((int)(read_nibble(w_data, index) ^ 8u) - 8) * scale;
#elif defined(SCHEME_INT4_ASYM)
  return (float)((int)read_nibble(w_data, index) - (int)read_nibble(w_zero_points, group)) * scale;
#elif defined(SCHEME_NF4)
  return kNf4Levels[read_nibble(w_data, index)] * scale;
#else
#error "build with one of -DSCHEME_F32, _F16, _BF16, _INT8_SYM, _INT8_ASYM, _INT4_SYM, _INT4_ASYM, _NF4"
#endif
#endif
}

// bf16 weights multiply bf16 activations (the CPU kernels' vdpbf16ps semantics): round x to
// nearest even bf16, NaN kept.
inline float activation(float x) {
#ifdef SCHEME_BF16
  uint u = as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;
  u += 0x7fffu + ((u >> 16) & 1u);
  return as_float(u & 0xffff0000u);
#else
  return x;
#endif
}

// y[i, r] = Σ_k dequant(W)[r, k] · x[i, k] (+ bias[r]) for i in [0, n).
//   w_*   [out, in] as above      x     f32 [n, in]
//   bias  f32 [out], or NULL      y     f32 [n, out]
// NDRange: global out * WG_SIZE, local WG_SIZE; work-group r computes column r of y. Each
// work-item sums columns k = lid, lid + WG_SIZE, ... for MATMUL_ROWS activation rows at a time,
// then a local-memory tree adds the work-items' sums (portable: no subgroup extensions).
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void matmul(
    __global const uchar* w_data, __global const half* w_scales, __global const uchar* w_zero_points, uint out, uint in,
    uint group_size, __global const float* x, uint n, __global const float* bias, __global float* y) {
  __local float partial[MATMUL_ROWS][WG_SIZE];
  const uint r = get_group_id(0);
  const uint lid = get_local_id(0);
  const float b = bias ? bias[r] : 0.0f;

  for (uint i0 = 0; i0 < n; i0 += MATMUL_ROWS) {
    const uint rows = min((uint)MATMUL_ROWS, n - i0);
    __global const float* xi = x + (size_t)i0 * in;
    float acc[MATMUL_ROWS];
    for (uint j = 0; j < MATMUL_ROWS; ++j) acc[j] = 0.0f;
    for (uint k = lid; k < in; k += WG_SIZE) {
      const float w = weight_at(w_data, w_scales, w_zero_points, in, group_size, r, k);
      for (uint j = 0; j < MATMUL_ROWS; ++j) {
        if (j < rows) acc[j] += w * activation(xi[(size_t)j * in + k]);
      }
    }
    for (uint j = 0; j < MATMUL_ROWS; ++j) partial[j][lid] = acc[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = WG_SIZE / 2; stride > 0; stride /= 2) {
      if (lid < stride) {
        for (uint j = 0; j < MATMUL_ROWS; ++j) partial[j][lid] += partial[j][lid + stride];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < rows) y[(size_t)(i0 + lid) * out + r] = partial[lid][0] + b;
    // The next pass overwrites partial[][]: wait until its row's sum is read.
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// out[t, :] = dequant(table)[ids[t], :] for t in [0, num_tokens).
//   w_*  the table [rows, in] as above   ids  int32 [num_tokens], each in [0, rows) (not checked)
//   out  f32 [num_tokens, in]
// NDRange: global (in, num_tokens), any local size; one work-item per output element.
__kernel void embedding_gather(__global const uchar* w_data, __global const half* w_scales,
                               __global const uchar* w_zero_points, uint in, uint group_size, __global const int* ids,
                               __global float* out) {
  const uint col = get_global_id(0);
  const uint t = get_global_id(1);
  out[(size_t)t * in + col] = weight_at(w_data, w_scales, w_zero_points, in, group_size, (uint)ids[t], col);
}
