// Writes kiln's IR into a directory, streamed: tensors go to model.bin one at a time (a tensor
// may arrive in pieces), each 64-byte aligned, hashed as it passes; finish() writes model.json.
// model.bin is written under a temporary name and renamed by finish(), so an error leaves no
// model.bin; callers build the whole directory in a StagingDirectory for the same reason.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/ir_tensor_table.hpp"
#include "ir/model_config.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::ir {

class IrWriter {
 public:
  explicit IrWriter(const std::filesystem::path& dir);

  // Starts a tensor: `entry` gives name, storage, shape and quantization; offset, size and
  // sha256 are filled in here. Bytes follow through write(); end_tensor() checks the count.
  void begin_tensor(IrTensorEntry entry);
  void write(std::span<const std::uint8_t> bytes);
  void end_tensor();

  // begin_tensor + write + end_tensor.
  void add_tensor(IrTensorEntry entry, std::span<const std::uint8_t> bytes);

  // Writes model.json (format_version, producer, architecture, tensors) and puts model.bin in
  // place. Returns the sha256 of model.bin. Every started tensor must have ended.
  std::string finish(const ModelConfig& config, const std::string& producer);

  const std::vector<IrTensorEntry>& entries() const { return entries_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<AtomicFileWriter> bin_;
  Sha256 file_hash_;
  std::unique_ptr<Sha256> tensor_hash_;  // the open tensor's, null between tensors
  std::uint64_t tensor_bytes_ = 0;
  std::uint64_t tensor_expected_ = 0;
  std::vector<IrTensorEntry> entries_;
};

}  // namespace kiln::ir
