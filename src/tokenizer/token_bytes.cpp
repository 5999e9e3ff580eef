#include "tokenizer/token_bytes.hpp"

#include "tokenizer/tokenizer_access.hpp"
#include "tokenizer/tokenizer_impl.hpp"
#include "util/error.hpp"

namespace kiln::tok {

std::vector<std::optional<std::string>> token_bytes(const Tokenizer& tokenizer) {
  const TokenizerImpl& impl = TokenizerAccess::impl(tokenizer);
  if (impl.decoder_steps.empty()) {
    fail(ErrorKind::kUnsupported, "tokenizer.json: a tokenizer without a decoder cannot be used for structured output");
  }
  std::vector<std::optional<std::string>> out(static_cast<std::size_t>(impl.vocab_size));
  for (std::int32_t id = 0; id < impl.vocab_size; ++id) {
    const std::string* token = impl.decode_string(id);
    if (token == nullptr) continue;
    std::string bytes = *token;
    if (impl.added.decode_string(id) == nullptr) {
      for (const auto& step : impl.decoder_steps) {
        if (!step->to_token_bytes(bytes)) {
          fail(ErrorKind::kUnsupported,
               "tokenizer.json: its decoder cannot say what one token stands for alone, which structured output "
               "needs (supported: ByteLevel, ByteFallback, Metaspace, Replace, Fuse, Strip)");
        }
      }
    }
    out[static_cast<std::size_t>(id)] = std::move(bytes);
  }
  return out;
}

}  // namespace kiln::tok
