// Oracle: sha256 of the files as written (util's Sha256, itself tested against FIPS vectors);
// verify_manifest must report a changed, a missing and an unlisted file by name, and pass a
// directory that is exactly as written.
#include "ir/manifest.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "ir/ir_writer.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

void write_tiny_ir(const fs::path& dir) {
  IrWriter w(dir);
  const std::vector<float> v{1.0f, 2.0f};
  w.add_tensor(IrTensorEntry::plain("v", ElementType::kF32, {2}), {reinterpret_cast<const std::uint8_t*>(v.data()), 8});
  w.finish(parse_model_config(Json{{"architectures", {"LlamaForCausalLM"}},
                                   {"hidden_size", 8},
                                   {"num_hidden_layers", 1},
                                   {"num_attention_heads", 2},
                                   {"intermediate_size", 16},
                                   {"vocab_size", 10}},
                              "test"),
           "kiln test");
  write_file_atomic(dir / "tokenizer.json", "{}");
  write_manifest(dir, {{"command_line", {"kiln", "export"}}});
}

TEST(Manifest, ListsEveryFileWithItsDigest) {
  testing::TempDir dir;
  write_tiny_ir(dir.path());
  const Json m = read_json_file(dir.path() / "manifest.json");
  EXPECT_EQ(m["command_line"][1], "export");
  ASSERT_EQ(m["files"].size(), 3u);  // model.bin, model.json, tokenizer.json
  for (const char* name : {"model.bin", "model.json", "tokenizer.json"}) {
    EXPECT_EQ(m["files"][name]["sha256"], sha256_file(dir.path() / name)) << name;
    EXPECT_EQ(m["files"][name]["bytes"], fs::file_size(dir.path() / name)) << name;
  }
  EXPECT_TRUE(verify_manifest(dir.path()).ok());
}

TEST(Manifest, VerifyNamesEveryMismatch) {
  testing::TempDir dir;
  write_tiny_ir(dir.path());
  write_file_atomic(dir.path() / "tokenizer.json", "{ }");
  write_file_atomic(dir.path() / "extra.txt", "x");
  std::fstream f(dir.path() / "model.bin", std::ios::in | std::ios::out | std::ios::binary);
  f.put('\x7f');
  f.close();
  const VerifyReport report = verify_manifest(dir.path());
  ASSERT_FALSE(report.ok());
  std::string all;
  for (const auto& p : report.problems) all += p + "\n";
  EXPECT_NE(all.find("tokenizer.json: sha256"), std::string::npos) << all;
  EXPECT_NE(all.find("extra.txt: not listed"), std::string::npos) << all;
  EXPECT_NE(all.find("model.bin: sha256"), std::string::npos) << all;
  EXPECT_NE(all.find("tensor 'v'"), std::string::npos) << all;  // the IR's own checksum too
  fs::remove(dir.path() / "tokenizer.json");
  all.clear();
  for (const auto& p : verify_manifest(dir.path()).problems) all += p + "\n";
  EXPECT_NE(all.find("tokenizer.json: missing"), std::string::npos) << all;
}

}  // namespace
}  // namespace kiln::ir
