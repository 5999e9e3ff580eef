// Decoders: turn the vocabulary strings of ids back into text, as HF `tokenizers` does
// (ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, BPEDecoder, CTC,
// Sequence), but as streaming stages: every step consumes its input incrementally and emits
// only what later input cannot change, so decode() and the incremental detokenizer are one code
// path and their outputs agree by construction.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace kiln::tok {

// One running stage. Before the first fusing step, stages pass whole tokens (on_token); after
// it, there is one growing string and stages pass chunks of it (on_text). Chunks always end on
// a UTF-8 character boundary. finish() flushes held-back state and finishes the next stage.
class DecodeStage {
 public:
  explicit DecodeStage(DecodeStage* next) : next_(next) {}
  virtual ~DecodeStage() = default;
  virtual void on_token(std::string_view token);
  virtual void on_text(std::string_view text);
  virtual void finish() {
    if (next_ != nullptr) next_->finish();
  }

 protected:
  DecodeStage* next_;
};

// The immutable description of one decoder step from tokenizer.json.
class DecoderStep {
 public:
  virtual ~DecoderStep() = default;
  // True for steps whose output is one string however many tokens came in (Fuse, ByteLevel).
  virtual bool fuses() const { return false; }
  // The stage that processes the token list.
  virtual std::unique_ptr<DecodeStage> token_stage(DecodeStage& next) const = 0;
  // The stage that processes the single fused string as a stream, or nullptr when the step
  // cannot stream it (the pipeline then buffers the string and runs token_stage on it at the end).
  virtual std::unique_ptr<DecodeStage> text_stage(DecodeStage& next) const { return nullptr; }
  // Rewrites one token into the bytes it stands for in the middle of a text, for matching
  // tokens against a byte-level grammar; false when the step cannot say for a token alone
  // (WordPiece, CTC, a regex Replace).
  virtual bool to_token_bytes(std::string& token) const { return false; }
};

// The steps of a tokenizer.json "decoder" object, a Sequence flattened.
std::vector<std::unique_ptr<DecoderStep>> make_decoder_steps(const Json& spec, const std::string& origin);

// Strip, Replace, WordPiece, BPEDecoder and CTC (decoders_edit.cpp); unknown types fail here.
std::unique_ptr<DecoderStep> make_editing_decoder_step(const JsonFields& fields, const std::string& type,
                                                       const std::string& origin);

}  // namespace kiln::tok
