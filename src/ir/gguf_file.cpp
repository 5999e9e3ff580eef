#include "ir/gguf_file.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace kiln::ir {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr std::uint32_t kMaxDims = 4;         // ggml's GGML_MAX_DIMS

// The metadata value types of the format.
enum class ValueType : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Little-endian reads that never go past the end of the file.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> bytes, const std::filesystem::path& path) : bytes_(bytes), path_(path) {}

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }

  // GGUF strings are UTF-8; one that is not is refused here, before it reaches a JSON document
  // (a rebuilt tokenizer.json) that could not be written.
  std::string string(const char* what) {
    const auto length = read<std::uint64_t>(what);
    need(length, what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), length);
    if (const std::size_t valid = valid_utf8_prefix(s); valid != s.size()) {
      fail("{}: {} at byte {} is not valid UTF-8 (its byte {} is 0x{:02x})", path_.string(), what, at_, valid,
           static_cast<unsigned char>(s[valid]));
    }
    at_ += length;
    return s;
  }

  // Fails unless `count` items of at least `min_bytes` each can still fit: a count that lies is
  // caught before anything is allocated for it.
  void check_count(std::uint64_t count, std::uint64_t min_bytes, const std::string& what) const {
    if (count > remaining() / min_bytes) {
      fail("{}: {} says {} entries, more than the {} bytes left can hold", path_.string(), what, count, remaining());
    }
  }

  std::uint64_t position() const { return at_; }
  std::uint64_t remaining() const { return bytes_.size() - at_; }

 private:
  void need(std::uint64_t n, const char* what) const {
    if (n > remaining()) fail("{}: the file ends inside {} (at byte {})", path_.string(), what, at_);
  }

  std::span<const std::uint8_t> bytes_;
  const std::filesystem::path& path_;
  std::uint64_t at_ = 0;
};

std::uint64_t min_value_bytes(ValueType type) {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool: return 1;
    case ValueType::kU16:
    case ValueType::kI16: return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32: return 4;
    case ValueType::kString:  // its length
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64: return 8;
    case ValueType::kArray: return 12;  // element type and count
  }
  return 1;
}

Json read_value(Cursor& in, ValueType type, const std::string& key, const std::filesystem::path& path, int depth) {
  switch (type) {
    case ValueType::kU8: return in.read<std::uint8_t>("a value");
    case ValueType::kI8: return in.read<std::int8_t>("a value");
    case ValueType::kU16: return in.read<std::uint16_t>("a value");
    case ValueType::kI16: return in.read<std::int16_t>("a value");
    case ValueType::kU32: return in.read<std::uint32_t>("a value");
    case ValueType::kI32: return in.read<std::int32_t>("a value");
    case ValueType::kF32: return in.read<float>("a value");
    case ValueType::kU64: return in.read<std::uint64_t>("a value");
    case ValueType::kI64: return in.read<std::int64_t>("a value");
    case ValueType::kF64: return in.read<double>("a value");
    case ValueType::kBool: {
      const auto b = in.read<std::uint8_t>("a value");
      if (b > 1) fail("{}: metadata '{}' is a bool of value {}", path.string(), key, b);
      return b == 1;
    }
    case ValueType::kString: return in.string(("metadata '" + key + "'").c_str());
    case ValueType::kArray: {
      if (depth > 0) fail("{}: metadata '{}' nests arrays, which kiln does not read", path.string(), key);
      const auto element = in.read<std::uint32_t>("an array's element type");
      if (element > static_cast<std::uint32_t>(ValueType::kF64)) {
        fail("{}: metadata '{}' is an array of unknown type {}", path.string(), key, element);
      }
      const auto count = in.read<std::uint64_t>("an array's length");
      in.check_count(count, min_value_bytes(static_cast<ValueType>(element)), "metadata '" + key + "'");
      Json array = Json::array();
      for (std::uint64_t i = 0; i < count; ++i) {
        array.push_back(read_value(in, static_cast<ValueType>(element), key, path, depth + 1));
      }
      return array;
    }
  }
  fail("{}: metadata '{}' has unknown value type {}", path.string(), key, static_cast<std::uint32_t>(type));
}

}  // namespace

std::optional<std::string> ggml_type_name(std::uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32: return "F32";
    case GgmlType::kF16: return "F16";
    case GgmlType::kBF16: return "BF16";
    case GgmlType::kQ4_0: return "Q4_0";
    case GgmlType::kQ4_1: return "Q4_1";
    case GgmlType::kQ5_0: return "Q5_0";
    case GgmlType::kQ5_1: return "Q5_1";
    case GgmlType::kQ8_0: return "Q8_0";
    case GgmlType::kQ8_1: return "Q8_1";
    case GgmlType::kQ2_K: return "Q2_K";
    case GgmlType::kQ3_K: return "Q3_K";
    case GgmlType::kQ4_K: return "Q4_K";
    case GgmlType::kQ5_K: return "Q5_K";
    case GgmlType::kQ6_K: return "Q6_K";
    case GgmlType::kQ8_K: return "Q8_K";
  }
  return std::nullopt;
}

std::optional<GgmlBlock> ggml_block(std::uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32: return GgmlBlock{1, 4};
    case GgmlType::kF16:
    case GgmlType::kBF16: return GgmlBlock{1, 2};
    case GgmlType::kQ4_0: return GgmlBlock{32, 18};
    case GgmlType::kQ4_1: return GgmlBlock{32, 20};
    case GgmlType::kQ5_0: return GgmlBlock{32, 22};
    case GgmlType::kQ5_1: return GgmlBlock{32, 24};
    case GgmlType::kQ8_0: return GgmlBlock{32, 34};
    case GgmlType::kQ8_1: return GgmlBlock{32, 36};
    case GgmlType::kQ2_K: return GgmlBlock{256, 84};
    case GgmlType::kQ3_K: return GgmlBlock{256, 110};
    case GgmlType::kQ4_K: return GgmlBlock{256, 144};
    case GgmlType::kQ5_K: return GgmlBlock{256, 176};
    case GgmlType::kQ6_K: return GgmlBlock{256, 210};
    case GgmlType::kQ8_K: return GgmlBlock{256, 292};
  }
  return std::nullopt;
}

std::uint64_t GgufTensor::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) n *= d;
  return n;
}

const Json* GgufFile::find(const std::string& key) const {
  for (const auto& [k, v] : metadata_) {
    if (k == key) return &v;
  }
  return nullptr;
}

GgufFile::GgufFile(const std::filesystem::path& path) : file_(path) {
  const std::string where = path.string();
  Cursor in(file_.bytes(), file_.path());
  if (file_.size() < 4 || in.read<std::uint32_t>("the magic number") != kMagic) {
    fail("{}: not a GGUF file (it does not start with \"GGUF\")", where);
  }
  version_ = in.read<std::uint32_t>("the version");
  if (version_ != 2 && version_ != 3) fail("{}: GGUF version {} (kiln reads 2 and 3)", where, version_);
  const auto tensor_count = in.read<std::uint64_t>("the tensor count");
  const auto kv_count = in.read<std::uint64_t>("the metadata count");
  in.check_count(kv_count, 8 + 4 + 1, "the header's metadata count");
  in.check_count(tensor_count, 8 + 4 + 4 + 8, "the header's tensor count");

  std::set<std::string> keys;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::string key = in.string("a metadata key");
    const auto type = in.read<std::uint32_t>("a metadata type");
    if (type > static_cast<std::uint32_t>(ValueType::kF64))
      fail("{}: metadata '{}' has unknown type {}", where, key, type);
    Json value = read_value(in, static_cast<ValueType>(type), key, path, 0);
    if (!keys.insert(key).second) fail("{}: metadata '{}' appears twice", where, key);
    metadata_.emplace_back(std::move(key), std::move(value));
  }
  if (const Json* alignment = find("general.alignment")) {
    const std::uint64_t a = alignment->is_number_unsigned() ? alignment->get<std::uint64_t>() : 0;
    if (a == 0 || (a & (a - 1)) != 0)
      fail("{}: general.alignment must be a power of two, got {}", where, alignment->dump());
    alignment_ = a;
  }

  struct Entry {
    std::uint64_t offset, size;
  };
  std::vector<Entry> entries;
  std::set<std::string> names;
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor t;
    t.name = in.string("a tensor name");
    const auto n_dims = in.read<std::uint32_t>("a tensor's dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) fail("{}: tensor '{}' has {} dimensions (1 to 4)", where, t.name, n_dims);
    for (std::uint32_t d = 0; d < n_dims; ++d) t.dims.push_back(in.read<std::uint64_t>("a tensor's dimensions"));
    const auto type = in.read<std::uint32_t>("a tensor's type");
    const auto offset = in.read<std::uint64_t>("a tensor's offset");
    const std::optional<GgmlBlock> size = ggml_block(type);
    if (!size) fail("{}: tensor '{}' has ggml type {}, which kiln does not read", where, t.name, type);
    t.type = static_cast<GgmlType>(type);
    std::uint64_t elements = 1;
    for (std::uint64_t d : t.dims) {
      if (d == 0 || elements > (std::uint64_t(1) << 50) / d)
        fail("{}: tensor '{}' has impossible dimensions", where, t.name);
      elements *= d;
    }
    if (t.dims[0] % size->elements != 0) {
      fail("{}: tensor '{}' rows of {} elements do not split into {} blocks of {}", where, t.name, t.dims[0],
           *ggml_type_name(type), size->elements);
    }
    if (offset % alignment_ != 0)
      fail("{}: tensor '{}' is at offset {}, not {}-aligned", where, t.name, offset, alignment_);
    if (!names.insert(t.name).second) fail("{}: tensor '{}' appears twice", where, t.name);
    entries.push_back({offset, elements / size->elements * size->bytes});
    tensors_.push_back(std::move(t));
  }

  const std::uint64_t data_start = (in.position() + alignment_ - 1) / alignment_ * alignment_;
  const std::uint64_t data_size = file_.size() > data_start ? file_.size() - data_start : 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const Entry& e = entries[i];
    if (e.offset > data_size || e.size > data_size - e.offset) {
      fail("{}: tensor '{}' ({} bytes at offset {}) runs past the end of the file (the data section holds {} bytes)",
           where, tensors_[i].name, e.size, e.offset, data_size);
    }
    tensors_[i].bytes = file_.bytes().subspan(data_start + e.offset, e.size);
  }
  std::vector<std::size_t> order(tensors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return entries[a].offset < entries[b].offset; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const Entry& prev = entries[order[k - 1]];
    if (prev.offset + prev.size > entries[order[k]].offset) {
      fail("{}: tensors '{}' and '{}' overlap", where, tensors_[order[k - 1]].name, tensors_[order[k]].name);
    }
  }
}

}  // namespace kiln::ir
