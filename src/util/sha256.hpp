// SHA-256 of bytes and of files (streamed, so a multi-GB model.bin is hashed in constant memory).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

// Incremental hasher. digest() or hex_digest() finishes it; update() after that is an error.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::span<const std::uint8_t> bytes);
  void update(std::string_view text);
  using Digest = std::array<std::uint8_t, 32>;
  Digest digest();
  std::string hex_digest();  // 64 lowercase hex characters

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string sha256_hex(std::span<const std::uint8_t> bytes);
std::string sha256_hex(std::string_view text);
std::string sha256_file(const std::filesystem::path& path);

}  // namespace kiln
