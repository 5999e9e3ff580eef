// The tensor table of kiln's IR (model.json "tensors"): where each tensor lies in model.bin, how
// it is stored and, for a quantised weight, its scheme and companion tensors. The table is the
// contract between the writer and the reader: entries in file order, each 64-byte aligned,
// directly after the previous one (zero padding between), so a valid table has one layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/weight_format.hpp"
#include "util/element_type.hpp"
#include "util/json.hpp"

namespace kiln::ir {

inline constexpr int kIrFormatVersion = 1;
inline constexpr std::uint64_t kIrAlignment = 64;  // bytes; every tensor starts on a multiple
inline constexpr std::string_view kIrModelJson = "model.json";
inline constexpr std::string_view kIrModelBin = "model.bin";
inline constexpr std::string_view kIrManifestJson = "manifest.json";

// The element types a table entry may be stored as: F32, F16, BF16, I8, U8, I4, U4 (I4 / U4 pack
// two values per byte over the flat index, the even index in the low nibble).
bool is_ir_storage_type(ElementType type);

// The storage of a scheme's codes (int4_sym → I4, nf4 → U4, f16 → F16, ...) and zero points.
ElementType code_storage(WeightScheme scheme);
ElementType zero_point_storage(WeightScheme scheme);

// Companion tensor names of a quantised weight: "<name>.scale", "<name>.zero_point".
std::string scale_tensor_name(std::string_view weight);
std::string zero_point_tensor_name(std::string_view weight);

struct IrQuantization {
  WeightScheme scheme = WeightScheme::kInt8Sym;
  std::int64_t group_size = 0;
  std::string scale;       // name of the f16 [out, num_groups] scale entry
  std::string zero_point;  // name of the [out, num_groups] zero-point entry; empty if none
};

struct IrTensorEntry {
  std::string name;
  ElementType storage = ElementType::kF32;
  std::vector<std::int64_t> shape;  // logical shape (a quantised weight: [out, in])
  std::uint64_t offset = 0;         // in model.bin, a multiple of kIrAlignment
  std::uint64_t size = 0;           // bytes
  std::string sha256;               // of the `size` bytes at `offset`
  std::optional<IrQuantization> quantization;

  std::uint64_t end() const { return offset + size; }
  // A plain (not quantised) entry; the writer fills in offset, size and sha256.
  static IrTensorEntry plain(std::string name, ElementType storage, std::vector<std::int64_t> shape) {
    IrTensorEntry e;
    e.name = std::move(name);
    e.storage = storage;
    e.shape = std::move(shape);
    return e;
  }
};

std::uint64_t align_to_ir(std::uint64_t offset);

Json to_json(const IrTensorEntry& entry);
// Parses one entry; `origin` ("model.json") prefixes errors, which name the tensor and field.
IrTensorEntry parse_tensor_entry(const Json& json, const std::string& origin);

// The bytes `entry` must occupy given its storage and shape (overflow is an error).
std::uint64_t expected_entry_bytes(const IrTensorEntry& entry, const std::string& origin);

// Checks the table against a model.bin of `file_size` bytes: unique names, sizes that match
// storage and shape, file order (a re-ordered table is named as such), alignment, no overlaps or
// gaps, nothing past the end (a truncated file), no trailing bytes, and that every quantised
// weight's companions exist with the right storage and shape and belong to it alone.
void validate_tensor_table(const std::vector<IrTensorEntry>& entries, std::uint64_t file_size,
                           const std::string& model_json, const std::string& model_bin);

}  // namespace kiln::ir
