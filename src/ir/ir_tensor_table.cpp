#include "ir/ir_tensor_table.hpp"

#include <limits>
#include <map>
#include <set>

#include "ir/tensor_view.hpp"
#include "util/error.hpp"

namespace kiln::ir {
namespace {

std::uint64_t checked_count(const std::vector<std::int64_t>& shape, const std::string& where) {
  std::uint64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) fail("{}: negative dimension in shape {}", where, format_shape(shape));
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / 8 / static_cast<std::uint64_t>(d)) {
      fail("{}: shape {} is too large", where, format_shape(shape));
    }
    n *= static_cast<std::uint64_t>(d);
  }
  return n;
}

void check_companion(const IrTensorEntry& weight, const IrTensorEntry* companion, std::string_view role,
                     ElementType storage, const std::vector<std::int64_t>& shape, const std::string& origin) {
  if (companion == nullptr) {
    fail("{}: tensor '{}' names {} tensor that is not in the table", origin, weight.name, role);
  }
  if (companion->quantization) fail("{}: {} tensor '{}' cannot itself be quantised", origin, role, companion->name);
  if (companion->storage != storage || companion->shape != shape) {
    fail("{}: {} tensor '{}' of '{}' must be {} {}, got {} {}", origin, role, companion->name, weight.name,
         element_type_name(storage), format_shape(shape), element_type_name(companion->storage),
         format_shape(companion->shape));
  }
}

void validate_quantization(const IrTensorEntry& e, const std::map<std::string_view, const IrTensorEntry*>& by_name,
                           std::set<std::string_view>& companions, const std::string& origin) {
  const IrQuantization& q = *e.quantization;
  if (is_float_scheme(q.scheme)) {
    fail("{}: tensor '{}': scheme {} is not a quantisation scheme", origin, e.name, weight_scheme_name(q.scheme));
  }
  if (e.shape.size() != 2)
    fail("{}: quantised tensor '{}' must be a matrix, got shape {}", origin, e.name, format_shape(e.shape));
  const std::int64_t out = e.shape[0], in = e.shape[1];
  if (out <= 0 || in <= 0)
    fail("{}: quantised tensor '{}' has an empty shape {}", origin, e.name, format_shape(e.shape));
  if (q.group_size < 1 || q.group_size > in) {
    fail("{}: tensor '{}': group_size {} out of range (accepted: 1..{})", origin, e.name, q.group_size, in);
  }
  if (e.storage != code_storage(q.scheme)) {
    fail("{}: tensor '{}': scheme {} stores codes as {}, but the entry says {}", origin, e.name,
         weight_scheme_name(q.scheme), element_type_name(code_storage(q.scheme)), element_type_name(e.storage));
  }
  const std::int64_t groups =
      static_cast<std::int64_t>(num_groups(static_cast<std::size_t>(in), static_cast<std::size_t>(q.group_size)));
  const auto find = [&](const std::string& name) -> const IrTensorEntry* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  check_companion(e, find(q.scale), "scale", ElementType::kF16, {out, groups}, origin);
  if (!companions.insert(q.scale).second) fail("{}: scale tensor '{}' is shared by two weights", origin, q.scale);
  if (has_zero_points(q.scheme)) {
    if (q.zero_point.empty())
      fail("{}: tensor '{}': scheme {} needs a zero_point tensor", origin, e.name, weight_scheme_name(q.scheme));
    check_companion(e, find(q.zero_point), "zero-point", zero_point_storage(q.scheme), {out, groups}, origin);
    if (!companions.insert(q.zero_point).second)
      fail("{}: zero-point tensor '{}' is shared by two weights", origin, q.zero_point);
  } else if (!q.zero_point.empty()) {
    fail("{}: tensor '{}': scheme {} has no zero points, but names '{}'", origin, e.name, weight_scheme_name(q.scheme),
         q.zero_point);
  }
}

}  // namespace

bool is_ir_storage_type(ElementType type) {
  switch (type) {
    case ElementType::kF32:
    case ElementType::kF16:
    case ElementType::kBf16:
    case ElementType::kI8:
    case ElementType::kU8:
    case ElementType::kI4:
    case ElementType::kU4: return true;
    default: return false;
  }
}

ElementType code_storage(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kF32: return ElementType::kF32;
    case WeightScheme::kF16: return ElementType::kF16;
    case WeightScheme::kBf16: return ElementType::kBf16;
    case WeightScheme::kInt8Sym: return ElementType::kI8;
    case WeightScheme::kInt8Asym: return ElementType::kU8;
    case WeightScheme::kInt4Sym: return ElementType::kI4;
    case WeightScheme::kInt4Asym:
    case WeightScheme::kNf4: return ElementType::kU4;
  }
  return ElementType::kU8;
}

ElementType zero_point_storage(WeightScheme scheme) {
  return is_4bit_scheme(scheme) ? ElementType::kU4 : ElementType::kU8;
}

std::string scale_tensor_name(std::string_view weight) { return std::string(weight) + ".scale"; }
std::string zero_point_tensor_name(std::string_view weight) { return std::string(weight) + ".zero_point"; }

std::uint64_t align_to_ir(std::uint64_t offset) { return (offset + kIrAlignment - 1) / kIrAlignment * kIrAlignment; }

Json to_json(const IrTensorEntry& e) {
  Json j = {{"name", e.name},   {"dtype", element_type_name(e.storage)},
            {"shape", e.shape}, {"offset", e.offset},
            {"size", e.size},   {"sha256", e.sha256}};
  if (e.quantization) {
    Json q = {{"scheme", weight_scheme_name(e.quantization->scheme)},
              {"group_size", e.quantization->group_size},
              {"scale", e.quantization->scale}};
    if (!e.quantization->zero_point.empty()) q["zero_point"] = e.quantization->zero_point;
    j["quantization"] = std::move(q);
  }
  return j;
}

IrTensorEntry parse_tensor_entry(const Json& json, const std::string& origin) {
  if (!json.is_object()) fail("{}: every entry of 'tensors' must be an object", origin);
  IrTensorEntry e;
  {
    JsonFields named(json, origin + ": tensors[]");
    e.name = named.get<std::string>("name");
  }
  const std::string where = fmt::format("{}: tensor '{}'", origin, e.name);
  JsonFields f(json, where);
  const std::string dtype = f.get<std::string>("dtype");
  const auto storage = parse_element_type(dtype);
  if (!storage || !is_ir_storage_type(*storage))
    f.fail_field("dtype", fmt::format("'{}' is not a storage type (accepted: F32, F16, BF16, I8, U8, I4, U4)", dtype));
  e.storage = *storage;
  if (!json.contains("shape") || !json["shape"].is_array()) f.fail_field("shape", "must be an array of integers");
  for (const Json& d : json["shape"]) {
    if (!d.is_number_unsigned()) f.fail_field("shape", fmt::format("has a non-integer or negative entry {}", d.dump()));
    e.shape.push_back(d.get<std::int64_t>());
  }
  for (std::string_view key : {"offset", "size"}) {
    if (!json.contains(key) || !json[std::string(key)].is_number_unsigned()) {
      f.fail_field(key, "must be a non-negative integer");
    }
  }
  e.offset = json["offset"].get<std::uint64_t>();
  e.size = json["size"].get<std::uint64_t>();
  e.sha256 = f.get<std::string>("sha256");
  if (e.sha256.size() != 64 || e.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    f.fail_field("sha256", "must be 64 lowercase hex digits");
  }
  if (f.has("quantization")) {
    JsonFields qf(json["quantization"], where + ": quantization");
    IrQuantization q;
    const std::string scheme = qf.get<std::string>("scheme");
    try {
      q.scheme = parse_weight_scheme(scheme);
    } catch (const Error& err) {
      qf.fail_field("scheme", err.what());
    }
    q.group_size = qf.get<std::int64_t>("group_size");
    q.scale = qf.get<std::string>("scale");
    q.zero_point = qf.get_or<std::string>("zero_point", "");
    e.quantization = std::move(q);
  }
  return e;
}

std::uint64_t expected_entry_bytes(const IrTensorEntry& e, const std::string& origin) {
  return element_bytes(e.storage, checked_count(e.shape, fmt::format("{}: tensor '{}'", origin, e.name)));
}

void validate_tensor_table(const std::vector<IrTensorEntry>& entries, std::uint64_t file_size,
                           const std::string& model_json, const std::string& model_bin) {
  std::map<std::string_view, const IrTensorEntry*> by_name;
  for (const IrTensorEntry& e : entries) {
    if (!by_name.emplace(e.name, &e).second) fail("{}: tensor '{}' is listed twice", model_json, e.name);
    const std::uint64_t expected = expected_entry_bytes(e, model_json);
    if (e.size != expected) {
      fail("{}: tensor '{}' has size {} but {} {} needs {} bytes", model_json, e.name, e.size,
           element_type_name(e.storage), format_shape(e.shape), expected);
    }
  }
  // Order first: a swapped pair would otherwise surface as a confusing offset mismatch.
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].offset < entries[i - 1].offset && entries[i - 1].offset >= file_size) {
      // Not a re-ordering: that offset points outside the file (a corrupt or edited number).
      fail("{}: tensor '{}' has offset {}, past the end of {} ({} bytes)", model_json, entries[i - 1].name,
           entries[i - 1].offset, model_bin, file_size);
    }
    if (entries[i].offset < entries[i - 1].offset) {
      fail(
          "{}: tensor '{}' (offset {}) is listed after '{}' (offset {}): the table is re-ordered; entries must be in "
          "file order",
          model_json, entries[i].name, entries[i].offset, entries[i - 1].name, entries[i - 1].offset);
    }
  }
  std::uint64_t expected_offset = 0;
  const IrTensorEntry* previous = nullptr;
  for (const IrTensorEntry& e : entries) {
    if (e.offset % kIrAlignment != 0) {
      fail("{}: tensor '{}' starts at offset {}, which is not {}-byte aligned", model_json, e.name, e.offset,
           kIrAlignment);
    }
    if (previous != nullptr && e.offset < previous->end()) {
      fail("{}: tensors '{}' and '{}' overlap (bytes [{}, {}) and [{}, {}))", model_json, previous->name, e.name,
           previous->offset, previous->end(), e.offset, e.end());
    }
    if (e.offset != expected_offset) {
      fail("{}: tensor '{}' starts at offset {}, expected {} (the next {}-byte boundary after '{}')", model_json,
           e.name, e.offset, expected_offset, kIrAlignment, previous ? previous->name : "the start of the file");
    }
    if (e.end() > file_size) {
      fail("{}: is truncated: {} bytes, but tensor '{}' needs bytes [{}, {})", model_bin, file_size, e.name, e.offset,
           e.end());
    }
    expected_offset = align_to_ir(e.end());
    previous = &e;
  }
  const std::uint64_t data_end = previous ? previous->end() : 0;
  if (file_size != data_end) {
    fail("{}: has {} bytes, but the tensor table in {} ends at byte {}", model_bin, file_size, model_json, data_end);
  }
  std::set<std::string_view> companions;
  for (const IrTensorEntry& e : entries) {
    if (e.quantization) validate_quantization(e, by_name, companions, model_json);
  }
}

}  // namespace kiln::ir
