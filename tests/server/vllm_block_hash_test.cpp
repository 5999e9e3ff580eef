// Oracle: vLLM's sha256_cbor block hashes computed in Python with cbor2's canonical encoder and
// hashlib (the values below), for the root of PYTHONHASHSEED=0 and two chained blocks whose
// tokens take every CBOR integer width; and the name table against the events that feed it.
#include "server/vllm_block_hash.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace kiln::server {
namespace {

std::vector<std::int32_t> first16() {
  std::vector<std::int32_t> t(16);
  std::iota(t.begin(), t.end(), 0);
  return t;
}

std::string hex(const VllmBlockHash& h) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : h) out += {kHex[b >> 4], kHex[b & 15]};
  return out;
}

TEST(VllmBlockHash, MatchesCbor2AndHashlib) {
  const VllmBlockHash root = vllm_root_hash("0");
  EXPECT_EQ(hex(root), "4e1195df020de59e0d65a33a4279f1183e7ae4e5d980e309f8b55adff2e61c3e");
  const VllmBlockHash b = vllm_block_hash(root, first16());
  EXPECT_EQ(hex(b), "d830de3d42c00f25a2949b5d12d98642664a44872c1614c5b0147556276afc9c");
  const std::vector<std::int32_t> widths = {300, 70000, 5, 23, 24, 255, 256, 65535, 65536, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(hex(vllm_block_hash(b, widths)), "25c75364fe0798ec92c326985de4f2e8c627ec06b4d05a9f14cce3c637b12e89");
}

TEST(VllmBlockHash, NamesFollowTheCacheAndForgetWhatLeaves) {
  VllmBlockHashes names("0");
  std::vector<std::int32_t> tokens(32);
  std::iota(tokens.begin(), tokens.end(), 0);
  const std::vector<VllmBlockHash> stored =
      names.store({.block_hashes = {11, 12}, .parent_block_hash = std::nullopt, .token_ids = tokens, .block_size = 16});
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[1], vllm_block_hash(stored[0], std::span(tokens).subspan(16)));
  ASSERT_NE(names.find(12), nullptr);
  // A child stored later chains from its parent's name.
  const auto child =
      names.store({.block_hashes = {13}, .parent_block_hash = 12, .token_ids = first16(), .block_size = 16});
  ASSERT_EQ(child.size(), 1u);
  EXPECT_EQ(child[0], vllm_block_hash(stored[1], first16()));
  EXPECT_EQ(names.remove({.block_hashes = {12, 99}}), std::vector<VllmBlockHash>{stored[1]});
  EXPECT_EQ(names.find(12), nullptr);
  // A run whose parent is no longer known gets no names (it is not reported).
  EXPECT_TRUE(
      names.store({.block_hashes = {14}, .parent_block_hash = 12, .token_ids = first16(), .block_size = 16}).empty());
}

}  // namespace
}  // namespace kiln::server
