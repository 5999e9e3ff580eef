// Normalizers: rewrite the text between added tokens before pre-tokenization, exactly as HF
// `tokenizers` does (NFC/NFD/NFKC/NFKD, Lowercase, Prepend, Replace, Strip, StripAccents, Nmt,
// BertNormalizer, ByteLevel, Sequence). Text in and out is valid UTF-8. Offsets are not tracked.
#pragma once

#include <memory>
#include <string>

#include "util/json.hpp"

namespace kiln::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

// Builds the normalizer described by `spec` (a tokenizer.json "normalizer" object). An unknown
// or unsupported type is a kiln::Error naming `origin` and the type.
std::unique_ptr<Normalizer> make_normalizer(const Json& spec, const std::string& origin);

}  // namespace kiln::tok
