#include "ir/safetensors_writer.hpp"

#include "util/error.hpp"

namespace kiln::ir {

SafetensorsStreamWriter::SafetensorsStreamWriter(const std::filesystem::path& path,
                                                 const std::vector<SafetensorsTensorInfo>& tensors,
                                                 const Json& metadata)
    : path_(path), out_(path) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const SafetensorsTensorInfo& t : tensors) {
    std::uint64_t bytes = element_bytes(t.dtype);
    for (std::int64_t d : t.shape) bytes *= static_cast<std::uint64_t>(d);
    header[t.name] = {{"dtype", element_type_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {data_bytes_, data_bytes_ + bytes}}};
    data_bytes_ += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  const std::uint64_t header_size = text.size();
  out_.write({reinterpret_cast<const char*>(&header_size), 8});
  out_.write(text);
}

void SafetensorsStreamWriter::write(std::span<const std::uint8_t> bytes) {
  if (written_ + bytes.size() > data_bytes_) {
    fail(ErrorKind::kInternal, "{}: more data than the declared tensors hold ({} bytes)", path_.string(), data_bytes_);
  }
  out_.write({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  written_ += bytes.size();
}

void SafetensorsStreamWriter::commit() {
  if (written_ != data_bytes_) {
    fail(ErrorKind::kInternal, "{}: {} of the declared {} data bytes written", path_.string(), written_, data_bytes_);
  }
  out_.commit();
}

}  // namespace kiln::ir
