// Reference quantisation and (de)coding of the canonical weight layouts; see weight_format.hpp
// for the layout and NNCF's conventions this follows.
#include "ir/weight_format.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "util/error.hpp"
#include "util/half.hpp"

namespace kiln {

const std::array<float, 16> kNf4Levels = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

namespace {

// Midpoints between adjacent levels, computed in f32 as NNCF's CENTER_OF_NF4_QUANTILES is.
std::array<float, 15> nf4_centers() {
  std::array<float, 15> centers{};
  for (std::size_t i = 0; i < centers.size(); ++i) {
    centers[i] = (kNf4Levels[i] + kNf4Levels[i + 1]) / 2.0f;
  }
  return centers;
}

int bits_of(WeightScheme scheme) { return is_4bit_scheme(scheme) ? 4 : 8; }

// Where a group lives, for error messages; formatted only when something is wrong.
struct GroupPlace {
  std::string_view tensor;
  std::size_t row = 0;
  std::size_t group = 0;
};

std::string describe(const GroupPlace& place) {
  return fmt::format("tensor '{}' row {} group {}", place.tensor, place.row, place.group);
}

float round_scale_to_f16(float scale, const GroupPlace& place) {
  const float rounded = f16_to_f32(f32_to_f16(scale));
  if (!std::isfinite(rounded)) {
    fail("{}: quantisation scale {} exceeds the f16 range (largest finite 65504)", describe(place), scale);
  }
  return rounded;
}

struct GroupRange {
  float lo, hi;
  bool finite;
};

// The least and greatest weight of a group and whether all are finite, 4 lanes at a time.
// NOTE: vector extensions because GCC does not vectorise a float min/max reduction without
// -ffinite-math-only, and AWQ's search finds the range of every group 20 times (3% of a kiln-tiny
// export). Lanes merge in another order than a scalar loop, which can only change the sign of
// a zero bound; no scale or zero point below depends on that sign.
GroupRange group_range(std::span<const float> group) {
  using F32x4 = float __attribute__((vector_size(16)));
  using I32x4 = std::int32_t __attribute__((vector_size(16)));
  F32x4 lo4 = F32x4{} + group[0], hi4 = lo4;
  I32x4 finite4 = I32x4{} - 1;  // all lanes true
  std::size_t i = 0;
  for (; i + 4 <= group.size(); i += 4) {
    F32x4 w;
    std::memcpy(&w, group.data() + i, sizeof w);
    lo4 = w < lo4 ? w : lo4;
    hi4 = hi4 < w ? w : hi4;
    const F32x4 magnitude = reinterpret_cast<F32x4>(reinterpret_cast<I32x4>(w) & 0x7FFFFFFF);
    finite4 &= magnitude <= FLT_MAX;
  }
  GroupRange r{lo4[0], hi4[0], true};
  for (int l = 0; l < 4; ++l) {
    r.lo = std::min(r.lo, lo4[l]);
    r.hi = std::max(r.hi, hi4[l]);
    r.finite = r.finite && finite4[l] != 0;
  }
  for (; i < group.size(); ++i) {
    r.lo = std::min(r.lo, group[i]);
    r.hi = std::max(r.hi, group[i]);
    r.finite = r.finite && std::isfinite(group[i]);
  }
  return r;
}

QuantParams params_for(WeightScheme scheme, std::span<const float> group, const GroupPlace& place) {
  const GroupRange range = group_range(group);
  if (!range.finite) {
    for (float w : group) {
      if (!std::isfinite(w)) fail("{}: weight {} is not finite", describe(place), w);
    }
  }
  float lo = range.lo, hi = range.hi;
  QuantParams p;
  float scale = 0.0f;
  const int bits = bits_of(scheme);
  switch (scheme) {
    case WeightScheme::kInt8Sym:
    case WeightScheme::kInt4Sym:
      scale = (std::fabs(lo) >= hi ? std::fabs(lo) : -hi) / static_cast<float>(1 << (bits - 1));
      break;
    case WeightScheme::kInt8Asym:
    case WeightScheme::kInt4Asym:
      lo = std::min(lo, 0.0f);  // see weight_format.hpp: the range always spans 0
      hi = std::max(hi, 0.0f);
      scale = (hi - lo) / static_cast<float>((1 << bits) - 1);
      break;
    case WeightScheme::kNf4: scale = std::max(std::fabs(lo), std::fabs(hi)); break;
    default:
      fail(ErrorKind::kInternal, "{}: scheme {} has no quantisation parameters", describe(place),
           weight_scheme_name(scheme));
  }
  if (std::fabs(scale) < FLT_EPSILON) scale = FLT_EPSILON;
  p.scale = round_scale_to_f16(scale, place);
  if (has_zero_points(scheme)) {
    const float zp = -std::nearbyint(lo / p.scale);
    p.zero_point = static_cast<int>(std::clamp(zp, 0.0f, static_cast<float>(max_code(scheme))));
  }
  return p;
}

void check_shape(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size, std::string_view name) {
  if (out == 0 || in == 0) fail("tensor '{}': empty weight matrix [{}, {}]", name, out, in);
  if (!is_float_scheme(scheme) && (group_size == 0 || group_size > in)) {
    fail(
        "tensor '{}': group size {} is out of range for input width {} (accepted: 1..{}, {} = "
        "per-channel)",
        name, group_size, in, in, in);
  }
}

}  // namespace

std::string_view weight_scheme_name(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kF32: return "f32";
    case WeightScheme::kF16: return "f16";
    case WeightScheme::kBf16: return "bf16";
    case WeightScheme::kInt8Sym: return "int8_sym";
    case WeightScheme::kInt8Asym: return "int8_asym";
    case WeightScheme::kInt4Sym: return "int4_sym";
    case WeightScheme::kInt4Asym: return "int4_asym";
    case WeightScheme::kNf4: return "nf4";
  }
  return "unknown";
}

WeightScheme parse_weight_scheme(std::string_view name) {
  for (WeightScheme s : kAllWeightSchemes) {
    if (weight_scheme_name(s) == name) return s;
  }
  fail(
      "unknown weight scheme '{}' (accepted: f32, f16, bf16, int8_sym, int8_asym, int4_sym, "
      "int4_asym, nf4)",
      name);
}

std::optional<WeightScheme> parse_optimum_weight_format(std::string_view name) {
  for (WeightScheme s : {WeightScheme::kF32, WeightScheme::kF16, WeightScheme::kBf16, WeightScheme::kInt8Asym,
                         WeightScheme::kInt4Asym, WeightScheme::kNf4}) {
    if (optimum_weight_format_name(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view optimum_weight_format_name(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kF32: return "fp32";
    case WeightScheme::kF16: return "fp16";
    case WeightScheme::kBf16: return "bf16";
    case WeightScheme::kInt8Sym:
    case WeightScheme::kInt8Asym: return "int8";
    case WeightScheme::kInt4Sym:
    case WeightScheme::kInt4Asym: return "int4";
    case WeightScheme::kNf4: return "nf4";
  }
  return "?";
}

WeightScheme with_sym(WeightScheme scheme) {
  if (scheme == WeightScheme::kInt8Asym) return WeightScheme::kInt8Sym;
  if (scheme == WeightScheme::kInt4Asym) return WeightScheme::kInt4Sym;
  return scheme;
}

int min_code(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kInt8Sym: return -128;
    case WeightScheme::kInt4Sym: return -8;
    default: return 0;
  }
}

int max_code(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kInt8Sym: return 127;
    case WeightScheme::kInt8Asym: return 255;
    case WeightScheme::kInt4Sym: return 7;
    default: return 15;
  }
}

std::size_t num_groups(std::size_t in, std::size_t group_size) {
  return group_size == 0 ? 0 : (in + group_size - 1) / group_size;
}

std::size_t code_bytes(WeightScheme scheme, std::size_t count) {
  switch (scheme) {
    case WeightScheme::kF32: return count * 4;
    case WeightScheme::kF16:
    case WeightScheme::kBf16: return count * 2;
    case WeightScheme::kInt8Sym:
    case WeightScheme::kInt8Asym: return count;
    default: return (count + 1) / 2;
  }
}

std::size_t weight_data_bytes(WeightScheme scheme, std::size_t out, std::size_t in) {
  return code_bytes(scheme, out * in);
}

std::size_t scale_bytes(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size) {
  return is_float_scheme(scheme) ? 0 : out * num_groups(in, group_size) * sizeof(std::uint16_t);
}

std::size_t zero_point_bytes(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size) {
  return has_zero_points(scheme) ? code_bytes(scheme, out * num_groups(in, group_size)) : 0;
}

void validate_weight_view(const WeightView& view, std::string_view name) {
  check_shape(view.scheme, view.out, view.in, view.group_size, name);
  if (view.data == nullptr) fail("tensor '{}': weight data is missing", name);
  if (!is_float_scheme(view.scheme) && view.scales == nullptr) {
    fail("tensor '{}': scheme {} needs a scale tensor", name, weight_scheme_name(view.scheme));
  }
  if (has_zero_points(view.scheme) && view.zero_points == nullptr) {
    fail("tensor '{}': scheme {} needs a zero-point tensor", name, weight_scheme_name(view.scheme));
  }
}

QuantParams rtn_params(WeightScheme scheme, std::span<const float> group) {
  if (group.empty()) fail(ErrorKind::kInternal, "rtn_params: empty group");
  return params_for(scheme, group, GroupPlace{"(group)", 0, 0});
}

int quantize_value(WeightScheme scheme, float w, QuantParams params) {
  if (scheme == WeightScheme::kNf4) {
    static const std::array<float, 15> centers = nf4_centers();
    const float normalized = w / params.scale;
    // searchsorted(centers, v, side='left'): the number of centers strictly below v.
    return static_cast<int>(std::lower_bound(centers.begin(), centers.end(), normalized) - centers.begin());
  }
  const float q = std::nearbyint(w / params.scale + static_cast<float>(params.zero_point));
  return static_cast<int>(std::clamp(q, static_cast<float>(min_code(scheme)), static_cast<float>(max_code(scheme))));
}

float dequantize_value(WeightScheme scheme, int code, QuantParams params) {
  if (scheme == WeightScheme::kNf4) return kNf4Levels[static_cast<std::size_t>(code)] * params.scale;
  return static_cast<float>(code - params.zero_point) * params.scale;
}

QuantizedMatrix::QuantizedMatrix(WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size)
    : scheme_(scheme), out_(out), in_(in), group_size_(is_float_scheme(scheme) ? in : group_size) {
  check_shape(scheme, out, in, group_size_, "(new matrix)");
  data_.assign(weight_data_bytes(scheme, out, in), 0);
  scales_.assign(scale_bytes(scheme, out, in, group_size_) / sizeof(std::uint16_t), 0);
  zero_points_.assign(zero_point_bytes(scheme, out, in, group_size_), 0);
}

WeightView QuantizedMatrix::view() const {
  return WeightView{scheme_,
                    out_,
                    in_,
                    group_size_,
                    data_.data(),
                    scales_.empty() ? nullptr : scales_.data(),
                    zero_points_.empty() ? nullptr : zero_points_.data()};
}

void QuantizedMatrix::set_code(std::size_t row, std::size_t col, int code) {
  KILN_DASSERT(code >= min_code(scheme_) && code <= max_code(scheme_));
  const std::size_t index = row * in_ + col;
  if (is_4bit_scheme(scheme_)) {
    write_nibble(data_.data(), index, static_cast<unsigned>(code));
  } else {
    data_[index] = static_cast<std::uint8_t>(code);
  }
}

void QuantizedMatrix::set_params(std::size_t row, std::size_t group, QuantParams params) {
  const std::size_t index = row * num_groups(in_, group_size_) + group;
  scales_[index] = f32_to_f16(params.scale);
  if (!has_zero_points(scheme_)) return;
  if (is_4bit_scheme(scheme_)) {
    write_nibble(zero_points_.data(), index, static_cast<unsigned>(params.zero_point));
  } else {
    zero_points_[index] = static_cast<std::uint8_t>(params.zero_point);
  }
}

QuantizedMatrix quantize_weights(std::span<const float> weights, std::size_t out, std::size_t in, WeightScheme scheme,
                                 std::size_t group_size, std::string_view name) {
  check_shape(scheme, out, in, group_size, name);
  if (weights.size() != out * in) {
    fail("tensor '{}': {} values given for a [{}, {}] matrix", name, weights.size(), out, in);
  }
  QuantizedMatrix m(scheme, out, in, group_size);
  if (is_float_scheme(scheme)) {
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const float w = weights[i];
      if (!std::isfinite(w)) fail("tensor '{}': weight [{}, {}] is not finite", name, i / in, i % in);
      std::uint16_t bits16 = 0;
      switch (scheme) {
        case WeightScheme::kF32: std::memcpy(m.data().data() + 4 * i, &w, 4); continue;
        case WeightScheme::kF16:
          bits16 = f32_to_f16(w);
          if (!std::isfinite(f16_to_f32(bits16))) {
            fail("tensor '{}': weight [{}, {}] = {} exceeds the f16 range", name, i / in, i % in, w);
          }
          break;
        default: bits16 = f32_to_bf16(w); break;
      }
      std::memcpy(m.data().data() + 2 * i, &bits16, 2);
    }
    return m;
  }
  const std::size_t groups = num_groups(in, group_size);
  for (std::size_t row = 0; row < out; ++row) {
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t begin = g * group_size;
      const std::size_t end = std::min(begin + group_size, in);
      const std::span<const float> group = weights.subspan(row * in + begin, end - begin);
      const QuantParams p = params_for(scheme, group, GroupPlace{name, row, g});
      m.set_params(row, g, p);
      for (std::size_t col = begin; col < end; ++col) {
        m.set_code(row, col, quantize_value(scheme, weights[row * in + col], p));
      }
    }
  }
  return m;
}

int read_code(const WeightView& view, std::size_t row, std::size_t col) {
  const std::size_t index = row * view.in + col;
  switch (view.scheme) {
    case WeightScheme::kInt8Sym: return static_cast<std::int8_t>(view.data[index]);
    case WeightScheme::kInt8Asym: return view.data[index];
    case WeightScheme::kInt4Sym: {
      const int nibble = static_cast<int>(read_nibble(view.data, index));
      return nibble >= 8 ? nibble - 16 : nibble;
    }
    case WeightScheme::kInt4Asym:
    case WeightScheme::kNf4: return static_cast<int>(read_nibble(view.data, index));
    default:
      fail(ErrorKind::kInternal, "read_code: scheme {} stores values, not codes", weight_scheme_name(view.scheme));
  }
}

QuantParams read_params(const WeightView& view, std::size_t row, std::size_t group) {
  const std::size_t index = row * view.groups() + group;
  QuantParams p;
  p.scale = f16_to_f32(view.scales[index]);
  if (view.scheme == WeightScheme::kInt8Asym) p.zero_point = view.zero_points[index];
  if (view.scheme == WeightScheme::kInt4Asym) {
    p.zero_point = static_cast<int>(read_nibble(view.zero_points, index));
  }
  return p;
}

void dequantize_row(const WeightView& view, std::size_t row, std::span<float> dst) {
  KILN_DASSERT(dst.size() == view.in);
  const std::size_t base = row * view.in;
  switch (view.scheme) {
    case WeightScheme::kF32: std::memcpy(dst.data(), view.data + 4 * base, 4 * view.in); return;
    case WeightScheme::kF16:
    case WeightScheme::kBf16:
      for (std::size_t col = 0; col < view.in; ++col) {
        std::uint16_t bits16;
        std::memcpy(&bits16, view.data + 2 * (base + col), 2);
        dst[col] = view.scheme == WeightScheme::kF16 ? f16_to_f32(bits16) : bf16_to_f32(bits16);
      }
      return;
    default: break;
  }
  for (std::size_t g = 0; g < view.groups(); ++g) {
    const QuantParams p = read_params(view, row, g);
    const std::size_t end = std::min((g + 1) * view.group_size, view.in);
    for (std::size_t col = g * view.group_size; col < end; ++col) {
      dst[col] = dequantize_value(view.scheme, read_code(view, row, col), p);
    }
  }
}

std::vector<float> dequantize_weights(const WeightView& view) {
  std::vector<float> out(view.out * view.in);
  for (std::size_t row = 0; row < view.out; ++row) {
    dequantize_row(view, row, std::span<float>(out).subspan(row * view.in, view.in));
  }
  return out;
}

}  // namespace kiln
