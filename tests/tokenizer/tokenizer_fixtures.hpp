// Test helpers for tokenizer fixtures: folders whose tokenizer.json is stored gzipped are
// unpacked (with zlib) into a temporary folder before Tokenizer::from_dir reads them, and
// JSON-lines goldens are read from plain or gzipped files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln::testing {

// The whole content of a file, gunzipped when its name ends in .gz.
std::string read_maybe_gzipped(const std::filesystem::path& path);

// A folder Tokenizer::from_dir can read for the fixture folder `source`: `source` itself when
// it has tokenizer.json, else a copy in `scratch` with tokenizer.json.gz unpacked.
std::filesystem::path usable_tokenizer_dir(const std::filesystem::path& source, const TempDir& scratch);

// The records of a JSON-lines file (plain or .gz).
std::vector<Json> read_json_lines(const std::filesystem::path& path);

// tests/data/tokenizers/<name>, or $KILN_EXTERNAL_FIXTURES/tokenizers/<name> for fixtures that
// may not be committed; nullopt when neither exists.
std::optional<std::filesystem::path> tokenizer_fixture(const std::string& name);

}  // namespace kiln::testing
