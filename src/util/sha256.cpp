#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <vector>

#include "util/error.hpp"

namespace kiln {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
  bool finished = false;
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1) {
    fail(ErrorKind::kInternal, "sha256: cannot initialise the OpenSSL digest");
  }
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> bytes) {
  KILN_DASSERT(!state_->finished);
  if (!bytes.empty()) EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size());
}

void Sha256::update(std::string_view text) {
  update({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

Sha256::Digest Sha256::digest() {
  Digest out{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->ctx, out.data(), &length);
  state_->finished = true;
  return out;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : digest()) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

std::string sha256_hex(std::string_view text) {
  Sha256 h;
  h.update(text);
  return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kNotFound, "{}: cannot open for hashing", path.string());
  Sha256 h;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    h.update({reinterpret_cast<const std::uint8_t*>(buffer.data()), n});
  }
  if (in.bad()) fail(ErrorKind::kIo, "{}: read error while hashing", path.string());
  return h.hex_digest();
}

}  // namespace kiln
