#include "ir/gguf_dequantize.hpp"

#include <cstring>

#include "util/error.hpp"
#include "util/half.hpp"

namespace kiln::ir {
namespace {

float f16_at(const std::uint8_t* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// 32-element blocks: scale d (and minimum m), then 4-bit (Q4), 4+1-bit (Q5) or 8-bit quants; the
// low nibbles are the block's first 16 elements, the high nibbles its last 16.
void q4_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const std::uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = float((qs[j] & 0x0F) - 8) * d;
    y[j + 16] = float((qs[j] >> 4) - 8) * d;
  }
}

void q4_1(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), m = f16_at(b + 2);
  const std::uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = float(qs[j] & 0x0F) * d + m;
    y[j + 16] = float(qs[j] >> 4) * d + m;
  }
}

// Q5: the fifth bit of element j is bit j of the 32-bit qh.
void q5(const std::uint8_t* b, float* y, bool with_min) {
  const float d = f16_at(b), m = with_min ? f16_at(b + 2) : 0.0f;
  const std::uint8_t* p = b + (with_min ? 4 : 2);
  std::uint32_t qh;
  std::memcpy(&qh, p, 4);
  const std::uint8_t* qs = p + 4;
  const int offset = with_min ? 0 : 16;
  for (int j = 0; j < 16; ++j) {
    const int x0 = (qs[j] & 0x0F) | (((qh >> j) & 1) << 4);
    const int x1 = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
    y[j] = float(x0 - offset) * d + m;
    y[j + 16] = float(x1 - offset) * d + m;
  }
}

void q8_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  for (int j = 0; j < 32; ++j) y[j] = float(static_cast<std::int8_t>(b[2 + j])) * d;
}

// K-quants: 256-element super-blocks of 16 or 8 sub-blocks, each with its own scale (and min),
// themselves quantised against the super-block's d (and dmin).
void q2_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* scales = b;
  const std::uint8_t* q = b + 16;
  const float d = f16_at(b + 80), dmin = f16_at(b + 82);
  int is = 0;
  for (int n = 0; n < 256; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const std::uint8_t sc = scales[is++];
        const float dl = d * float(sc & 0x0F), ml = dmin * float(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
      }
    }
    q += 32;
  }
}

void q3_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* hmask = b;
  const std::uint8_t* q = b + 32;
  const std::uint8_t* packed = b + 96;  // 16 six-bit scales in 12 bytes
  const float d = f16_at(b + 108);
  std::int8_t scales[16];
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? packed[i] & 0x0F : packed[i - 8] >> 4;
    const int high = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
    scales[i] = static_cast<std::int8_t>((low | (high << 4)) - 32);
  }
  int is = 0;
  std::uint8_t m = 1;
  for (int n = 0; n < 256; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const float dl = d * float(scales[is++]);
        for (int l = 0; l < 16; ++l) {
          const int k = l + 16 * half;
          *y++ = dl * float(((q[k] >> shift) & 3) - ((hmask[k] & m) ? 0 : 4));
        }
      }
      m <<= 1;
    }
    q += 32;
  }
}

// The 6-bit scale and min of sub-block j of Q4_K / Q5_K, packed in 12 bytes.
void scale_min_k4(int j, const std::uint8_t* q, std::uint8_t& sc, std::uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q4_K and Q5_K: 8 sub-blocks of 32; Q5_K adds a fifth bit per element from qh.
void q45_k(const std::uint8_t* b, float* y, bool five) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* qh = b + 16;
  const std::uint8_t* ql = b + (five ? 48 : 16);
  std::uint8_t u1 = 1, u2 = 2;
  for (int j = 0, is = 0; j < 256; j += 64, is += 2) {
    std::uint8_t sc, m;
    scale_min_k4(is, scales, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    scale_min_k4(is + 1, scales, sc, m);
    const float d2 = d * float(sc), m2 = dmin * float(m);
    for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0x0F) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
    u1 <<= 2;
    u2 <<= 2;
  }
}

void q6_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = f16_at(b + 208);
  for (int n = 0; n < 256; n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

using BlockDecoder = void (*)(const std::uint8_t*, float*);

// How one block of `type` decodes; null for ggml's intermediate formats.
BlockDecoder decoder(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return [](const std::uint8_t* b, float* y) { std::memcpy(y, b, 4); };
    case GgmlType::kF16: return [](const std::uint8_t* b, float* y) { *y = f16_at(b); };
    case GgmlType::kBF16:
      return [](const std::uint8_t* b, float* y) {
        std::uint16_t h;
        std::memcpy(&h, b, 2);
        *y = bf16_to_f32(h);
      };
    case GgmlType::kQ4_0: return q4_0;
    case GgmlType::kQ4_1: return q4_1;
    case GgmlType::kQ5_0: return [](const std::uint8_t* b, float* y) { q5(b, y, false); };
    case GgmlType::kQ5_1: return [](const std::uint8_t* b, float* y) { q5(b, y, true); };
    case GgmlType::kQ8_0: return q8_0;
    case GgmlType::kQ2_K: return q2_k;
    case GgmlType::kQ3_K: return q3_k;
    case GgmlType::kQ4_K: return [](const std::uint8_t* b, float* y) { q45_k(b, y, false); };
    case GgmlType::kQ5_K: return [](const std::uint8_t* b, float* y) { q45_k(b, y, true); };
    case GgmlType::kQ6_K: return q6_k;
    case GgmlType::kQ8_1:
    case GgmlType::kQ8_K: break;
  }
  return nullptr;
}

}  // namespace

void dequantize_gguf(GgmlType type, std::span<const std::uint8_t> bytes, std::span<float> out) {
  const BlockDecoder decode = decoder(type);
  const std::optional<GgmlBlock> block = ggml_block(static_cast<std::uint32_t>(type));
  const auto name = ggml_type_name(static_cast<std::uint32_t>(type)).value_or("?");
  if (!decode || !block) fail("GGUF {} data is one of ggml's intermediate formats; kiln does not decode it", name);
  if (out.size() % block->elements != 0 || bytes.size() != out.size() / block->elements * block->bytes) {
    fail("GGUF {}: {} bytes do not hold {} elements", name, bytes.size(), out.size());
  }
  for (std::size_t i = 0, n = out.size() / block->elements; i < n; ++i) {
    decode(bytes.data() + i * block->bytes, out.data() + i * block->elements);
  }
}

}  // namespace kiln::ir
