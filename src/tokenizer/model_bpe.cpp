// BPE as HF `tokenizers` implements it (models/bpe/model.rs and word.rs), step for step, so
// ties, stale heap entries, byte fallback order and unk fusing give the same ids.
#include "tokenizer/model_bpe.hpp"

#include <algorithm>

#include "tokenizer/byte_level_alphabet.hpp"
#include "tokenizer/unicode.hpp"
#include "tokenizer/word_cache.hpp"
#include "util/sha256.hpp"

namespace kiln::tok {
namespace {

std::optional<std::string> optional_string(const JsonFields& fields, std::string_view key) {
  return fields.get_optional<std::string>(key);
}

struct Merge {
  std::uint32_t rank;
  std::int32_t pos;
  std::int32_t merged_id;
  // std heaps pop the largest: inverted so the lowest rank, then the lowest position, wins.
  bool operator<(const Merge& other) const { return rank != other.rank ? rank > other.rank : pos > other.pos; }
};

}  // namespace

BpeModel::BpeModel(const Json& spec, BpeTables tables, const std::string& origin) : cache_id_(next_model_id()) {
  const JsonFields fields(spec, origin);
  if (const auto dropout = fields.get_optional<double>("dropout"); dropout && *dropout > 0.0) {
    fail(ErrorKind::kUnsupported,
         "{}: BPE dropout {} is not supported (inference needs "
         "deterministic ids; set it to null)",
         origin, *dropout);
  }
  unk_token_ = optional_string(fields, "unk_token");
  continuing_subword_prefix_ = optional_string(fields, "continuing_subword_prefix");
  end_of_word_suffix_ = optional_string(fields, "end_of_word_suffix");
  fuse_unk_ = fields.get_or<bool>("fuse_unk", false);
  byte_fallback_ = fields.get_or<bool>("byte_fallback", false);
  ignore_merges_ = fields.get_or<bool>("ignore_merges", false);
  if (!spec.contains("vocab") || !spec.contains("merges")) {
    fail("{}: BPE model needs both 'vocab' and 'merges'", origin);
  }
  // The reader captures an object vocab and an array of merges; anything else stayed in `spec`.
  if (!tables.has_vocab) fail("{}.vocab: must be an object of token -> id", origin);
  if (!tables.has_merges) fail("{}.merges: must be an array", origin);
  token_to_id_ = std::move(tables.vocab);
  index_ids();
  load_merges(tables.merges, origin + ".merges");
  for (int b = 0; b < 256; ++b) {
    fallback_ids_[static_cast<std::size_t>(b)] = token_to_id_.find(fmt::format("<0x{:02X}>", b)).value_or(-1);
  }
}

void BpeModel::index_ids() {
  std::int32_t max_id = -1;
  for (std::size_t entry = 0; entry < token_to_id_.size(); ++entry) max_id = std::max(max_id, token_to_id_.id(entry));
  // Two tokens with one id: the later in the file names it (HF picks one by hash order).
  id_to_token_.assign(static_cast<std::size_t>(max_id + 1), nullptr);
  for (std::size_t entry = 0; entry < token_to_id_.size(); ++entry) {
    id_to_token_[static_cast<std::size_t>(token_to_id_.id(entry))] = &token_to_id_.token(entry);
  }
}

void BpeModel::load_merges(const MergeList& merges, const std::string& origin) {
  merges_ = MergeTable(merges.size());
  std::vector<std::uint64_t> pairs;  // [merges] (left id << 32 | right id), for the digest
  pairs.reserve(merges.size());
  const std::size_t prefix_length = continuing_subword_prefix_ ? continuing_subword_prefix_->size() : 0;
  constexpr std::size_t kBatch = VocabTable::kBatch;
  std::string merged[kBatch];
  std::size_t hashes[kBatch][3];  // left, right, merged
  for (std::size_t first = 0; first < merges.size(); first += kBatch) {
    const std::size_t count = std::min(kBatch, merges.size() - first);
    // Hash and prefetch the whole batch first: the lookups are cache misses that then overlap.
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view left = merges.left(first + i), right = merges.right(first + i);
      // HF drops the prefix length from the right token without checking it is there.
      merged[i].assign(left).append(right.substr(std::min(prefix_length, right.size())));
      const std::string_view parts[3] = {left, right, merged[i]};
      for (int k = 0; k < 3; ++k) token_to_id_.prefetch(hashes[i][k] = VocabTable::hash_of(parts[k]));
    }
    std::int32_t ids[kBatch][3];  // left, right, merged
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t rank = first + i;
      const std::string_view left = merges.left(rank), right = merges.right(rank);
      const auto left_id = token_to_id_.find(left, hashes[i][0]);
      const auto right_id = token_to_id_.find(right, hashes[i][1]);
      const auto merged_id = token_to_id_.find(merged[i], hashes[i][2]);
      if (!left_id || !right_id || !merged_id) {
        fail("{}[{}]: merge (\"{}\", \"{}\") uses token \"{}\" that is not in the vocabulary", origin, rank, left,
             right,
             !left_id    ? left
             : !right_id ? right
                         : std::string_view(merged[i]));
      }
      ids[i][0] = *left_id, ids[i][1] = *right_id, ids[i][2] = *merged_id;
      merges_.prefetch(*left_id, *right_id);
    }
    for (std::size_t i = 0; i < count; ++i) {
      merges_.insert_or_assign(ids[i][0], ids[i][1], static_cast<std::uint32_t>(first + i), ids[i][2]);
      pairs.push_back(std::uint64_t{static_cast<std::uint32_t>(ids[i][0])} << 32 |
                      static_cast<std::uint32_t>(ids[i][1]));
    }
  }
  compute_content_digest(pairs);
}

void BpeModel::compute_content_digest(const std::vector<std::uint64_t>& merge_pairs) {
  // Entries by (id, token); files saved by HF are already in id order, so the sort is skipped.
  std::vector<std::uint32_t> order(token_to_id_.size());  // [entries]
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    const auto id_a = token_to_id_.id(a), id_b = token_to_id_.id(b);
    return id_a != id_b ? id_a < id_b : token_to_id_.token(a) < token_to_id_.token(b);
  };
  if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
  std::string bytes;
  auto append_u32 = [&bytes](std::uint32_t v) {
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<char>((v >> shift) & 0xFF));
  };
  for (const std::uint32_t entry : order) {
    const std::string& token = token_to_id_.token(entry);
    append_u32(static_cast<std::uint32_t>(token_to_id_.id(entry)));
    append_u32(static_cast<std::uint32_t>(token.size()));
    bytes += token;
  }
  append_u32(static_cast<std::uint32_t>(merge_pairs.size()));
  for (const std::uint64_t pair : merge_pairs) {
    append_u32(static_cast<std::uint32_t>(pair >> 32));
    append_u32(static_cast<std::uint32_t>(pair));
  }
  content_digest_ =
      sha256_hex(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

bool BpeModel::enable_raw_byte_input() {
  if (continuing_subword_prefix_ || end_of_word_suffix_) return false;
  const auto& alphabet = ByteLevelAlphabet::get();
  for (int b = 0; b < 256; ++b) {
    const auto id = token_to_id_.find(alphabet.utf8_of(static_cast<std::uint8_t>(b)));
    if (!id) return false;
    byte_ids_[static_cast<std::size_t>(b)] = *id;
  }
  raw_token_to_id_.reserve(token_to_id_.size());
  std::pair<std::string, std::int32_t> batch[VocabTable::kBatch];
  std::size_t count = 0;
  for (std::size_t entry = 0; entry < token_to_id_.size(); ++entry) {
    // Entries with characters outside the alphabet can never match a mapped piece; the mapping
    // is one-to-one, so distinct entries never collide.
    if (auto bytes = alphabet.decode(token_to_id_.token(entry))) {
      batch[count++] = {std::move(*bytes), token_to_id_.id(entry)};
      if (count == VocabTable::kBatch) raw_token_to_id_.insert_batch(std::span(batch, count)), count = 0;
    }
  }
  raw_token_to_id_.insert_batch(std::span(batch, count));
  raw_bytes_ = true;
  return true;
}

std::optional<std::int32_t> BpeModel::token_to_id(std::string_view token) const { return token_to_id_.find(token); }

const std::string* BpeModel::id_to_token(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size()) return nullptr;
  return id_to_token_[static_cast<std::size_t>(id)];
}

WordCache& BpeModel::thread_cache() const { return WordCache::for_thread(cache_id_); }

void BpeModel::tokenize(std::string_view piece, std::vector<std::int32_t>& ids, WordCache& cache) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (const auto id = (raw_bytes_ ? raw_token_to_id_ : token_to_id_).find(piece)) {
      ids.push_back(*id);
      return;
    }
  }
  if (const auto* hit = cache.find(piece)) {
    ids.insert(ids.end(), hit->begin(), hit->end());
    return;
  }
  const std::size_t first = ids.size();
  tokenize_uncached(piece, ids);
  cache.insert(piece, std::span<const std::int32_t>(ids).subspan(first));
}

void BpeModel::tokenize_uncached(std::string_view piece, std::vector<std::int32_t>& ids) const {
  thread_local std::vector<Symbol> symbols;
  symbols.clear();
  if (raw_bytes_) {
    raw_byte_symbols(piece, symbols);
  } else {
    initial_symbols(piece, symbols);
  }
  merge_all(symbols);
  for (const Symbol& s : symbols) {
    if (s.byte_length != 0) ids.push_back(s.id);
  }
}

void BpeModel::raw_byte_symbols(std::string_view bytes, std::vector<Symbol>& symbols) const {
  const auto n = static_cast<std::int32_t>(bytes.size());
  symbols.reserve(bytes.size());
  for (std::int32_t i = 0; i < n; ++i) {
    symbols.push_back(
        {byte_ids_[static_cast<std::uint8_t>(bytes[static_cast<std::size_t>(i)])], i - 1, i + 1 < n ? i + 1 : -1, 1});
  }
}

void BpeModel::initial_symbols(std::string_view word, std::vector<Symbol>& symbols) const {
  auto add = [&symbols](std::int32_t id, std::uint32_t length) {
    const auto index = static_cast<std::int32_t>(symbols.size());
    if (!symbols.empty()) symbols.back().next = index;
    symbols.push_back({id, index - 1, -1, length});
  };
  std::int32_t pending_unk_id = -1;  // an unk not added yet (fuse_unk grows it), and its length
  std::uint32_t pending_unk_length = 0;
  auto flush_unk = [&] {
    if (pending_unk_id >= 0) add(pending_unk_id, pending_unk_length);
    pending_unk_id = -1;
  };
  std::string key;
  std::size_t pos = 0;
  while (pos < word.size()) {
    const std::size_t begin = pos;
    pos = std::min(word.size(), pos + utf8_sequence_length(static_cast<unsigned char>(word[pos])));
    const auto char_length = static_cast<std::uint32_t>(pos - begin);
    key.clear();
    if (begin != 0 && continuing_subword_prefix_) key += *continuing_subword_prefix_;
    key += word.substr(begin, char_length);
    if (pos == word.size() && end_of_word_suffix_) key += *end_of_word_suffix_;

    if (const auto id = token_to_id_.find(key)) {
      flush_unk();
      add(*id, char_length);
      continue;
    }
    if (byte_fallback_) {
      // All bytes of `key` (prefix and suffix included) must have a <0xXX> token.
      const bool all_bytes_known =
          std::all_of(key.begin(), key.end(), [&](char b) { return fallback_ids_[static_cast<std::uint8_t>(b)] >= 0; });
      if (all_bytes_known) {
        // NOTE: HF adds these before a pending unk is flushed; kept for identical ids.
        for (const char b : key) add(fallback_ids_[static_cast<std::uint8_t>(b)], 1);
        continue;
      }
    }
    if (!unk_token_) continue;  // HF silently drops the character
    const auto unk_id = token_to_id_.find(*unk_token_);
    if (!unk_id) {
      fail("tokenizer.json: model.unk_token \"{}\" is not in the vocabulary", *unk_token_);
    }
    if (pending_unk_id >= 0 && fuse_unk_) {
      pending_unk_length += char_length;
    } else {
      flush_unk();
      pending_unk_id = *unk_id;
      pending_unk_length = char_length;
    }
  }
  flush_unk();
}

void BpeModel::merge_all(std::vector<Symbol>& symbols) const {
  if (symbols.size() < 2) return;
  thread_local std::vector<Merge> queue;  // a binary heap (std::push_heap / pop_heap)
  queue.clear();
  auto push = [](const Merge& m) {
    queue.push_back(m);
    std::push_heap(queue.begin(), queue.end());
  };
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const auto* m = merges_.find(symbols[i].id, symbols[i + 1].id)) {
      queue.push_back({m->rank, static_cast<std::int32_t>(i), m->merged_id});
    }
  }
  std::make_heap(queue.begin(), queue.end());
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end());
    const Merge top = queue.back();
    queue.pop_back();
    Symbol& current = symbols[static_cast<std::size_t>(top.pos)];
    if (current.byte_length == 0 || current.next == -1) continue;
    const Symbol right = symbols[static_cast<std::size_t>(current.next)];
    // Skip stale entries: the pair at this position changed since the entry was pushed.
    const auto* still = merges_.find(current.id, right.id);
    if (still == nullptr || still->merged_id != top.merged_id) continue;

    symbols[static_cast<std::size_t>(current.next)].byte_length = 0;
    current.id = top.merged_id;
    current.byte_length += right.byte_length;
    current.next = right.next;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = top.pos;

    if (current.prev >= 0) {
      const Symbol& previous = symbols[static_cast<std::size_t>(current.prev)];
      if (const auto* m = merges_.find(previous.id, current.id)) {
        push({m->rank, current.prev, m->merged_id});
      }
    }
    if (current.next >= 0) {
      if (const auto* m = merges_.find(current.id, symbols[static_cast<std::size_t>(current.next)].id)) {
        push({m->rank, top.pos, m->merged_id});
      }
    }
  }
}

}  // namespace kiln::tok
