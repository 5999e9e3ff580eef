// Reader for one `.safetensors` file: an 8-byte little-endian header length, a JSON header
// mapping tensor names to dtype / shape / data_offsets, then the data. The file is memory-mapped
// and every tensor is a view into the map; the header is validated completely on open (bounds,
// overlaps, sizes, dtypes), so a view handed out is always inside the file.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ir/tensor_view.hpp"
#include "util/json.hpp"
#include "util/mapped_file.hpp"

namespace kiln::ir {

class SafetensorsFile {
 public:
  // Maps and validates. Throws kiln::Error naming the file and the offending tensor.
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const Json& metadata() const { return metadata_; }  // "__metadata__" ({} when absent)

 private:
  MappedFile file_;
  std::map<std::string, TensorView> tensors_;
  Json metadata_ = Json::object();
};

// Writes tensors to a .safetensors file atomically (temporary name, then rename), in the
// order given, with the header padded so the data section starts 8-byte aligned.
struct SafetensorsEntry {
  std::string name;
  ElementType dtype;
  std::vector<std::int64_t> shape;
  std::span<const std::uint8_t> bytes;
};
void write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsEntry>& entries,
                       const Json& metadata = Json::object());

}  // namespace kiln::ir
