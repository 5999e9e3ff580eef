// Reads tokenizer.json in one pass of nlohmann's SAX parser: model.vocab and model.merges (99% of
// a large file) go straight into BpeTables; everything else becomes a small JSON tree.
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/bpe_tables.hpp"
#include "util/json.hpp"

namespace kiln::tok {

struct TokenizerJson {
  // The document with model.vocab / model.merges replaced by null when they went to `bpe`, so
  // the model object still shows that it has them.
  Json root;
  BpeTables bpe;
};

// Errors (syntax, a vocabulary id that is not a non-negative 32-bit integer, a malformed merge)
// name `origin` and the field.
TokenizerJson read_tokenizer_json(std::string_view text, const std::string& origin);

}  // namespace kiln::tok
