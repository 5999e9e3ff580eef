#include "ir/ir_model.hpp"

#include <algorithm>
#include <set>

#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/path_probe.hpp"
#include "util/sha256.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

Json read_model_json(const fs::path& dir) {
  const fs::path path = dir / kIrModelJson;
  if (!path_exists(path)) fail(ErrorKind::kNotFound, "{}: no {}: not a kiln IR directory", dir.string(), kIrModelJson);
  Json json = read_json_file(path);
  if (!json.is_object()) fail("{}: must be a JSON object", path.string());
  return json;
}

void check_format_version(const JsonFields& f) {
  if (!f.has("format_version")) {
    f.fail_field("format_version", "is missing: not a kiln IR (or written before the format was versioned)");
  }
  const auto version = f.get<std::int64_t>("format_version");
  if (version > kIrFormatVersion) {
    fail(ErrorKind::kUnsupported,
         "{}: format_version {} is newer than this kiln reads ({}): upgrade kiln, or re-export the model with "
         "this version",
         f.origin(), version, kIrFormatVersion);
  }
  if (version < kIrFormatVersion) {
    fail(ErrorKind::kUnsupported,
         "{}: format_version {} is older than this kiln reads ({}): re-export the model with `kiln export`", f.origin(),
         version, kIrFormatVersion);
  }
}

MappedFile map_model_bin(const fs::path& dir) {
  const fs::path path = dir / kIrModelBin;
  if (!path_exists(path)) fail(ErrorKind::kNotFound, "{}: {} is missing", dir.string(), kIrModelBin);
  return MappedFile(path);
}

}  // namespace

bool IrModel::is_ir_dir(const fs::path& dir) { return is_file_path(dir / kIrModelJson); }

IrModel::IrModel(const fs::path& dir, IrOpenOptions options) : dir_(dir), bin_(map_model_bin(dir)) {
  const std::string model_json = (dir / kIrModelJson).string();
  const Json json = read_model_json(dir);
  JsonFields f(json, model_json);
  check_format_version(f);
  producer_ = f.get_or<std::string>("producer", "");
  if (!json.contains("architecture")) f.fail_field("architecture", "is missing");
  config_ = parse_model_config(json["architecture"], model_json + ": architecture");
  if (!json.contains("tensors") || !json["tensors"].is_array()) f.fail_field("tensors", "must be an array");
  for (const Json& entry : json["tensors"]) entries_.push_back(parse_tensor_entry(entry, model_json));
  validate_tensor_table(entries_, bin_.size(), model_json, bin_.path().string());

  const fs::path generation = dir / "generation_config.json";
  if (path_exists(generation)) {
    generation_config_ = read_json_file(generation);
    if (!generation_config_.is_object()) fail("{}: must be a JSON object", generation.string());
  }
  build_views(options.verify_checksums);
}

void IrModel::build_views(bool verify_checksums) {
  const std::string bin = bin_.path().string();
  std::uint64_t previous_end = 0;
  std::map<std::string_view, const IrTensorEntry*> by_name;
  std::set<std::string_view> companions;
  for (const IrTensorEntry& e : entries_) {
    by_name.emplace(e.name, &e);
    if (e.quantization) {
      companions.insert(e.quantization->scale);
      if (!e.quantization->zero_point.empty()) companions.insert(e.quantization->zero_point);
    }
    const std::span<const std::uint8_t> padding = bin_.bytes().subspan(previous_end, e.offset - previous_end);
    if (std::any_of(padding.begin(), padding.end(), [](std::uint8_t b) { return b != 0; })) {
      fail("{}: padding before tensor '{}' (bytes [{}, {})) is not zero: the file is corrupt", bin, e.name,
           previous_end, e.offset);
    }
    previous_end = e.end();
    if (verify_checksums) {
      const std::string actual = sha256_hex(bin_.bytes().subspan(e.offset, e.size));
      if (actual != e.sha256) {
        fail(
            "{}: tensor '{}' (bytes [{}, {})) fails its checksum (sha256 {}, model.json says {}): the file is "
            "corrupt; `kiln verify {}` checks every file",
            bin, e.name, e.offset, e.end(), actual, e.sha256, dir_.string());
      }
    }
  }
  const auto bytes_of = [&](const IrTensorEntry& e) { return bin_.bytes().subspan(e.offset, e.size); };
  for (const IrTensorEntry& e : entries_) {
    if (companions.contains(e.name)) continue;
    TensorView view;
    view.name = e.name;
    view.shape = e.shape;
    view.bytes = bytes_of(e);
    if (e.quantization) {
      view.dtype = ElementType::kU8;
      TensorQuantization q;
      q.scheme = e.quantization->scheme;
      q.group_size = e.quantization->group_size;
      q.scales = bytes_of(*by_name.at(e.quantization->scale));
      if (!e.quantization->zero_point.empty()) q.zero_points = bytes_of(*by_name.at(e.quantization->zero_point));
      view.quantization = q;
    } else {
      switch (e.storage) {
        case ElementType::kF32: view.dtype = ElementType::kF32; break;
        case ElementType::kF16: view.dtype = ElementType::kF16; break;
        case ElementType::kBf16: view.dtype = ElementType::kBf16; break;
        case ElementType::kI8: view.dtype = ElementType::kI8; break;
        case ElementType::kU8: view.dtype = ElementType::kU8; break;
        default:
          fail("{}: tensor '{}': storage {} needs a quantization scheme", (dir_ / kIrModelJson).string(), e.name,
               element_type_name(e.storage));
      }
    }
    views_.emplace(e.name, std::move(view));
  }
}

}  // namespace kiln::ir
