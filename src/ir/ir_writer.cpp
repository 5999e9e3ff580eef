#include "ir/ir_writer.hpp"

#include <set>

#include "util/error.hpp"

namespace kiln::ir {

IrWriter::IrWriter(const std::filesystem::path& dir)
    : dir_(dir), bin_(std::make_unique<AtomicFileWriter>(dir / kIrModelBin)) {}

void IrWriter::begin_tensor(IrTensorEntry entry) {
  if (tensor_hash_)
    fail(ErrorKind::kInternal, "IrWriter: '{}' begun before '{}' ended", entry.name, entries_.back().name);
  for (const IrTensorEntry& e : entries_) {
    if (e.name == entry.name) fail(ErrorKind::kInternal, "IrWriter: tensor '{}' written twice", entry.name);
  }
  // Zero padding up to the next aligned offset.
  const std::uint64_t offset = align_to_ir(bin_->bytes_written());
  const std::string padding(offset - bin_->bytes_written(), '\0');
  bin_->write(padding);
  file_hash_.update(padding);
  entry.offset = offset;
  entry.size = 0;
  tensor_expected_ = expected_entry_bytes(entry, std::string(kIrModelJson));
  tensor_bytes_ = 0;
  tensor_hash_ = std::make_unique<Sha256>();
  entries_.push_back(std::move(entry));
}

void IrWriter::write(std::span<const std::uint8_t> bytes) {
  if (!tensor_hash_) fail(ErrorKind::kInternal, "IrWriter: write() outside a tensor");
  if (tensor_bytes_ + bytes.size() > tensor_expected_) {
    fail(ErrorKind::kInternal, "IrWriter: tensor '{}' given more than its {} bytes", entries_.back().name,
         tensor_expected_);
  }
  bin_->write({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  file_hash_.update(bytes);
  tensor_hash_->update(bytes);
  tensor_bytes_ += bytes.size();
}

void IrWriter::end_tensor() {
  IrTensorEntry& e = entries_.back();
  if (!tensor_hash_ || tensor_bytes_ != tensor_expected_) {
    fail(ErrorKind::kInternal, "IrWriter: tensor '{}' ended after {} of its {} bytes", e.name, tensor_bytes_,
         tensor_expected_);
  }
  e.size = tensor_bytes_;
  e.sha256 = tensor_hash_->hex_digest();
  tensor_hash_.reset();
}

void IrWriter::add_tensor(IrTensorEntry entry, std::span<const std::uint8_t> bytes) {
  begin_tensor(std::move(entry));
  write(bytes);
  end_tensor();
}

std::string IrWriter::finish(const ModelConfig& config, const std::string& producer) {
  if (tensor_hash_) fail(ErrorKind::kInternal, "IrWriter: finish() with tensor '{}' still open", entries_.back().name);
  const std::uint64_t file_size = bin_->bytes_written();
  bin_->commit();
  // The writer's own output must pass the reader's checks; a failure here is a kiln bug.
  validate_tensor_table(entries_, file_size, std::string(kIrModelJson), std::string(kIrModelBin));
  Json tensors = Json::array();
  for (const IrTensorEntry& e : entries_) tensors.push_back(to_json(e));
  const Json model = {{"format_version", kIrFormatVersion},
                      {"producer", producer},
                      {"architecture", to_json(config)},
                      {"tensors", std::move(tensors)}};
  write_file_atomic(dir_ / kIrModelJson, model.dump(1) + "\n");
  return file_hash_.hex_digest();
}

}  // namespace kiln::ir
