// Reader for one GGUF file (llama.cpp's format, versions 2 and 3): a header, typed key/value
// metadata (the architecture's hyperparameters and the tokenizer), a tensor directory, then the
// tensor data at an aligned offset. The file is memory-mapped; the whole directory is validated
// on open (counts against the file size, every tensor's bytes inside the data section and
// aligned, known element types), so a tensor handed out always lies inside the file.
//
// This is the container only: turning a GGUF model into kiln's weights and tokenizer is the
// importer's job.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/json.hpp"
#include "util/mapped_file.hpp"

namespace kiln::ir {

// ggml's element types that kiln reads, by their numbers in the format.
enum class GgmlType : std::uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kBF16 = 30,
};

// The type's name as llama.cpp prints it ("Q4_0"); nullopt for a number kiln does not read.
std::optional<std::string> ggml_type_name(std::uint32_t type);

// A type's unit of storage: `elements` values in `bytes` bytes (1 value for F32/F16/BF16).
struct GgmlBlock {
  std::uint64_t elements;
  std::uint64_t bytes;
};
std::optional<GgmlBlock> ggml_block(std::uint32_t type);  // nullopt for a number kiln does not read

struct GgufTensor {
  std::string name;
  GgmlType type;
  // ggml's order: dims[0] is the fastest-varying (a row's length); numpy's shape is the reverse.
  std::vector<std::uint64_t> dims;
  std::span<const std::uint8_t> bytes;  // inside the file's map
  std::uint64_t elements() const;
};

class GgufFile {
 public:
  // Maps and validates. Throws kiln::Error naming the file and what is wrong (the key or tensor).
  explicit GgufFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  std::uint32_t version() const { return version_; }
  // Every key in file order. Integers and floats become JSON numbers, arrays JSON arrays.
  const std::vector<std::pair<std::string, Json>>& metadata() const { return metadata_; }
  const Json* find(const std::string& key) const;  // nullptr when absent
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  std::uint64_t alignment() const { return alignment_; }

 private:
  MappedFile file_;
  std::uint32_t version_ = 0;
  std::vector<std::pair<std::string, Json>> metadata_;
  std::vector<GgufTensor> tensors_;
  std::uint64_t alignment_ = 32;
};

}  // namespace kiln::ir
