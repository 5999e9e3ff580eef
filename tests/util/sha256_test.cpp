// Oracle: the FIPS 180-2 test vectors.
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.hpp"

namespace kiln {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(std::string_view("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(std::string_view("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  Sha256 h;
  h.update(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkl"));
  h.update(std::string_view("jklmklmnlmnomnopnopq"));
  EXPECT_EQ(h.hex_digest(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, FileEqualsBytes) {
  testing::TempDir dir;
  const auto path = dir.path() / "x.bin";
  std::string payload(3 << 20, 'q');  // larger than the 1 MiB read buffer
  std::ofstream(path, std::ios::binary) << payload;
  EXPECT_EQ(sha256_file(path), sha256_hex(std::string_view(payload)));
  EXPECT_KILN_ERROR(sha256_file(dir.path() / "missing"), "missing");
}

}  // namespace
}  // namespace kiln
