// The BPE model of HF `tokenizers` (models/bpe): vocabulary, merge ranks, and the merge loop
// (a min-heap on (rank, position) over a linked list of symbols, O(n log n) per word), with
// byte_fallback, unk / fuse_unk, continuing_subword_prefix, end_of_word_suffix, ignore_merges.
// Immutable after loading; encode-time state lives on the stack and in per-thread caches.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_tables.hpp"
#include "tokenizer/merge_table.hpp"
#include "tokenizer/word_cache.hpp"
#include "util/json.hpp"

namespace kiln::tok {

class BpeModel {
 public:
  // `spec` is tokenizer.json's "model" object (type BPE) and `tables` its vocab and merges as
  // read_tokenizer_json captured them; errors name `origin`.
  BpeModel(const Json& spec, BpeTables tables, const std::string& origin);
  BpeModel(const BpeModel&) = delete;  // id_to_token_ points into token_to_id_
  BpeModel& operator=(const BpeModel&) = delete;

  // Switches the model to read pieces as raw bytes instead of byte-level alphabet strings (the
  // ByteLevel pre-tokenizer then skips its mapping). Only possible when every one of the 256
  // byte-level characters is in the vocabulary and there is no prefix or suffix.
  bool enable_raw_byte_input();

  // The calling thread's cache of this model's words (look it up once per text, not per piece).
  WordCache& thread_cache() const;
  // Appends the ids of one pre-token.
  void tokenize(std::string_view piece, std::vector<std::int32_t>& ids, WordCache& cache) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  // The vocabulary string of `id`, or nullptr when no entry has that id.
  const std::string* id_to_token(std::int32_t id) const;
  // Number of vocabulary entries (HF get_vocab_size without added tokens).
  std::int32_t size() const { return static_cast<std::int32_t>(token_to_id_.size()); }
  // SHA-256 (hex) of the vocabulary (ordered by id, then token) and the merges (by rank): the
  // same for the same content however the file orders or spells it.
  const std::string& content_digest() const { return content_digest_; }

 private:
  struct Symbol {
    std::int32_t id;
    std::int32_t prev;
    std::int32_t next;
    std::uint32_t byte_length;  // 0 once merged into its left neighbour
  };

  void index_ids();
  // Resolves the merge strings to ids; also hashes (vocab, merges) into content_digest_.
  void load_merges(const MergeList& merges, const std::string& origin);
  void compute_content_digest(const std::vector<std::uint64_t>& merge_pairs);

  // Initial symbols of a word, as HF merge_word builds them (chars, prefix/suffix, byte
  // fallback, unk fusing).
  void initial_symbols(std::string_view word, std::vector<Symbol>& symbols) const;
  void raw_byte_symbols(std::string_view bytes, std::vector<Symbol>& symbols) const;
  void merge_all(std::vector<Symbol>& symbols) const;
  void tokenize_uncached(std::string_view piece, std::vector<std::int32_t>& ids) const;

  VocabTable token_to_id_;
  std::vector<const std::string*> id_to_token_;  // [max id + 1] tokens of token_to_id_, null if none
  MergeTable merges_;
  std::optional<std::string> unk_token_;
  std::optional<std::string> continuing_subword_prefix_;
  std::optional<std::string> end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;

  std::array<std::int32_t, 256> fallback_ids_{};  // id of "<0xXX>" per byte, -1 when missing
  bool raw_bytes_ = false;
  VocabTable raw_token_to_id_;  // byte strings of the entries written in the byte-level alphabet
  std::array<std::int32_t, 256> byte_ids_{};
  std::uint64_t cache_id_;
  std::string content_digest_;
};

}  // namespace kiln::tok
