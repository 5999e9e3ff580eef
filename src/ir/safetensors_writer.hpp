// Streamed writer of one .safetensors file: the tensor list (names, dtypes, shapes) is declared
// up front so the header can be written first, then the data follows in that order in pieces of
// any size. A multi-GB checkpoint is never whole in memory; the file appears (by rename) only on
// commit(), after exactly the declared number of bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "util/element_type.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

namespace kiln::ir {

struct SafetensorsTensorInfo {
  std::string name;
  ElementType dtype = ElementType::kF32;
  std::vector<std::int64_t> shape;
};

class SafetensorsStreamWriter {
 public:
  SafetensorsStreamWriter(const std::filesystem::path& path, const std::vector<SafetensorsTensorInfo>& tensors,
                          const Json& metadata = Json::object());

  void write(std::span<const std::uint8_t> bytes);
  std::uint64_t data_bytes() const { return data_bytes_; }
  void commit();

 private:
  std::filesystem::path path_;
  AtomicFileWriter out_;
  std::uint64_t data_bytes_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace kiln::ir
