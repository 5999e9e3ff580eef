// The canonical, device-independent layouts of weight matrices in model.bin, and the scalar
// reference quantisation (round to nearest, NNCF's conventions) and dequantisation. The IR owns
// them: the export writes these bytes, kernels read them (to repack for a device, and as the
// oracle they are tested against). Any change here is a format_version change.
//
// A matrix is [out, in] (PyTorch Linear), rows contiguous. Per scheme, a stored "code" means:
//   f32, f16, bf16  one value per element (no codes, no scales)
//   int8_sym        i8  code -128..127           w = code * scale
//   int8_asym       u8  code 0..255, zp u8       w = (code - zp) * scale
//   int4_sym        i4  code -8..7 (two's compl.) w = code * scale
//   int4_asym       u4  code 0..15, zp u4        w = (code - zp) * scale
//   nf4             u4  index 0..15              w = kNf4Levels[code] * scale
// 4-bit codes pack two per byte over the flat index i = row * in + col: byte i / 2, even i in the
// low nibble (so with an odd `in` a row may start mid-byte). Scales are f16 [out, num_groups],
// num_groups = ceil(in / group_size), group g covering columns [g * gs, min((g + 1) * gs, in));
// per-channel quantisation is group_size == in. Zero points are [out, num_groups] packed like the
// codes (u8, or u4 two per byte over the flat index row * num_groups + g).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kiln {

enum class WeightScheme : std::uint8_t { kF32, kF16, kBf16, kInt8Sym, kInt8Asym, kInt4Sym, kInt4Asym, kNf4 };

inline constexpr std::array<WeightScheme, 8> kAllWeightSchemes = {
    WeightScheme::kF32,      WeightScheme::kF16,     WeightScheme::kBf16,     WeightScheme::kInt8Sym,
    WeightScheme::kInt8Asym, WeightScheme::kInt4Sym, WeightScheme::kInt4Asym, WeightScheme::kNf4};

// "f32", "f16", "bf16", "int8_sym", "int8_asym", "int4_sym", "int4_asym", "nf4".
std::string_view weight_scheme_name(WeightScheme scheme);

// Parses a name above; anything else is a kiln::Error listing the accepted names.
WeightScheme parse_weight_scheme(std::string_view name);

// optimum-cli's --weight-format names a scheme family: fp32, fp16, bf16, int8, int4, nf4. Without
// --sym, int8 and int4 are the asymmetric schemes, which is what parse_optimum_weight_format
// returns; with_sym gives the symmetric twin. nullopt for any other name.
std::optional<WeightScheme> parse_optimum_weight_format(std::string_view name);
// "int4" for int4_sym and int4_asym, "int8" likewise, "fp32", "fp16", "bf16", "nf4".
std::string_view optimum_weight_format_name(WeightScheme scheme);
// int8_asym -> int8_sym, int4_asym -> int4_sym; every other scheme is returned unchanged.
WeightScheme with_sym(WeightScheme scheme);

// f32, f16, bf16: stored as values, no scales.
constexpr bool is_float_scheme(WeightScheme scheme) {
  return scheme == WeightScheme::kF32 || scheme == WeightScheme::kF16 || scheme == WeightScheme::kBf16;
}
constexpr bool has_zero_points(WeightScheme scheme) {
  return scheme == WeightScheme::kInt8Asym || scheme == WeightScheme::kInt4Asym;
}
constexpr bool is_4bit_scheme(WeightScheme scheme) {
  return scheme == WeightScheme::kInt4Sym || scheme == WeightScheme::kInt4Asym || scheme == WeightScheme::kNf4;
}
// int4 / int8, sym or asym: the schemes integer dot products (kInt8 activations) apply to.
constexpr bool is_integer_scheme(WeightScheme scheme) {
  return !is_float_scheme(scheme) && scheme != WeightScheme::kNf4;
}

// The smallest and largest code of a quantised scheme (int4_sym: -8, 7; nf4: 0, 15).
int min_code(WeightScheme scheme);
int max_code(WeightScheme scheme);

// The 16 NF4 levels (QLoRA's normal-float quantiles), exactly as NNCF and OpenVINO's nf4 use them.
extern const std::array<float, 16> kNf4Levels;

std::size_t num_groups(std::size_t in, std::size_t group_size);

// Bytes that `count` codes (or values, for float schemes) occupy.
std::size_t code_bytes(WeightScheme scheme, std::size_t count);
std::size_t weight_data_bytes(WeightScheme scheme, std::size_t out, std::size_t in);
// 0 for float schemes.
std::size_t scale_bytes(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size);
// 0 unless the scheme has zero points.
std::size_t zero_point_bytes(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size);

// 4-bit access over a flat index: even index in the low nibble.
inline unsigned read_nibble(const std::uint8_t* bytes, std::size_t index) {
  return (bytes[index / 2] >> ((index & 1) * 4)) & 0xFu;
}
inline void write_nibble(std::uint8_t* bytes, std::size_t index, unsigned value) {
  const unsigned shift = (index & 1) * 4;
  bytes[index / 2] = static_cast<std::uint8_t>((bytes[index / 2] & ~(0xFu << shift)) | ((value & 0xFu) << shift));
}

// A non-owning view of a canonical matrix (from a mapped model.bin or a QuantizedMatrix).
struct WeightView {
  WeightScheme scheme = WeightScheme::kF32;
  std::size_t out = 0;
  std::size_t in = 0;
  std::size_t group_size = 0;                 // == in for float schemes and per-channel
  const std::uint8_t* data = nullptr;         // codes or values, weight_data_bytes()
  const std::uint16_t* scales = nullptr;      // f16 [out, num_groups], quantised schemes only
  const std::uint8_t* zero_points = nullptr;  // [out, num_groups] packed, asym schemes only

  std::size_t groups() const { return num_groups(in, group_size); }
};

// Checks shape, group size and that the sections a scheme needs are present; `name` (the tensor)
// goes into the error message.
void validate_weight_view(const WeightView& view, std::string_view name);

// One group's quantisation parameters. `scale` is always exactly representable in f16 (the
// stored precision), so quantising with it and dequantising from the stored f16 agree.
struct QuantParams {
  float scale = 1.0f;
  int zero_point = 0;  // asym schemes only
};

// Round-to-nearest parameters for one group of weights, following NNCF
// (weight_lowering.py: calculate_integer_quantization_params / calculate_float_quantization_params):
//   sym  (b bits): scale = (|min| >= max ? |min| : -max) / 2^(b-1); codes clip to -2^(b-1)..2^(b-1)-1.
//                  The scale is negative when the positive extreme is larger, so that extreme lands
//                  on -2^(b-1) exactly and the full signed range is used (int4: -8..7, int8: -128..127).
//   asym (b bits): scale = (max - min) / (2^b - 1); zp = clip(-round(min / scale), 0, 2^b - 1).
//                  NOTE: one deliberate difference: we widen [min, max] to include 0 first.
//                  Where the group spans 0 (nearly every real group) this equals NNCF; where it
//                  does not, NNCF's zp clips to 0 or 2^b - 1 and the far values clip (a constant
//                  group of c > 0 dequantises to ~0), while ours stay within scale / 2.
//   nf4:           scale = max |w|; code = the nearest level (ties to the lower level).
//   All: |scale| < FLT_EPSILON becomes FLT_EPSILON (all-zero groups), then the scale is rounded
//   to f16. NOTE: NNCF quantises with the f32 scale and stores it as f16; we quantise with the
//   rounded scale so the stored (code, scale) pair reproduces each weight within |scale| / 2.
// Throws kiln::Error if a scale overflows f16 or a weight is not finite.
QuantParams rtn_params(WeightScheme scheme, std::span<const float> group);

// The code RTN assigns to `w` (round half to even, then clip to the scheme's range).
int quantize_value(WeightScheme scheme, float w, QuantParams params);
float dequantize_value(WeightScheme scheme, int code, QuantParams params);

// An owning canonical matrix, laid out exactly as model.bin stores it.
class QuantizedMatrix {
 public:
  // Zero-filled sections for the scheme. Throws on an invalid shape or group size.
  QuantizedMatrix(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size);

  WeightView view() const;
  WeightScheme scheme() const { return scheme_; }
  std::size_t out() const { return out_; }
  std::size_t in() const { return in_; }
  std::size_t group_size() const { return group_size_; }

  std::vector<std::uint8_t>& data() { return data_; }                // weight_data_bytes
  std::vector<std::uint16_t>& scales() { return scales_; }           // [out, num_groups] f16
  std::vector<std::uint8_t>& zero_points() { return zero_points_; }  // packed like the codes
  const std::vector<std::uint8_t>& data() const { return data_; }
  const std::vector<std::uint16_t>& scales() const { return scales_; }
  const std::vector<std::uint8_t>& zero_points() const { return zero_points_; }

  // For quantisation algorithms that choose codes and parameters themselves (GPTQ, AWQ).
  void set_code(std::size_t row, std::size_t col, int code);
  void set_params(std::size_t row, std::size_t group, QuantParams params);

 private:
  WeightScheme scheme_;
  std::size_t out_, in_, group_size_;
  std::vector<std::uint8_t> data_;
  std::vector<std::uint16_t> scales_;
  std::vector<std::uint8_t> zero_points_;
};

// Round-to-nearest quantisation (or conversion, for float schemes) of an f32 [out, in] matrix.
// group_size is ignored for float schemes; for quantised ones 1 <= group_size <= in
// (in = per-channel). `name` is the tensor named in errors.
QuantizedMatrix quantize_weights(std::span<const float> weights, std::size_t out, std::size_t in, WeightScheme scheme,
                                 std::size_t group_size, std::string_view name);

// The stored code at (row, col), sign-extended for the sym schemes. Quantised schemes only.
int read_code(const WeightView& view, std::size_t row, std::size_t col);
QuantParams read_params(const WeightView& view, std::size_t row, std::size_t group);

// dst[in] = row `row` of the matrix in f32.
void dequantize_row(const WeightView& view, std::size_t row, std::span<float> dst);
// [out, in] f32.
std::vector<float> dequantize_weights(const WeightView& view);

}  // namespace kiln
