#include "ir/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ir/safetensors_writer.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace kiln::ir {
namespace {

// Headers beyond this are certainly corrupt (the largest real ones are a few MB).
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;

struct Extent {
  std::uint64_t begin;
  std::uint64_t end;
  const std::string* name;
};

std::vector<std::int64_t> parse_shape(const Json& shape, const std::string& where) {
  if (!shape.is_array()) fail("{}: 'shape' must be an array of integers", where);
  std::vector<std::int64_t> dims;
  for (const Json& d : shape) {
    if (!d.is_number_unsigned()) fail("{}: 'shape' has a non-integer or negative entry {}", where, d.dump());
    // Past int64 the entry would read back negative; an empty tensor would not catch it by size.
    if (d.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("{}: 'shape' entry {} is out of range (at most 2^63 - 1)", where, d.dump());
    }
    dims.push_back(d.get<std::int64_t>());
  }
  return dims;
}

// numel * element size, or an error if it overflows 64 bits or the element count passes int64
// part way (TensorView::num_elements multiplies the dims in order as int64: with 1-byte types
// and a later zero dimension the byte count alone does not catch that).
std::uint64_t checked_byte_size(const std::vector<std::int64_t>& shape, std::size_t element_size,
                                const std::string& where) {
  constexpr auto kMaxCount = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t n = element_size;
  std::uint64_t count = 1;
  for (std::int64_t d : shape) {
    const auto u = static_cast<std::uint64_t>(d);
    if (u != 0 && (n > std::numeric_limits<std::uint64_t>::max() / u || count > kMaxCount / u)) {
      fail("{}: shape {} is too large", where, format_shape(shape));
    }
    n *= u;
    count *= u;
  }
  return n;
}

}  // namespace

std::string format_shape(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : file_(path) {
  const std::string file = path.string();
  if (file_.size() < 8) fail("{}: truncated: {} bytes, too short for a safetensors header", file, file_.size());
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, file_.data(), 8);  // little-endian on every platform kiln targets
  if (header_size > kMaxHeaderBytes || header_size > file_.size() - 8) {
    fail("{}: header length {} exceeds the file ({} bytes): truncated or not a safetensors file", file, header_size,
         file_.size());
  }
  const Json header = parse_json_text(std::string_view(reinterpret_cast<const char*>(file_.data()) + 8, header_size),
                                      fmt::format("{}: header", file));
  if (!header.is_object()) fail("{}: header must be a JSON object", file);

  const std::uint8_t* data = file_.data() + 8 + header_size;
  const std::uint64_t data_size = file_.size() - 8 - header_size;
  std::vector<Extent> extents;
  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      metadata_ = entry;
      continue;
    }
    const std::string where = fmt::format("{}: tensor '{}'", file, name);
    if (!entry.is_object()) fail("{}: entry must be an object", where);
    JsonFields fields(entry, where);
    const std::string dtype_text = fields.get<std::string>("dtype");
    const auto dtype = parse_element_type(dtype_text);
    if (!dtype || *dtype == ElementType::kI4 || *dtype == ElementType::kU4)
      fail("{}: unknown dtype '{}' (accepted: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)", where, dtype_text);
    if (!entry.contains("shape")) fail("{}: missing 'shape'", where);
    std::vector<std::int64_t> shape = parse_shape(entry["shape"], where);
    const Json& offsets = entry.contains("data_offsets") ? entry["data_offsets"] : Json();
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      fail("{}: 'data_offsets' must be [begin, end] with non-negative integers", where);
    }
    const auto begin = offsets[0].get<std::uint64_t>();
    const auto end = offsets[1].get<std::uint64_t>();
    if (begin > end) fail("{}: data_offsets [{}, {}] has begin after end", where, begin, end);
    if (end > data_size) {
      fail("{}: data_offsets [{}, {}] out of bounds: the data section has {} bytes (truncated file?)", where, begin,
           end, data_size);
    }
    const std::uint64_t expected = checked_byte_size(shape, element_bytes(*dtype), where);
    if (end - begin != expected) {
      fail("{}: holds {} bytes but dtype {} with shape {} needs {}", where, end - begin, dtype_text,
           format_shape(shape), expected);
    }
    TensorView view{
        name, *dtype, std::move(shape), {data + begin, static_cast<std::size_t>(end - begin)}, std::nullopt};
    auto [it, inserted] = tensors_.emplace(name, std::move(view));
    extents.push_back({begin, end, &it->first});
  }

  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < extents.size(); ++i) {
    if (extents[i].begin < extents[i - 1].end) {
      fail("{}: tensors '{}' and '{}' overlap (bytes [{}, {}) and [{}, {}))", file, *extents[i - 1].name,
           *extents[i].name, extents[i - 1].begin, extents[i - 1].end, extents[i].begin, extents[i].end);
    }
  }
}

void write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsEntry>& entries,
                       const Json& metadata) {
  std::vector<SafetensorsTensorInfo> infos;
  for (const auto& e : entries) infos.push_back({e.name, e.dtype, e.shape});
  SafetensorsStreamWriter out(path, infos, metadata);
  for (const auto& e : entries) {
    if (e.bytes.size() !=
        element_bytes(e.dtype) *
            static_cast<std::size_t>(TensorView{e.name, e.dtype, e.shape, {}, std::nullopt}.num_elements())) {
      fail(ErrorKind::kInternal, "{}: tensor '{}' has {} bytes, its dtype and shape need another count", path.string(),
           e.name, e.bytes.size());
    }
    out.write(e.bytes);
  }
  out.commit();
}

}  // namespace kiln::ir
