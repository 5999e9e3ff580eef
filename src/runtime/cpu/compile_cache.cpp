#include "runtime/cpu/compile_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ir/ir_model.hpp"
#include "runtime/content_hash.hpp"
#include "runtime/cpu/compiled_weights.hpp"
#include "runtime/cpu/memory_region.hpp"
#include "util/error.hpp"
#include "util/json.hpp"
#include "util/sha256.hpp"

namespace kiln::runtime {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'P', 'U', '1'};
constexpr std::size_t kPrefixBytes = 24;  // magic, header length, header hash
constexpr std::size_t kMaxHeaderBytes = std::size_t{64} << 20;

std::string hex64(std::uint64_t v) { return fmt::format("{:016x}", v); }

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

Json matrix_table(const WeightPlan& plan) {
  Json table = Json::array();
  for (const PlannedMatrix& m : plan.matrices) {
    const kernels::PackedLayout& l = m.layout;
    table.push_back({m.name, weight_scheme_name(l.scheme), l.out, l.in, l.group_size, m.offset, l.total_bytes});
  }
  return table;
}

std::string header_text(const std::string& key, const WeightPlan& plan, std::size_t payload_offset,
                        std::uint64_t payload_hash) {
  const Json header = {{"format", "kiln compiled CPU weights"},
                       {"blob_version", kCompiledBlobVersion},
                       {"packed_layout_version", kernels::kPackedLayoutVersion},
                       {"isa", isa_name(plan.isa)},
                       {"key", key},
                       {"payload_offset", payload_offset},
                       {"payload_bytes", plan.total_bytes},
                       {"payload_hash", hex64(payload_hash)},  // fixed width: the header's length never changes
                       {"matrices", matrix_table(plan)}};
  return header.dump();
}

std::size_t payload_offset_for(std::size_t header_bytes) {
  return (kPrefixBytes + header_bytes + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment;
}

// The checks of one entry, in order; the first failure names what is wrong.
CompileCache::Found check_entry(MappedFile file, const std::string& key, const WeightPlan& plan, ThreadPool& pool) {
  CompileCache::Found found;
  const auto corrupt = [&](std::string reason) {
    found.lookup = CacheLookup::kCorrupt;
    found.reason = std::move(reason);
    return std::move(found);
  };
  const std::uint8_t* data = file.data();
  if (file.size() < kPrefixBytes || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    return corrupt("not a kiln compile-cache file");
  std::uint64_t header_bytes = 0, header_hash = 0;
  std::memcpy(&header_bytes, data + 8, 8);
  std::memcpy(&header_hash, data + 16, 8);
  if (header_bytes > kMaxHeaderBytes || kPrefixBytes + header_bytes > file.size())
    return corrupt("header runs past the end of the file");
  const std::string_view text(reinterpret_cast<const char*>(data + kPrefixBytes), header_bytes);
  if (hash64(bytes_of(text)) != header_hash) return corrupt("header hash mismatch");
  Json header;
  try {
    header = parse_json_text(text, file.path().string());
    if (header.at("key").get<std::string>() != key || header.at("blob_version").get<int>() != kCompiledBlobVersion ||
        header.at("packed_layout_version").get<std::uint32_t>() != kernels::kPackedLayoutVersion ||
        header.at("isa").get<std::string>() != isa_name(plan.isa)) {
      found.lookup = CacheLookup::kStale;
      found.reason = "built for another model, ISA or kiln version";
      return found;
    }
    found.payload_offset = header.at("payload_offset").get<std::size_t>();
    if (header.at("matrices") != matrix_table(plan) ||
        header.at("payload_bytes").get<std::size_t>() != plan.total_bytes ||
        found.payload_offset != payload_offset_for(header_bytes)) {
      return corrupt("matrix table does not match the model");
    }
    if (file.size() != found.payload_offset + plan.total_bytes) {
      return corrupt(
          fmt::format("file is {} bytes, expected {}", file.size(), found.payload_offset + plan.total_bytes));
    }
    const std::uint64_t payload_hash = chunked_hash64(file.bytes().subspan(found.payload_offset), pool, plan.isa);
    if (hex64(payload_hash) != header.at("payload_hash").get<std::string>()) return corrupt("payload hash mismatch");
  } catch (const nlohmann::json::exception& e) {
    return corrupt(fmt::format("unreadable header: {}", e.what()));
  }
  found.lookup = CacheLookup::kHit;
  found.file = std::move(file);
  return found;
}

// A file being written through a shared read-write mapping; the destructor unmaps and closes.
class WritableMapping {
 public:
  WritableMapping(const std::filesystem::path& path, std::size_t bytes) : path_(path), size_(bytes) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(ErrorKind::kIo, "{}: cannot create: {}", path.string(), std::strerror(errno));
    // Blocks reserved now: a sparse file would meet a full disk as SIGBUS inside the mapping.
    if (const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(bytes)); err != 0) {
      errno = err;
      fail_errno("cannot reserve");
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) fail_errno("cannot map");
    data_ = static_cast<std::uint8_t*>(p);
    advise_huge_pages({data_, bytes});  // the page cache then holds 2 MiB folios a later map reuses
  }
  ~WritableMapping() {
    if (data_) ::munmap(data_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  WritableMapping(const WritableMapping&) = delete;
  WritableMapping& operator=(const WritableMapping&) = delete;
  std::uint8_t* data() const { return data_; }

 private:
  [[noreturn]] void fail_errno(std::string_view what) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    fail(ErrorKind::kIo, "{}: {} {} bytes: {}", path_.string(), what, size_, std::strerror(err));
  }
  std::filesystem::path path_;
  std::size_t size_;
  int fd_ = -1;
  std::uint8_t* data_ = nullptr;
};

}  // namespace

std::string_view cache_lookup_name(CacheLookup lookup) {
  switch (lookup) {
    case CacheLookup::kHit: return "hit";
    case CacheLookup::kMissing: return "missing";
    case CacheLookup::kStale: return "stale";
    case CacheLookup::kCorrupt: return "corrupt";
  }
  return "unknown";
}

std::string model_fingerprint(const ir::TensorSource& source, const WeightPlan& plan) {
  Sha256 sha;
  if (const auto* ir_model = dynamic_cast<const ir::IrModel*>(&source)) {
    for (const ir::IrTensorEntry& e : ir_model->entries()) sha.update(e.name + '\0' + e.sha256 + '\n');
    return sha.hex_digest();
  }
  for (const PlannedMatrix& m : plan.matrices) {
    std::uint64_t h = hash64(m.tensor->bytes);
    if (m.tensor->quantization) {
      h = hash64(m.tensor->quantization->scales, h);
      h = hash64(m.tensor->quantization->zero_points, h);
    }
    sha.update(m.name + '\0' + hex64(h) + '\n');
    // Hashing faulted the whole matrix in: on a warm cache nothing reads it again, so its file
    // pages are not kept beside the packed copy.
    release_source_pages(source, *m.tensor);
  }
  return sha.hex_digest();
}

std::string compile_cache_key(const WeightPlan& plan, std::string_view fingerprint) {
  Sha256 sha;
  sha.update(fmt::format("kiln compiled CPU weights v{}; packed layout v{}; isa {}; model {}\n", kCompiledBlobVersion,
                         kernels::kPackedLayoutVersion, isa_name(plan.isa), fingerprint));
  sha.update(matrix_table(plan).dump());
  return sha.hex_digest();
}

CompileCache::CompileCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_)) {
    fail(ErrorKind::kIo, "CACHE_DIR {}: cannot create the directory: {}", dir_.string(),
         ec ? ec.message() : "a file of that name exists");
  }
}

std::filesystem::path CompileCache::entry_path(std::string_view origin, Isa isa) const {
  const std::string where = std::filesystem::weakly_canonical(std::filesystem::path(origin)).string();
  return dir_ / fmt::format("{}-{}.kilncpu", sha256_hex(where).substr(0, 24), isa_name(isa));
}

CompileCache::Found CompileCache::open(const std::filesystem::path& path, const std::string& key,
                                       const WeightPlan& plan, ThreadPool& pool) const {
  if (!std::filesystem::exists(path)) return {};
  try {
    MappedFile file(path);
    advise_huge_pages(file.bytes());  // before the hash first touches it
    return check_entry(std::move(file), key, plan, pool);
  } catch (const Error& e) {  // unreadable: treat as corrupt, it gets rewritten
    Found found;
    found.lookup = CacheLookup::kCorrupt;
    found.reason = e.what();
    return found;
  }
}

void CompileCache::write(const std::filesystem::path& path, const std::string& key, const WeightPlan& plan,
                         ThreadPool& pool, const std::function<void(std::span<std::uint8_t>)>& fill) const {
  const std::size_t header_bytes = header_text(key, plan, 0, 0).size();
  const std::size_t payload_offset = payload_offset_for(header_bytes);
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp-{}", ::getpid());
  try {
    WritableMapping file(tmp, payload_offset + plan.total_bytes);
    const std::span<std::uint8_t> payload(file.data() + payload_offset, plan.total_bytes);
    fill(payload);
    const std::string header = header_text(key, plan, payload_offset, chunked_hash64(payload, pool, plan.isa));
    KILN_DASSERT(header.size() == header_bytes);
    const std::uint64_t size = header.size(), hash = hash64(bytes_of(header));
    std::memcpy(file.data(), kMagic, sizeof kMagic);
    std::memcpy(file.data() + 8, &size, 8);
    std::memcpy(file.data() + 16, &hash, 8);
    std::memcpy(file.data() + kPrefixBytes, header.data(), header.size());
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    fail(ErrorKind::kIo, "{}: cannot write the compile-cache entry: {}", path.string(), ec.message());
  }
}

}  // namespace kiln::runtime
