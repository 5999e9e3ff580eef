// The SAX handler behind read_tokenizer_json: a DOM builder that steps aside for root.model.vocab
// (an object) and root.model.merges (an array) and fills BpeTables from their events instead.
// NOTE: a DOM parse of the Llama 3 file built ~700k nodes and then threw them away; this keeps
// only the tables the model needs.
#include "tokenizer/tokenizer_json_reader.hpp"

#include <algorithm>
#include <limits>

namespace kiln::tok {
namespace {

using DomBuilder = nlohmann::detail::json_sax_dom_parser<Json>;

class TokenizerJsonHandler {
 public:
  TokenizerJsonHandler(TokenizerJson& out, const std::string& origin, std::size_t file_bytes)
      : out_(out), origin_(origin), file_bytes_(file_bytes), dom_(out.root) {}

  bool null() {
    return scalar([] { return std::string("null"); }, [&] { return dom_.null(); });
  }
  bool boolean(bool value) {
    return scalar([&] { return std::string(value ? "true" : "false"); }, [&] { return dom_.boolean(value); });
  }
  bool number_integer(Json::number_integer_t value) {
    if (mode_ == Mode::kVocab && value >= 0) return vocab_id(static_cast<std::uint64_t>(value));
    return scalar([&] { return std::to_string(value); }, [&] { return dom_.number_integer(value); });
  }
  bool number_unsigned(Json::number_unsigned_t value) {
    if (mode_ == Mode::kVocab) return vocab_id(value);
    return scalar([&] { return std::to_string(value); }, [&] { return dom_.number_unsigned(value); });
  }
  bool number_float(Json::number_float_t value, const std::string& text) {
    return scalar([&] { return text; }, [&] { return dom_.number_float(value, text); });
  }
  bool string(std::string& value) {
    if (mode_ == Mode::kMerges) return legacy_merge(value);
    if (mode_ == Mode::kMergePair) return merge_pair_part(value);
    return scalar([&] { return Json(value).dump(); }, [&] { return dom_.string(value); });
  }
  bool binary(Json::binary_t& value) { return dom_.binary(value); }

  bool start_object(std::size_t size) {
    if (mode_ != Mode::kDom) fail_captured("an object");
    if (pending_ == Mode::kVocab) return begin_capture(Mode::kVocab);
    pending_ = Mode::kDom;
    ++depth_;
    if (depth_ == 2) in_model_ = root_key_ == "model";
    return dom_.start_object(size);
  }
  bool key(std::string& name) {
    if (mode_ == Mode::kVocab) {
      token_ = std::move(name);
      return true;
    }
    if (depth_ == 1) root_key_ = name;
    if (depth_ == 2 && in_model_) {
      pending_ = name == "vocab" ? Mode::kVocab : name == "merges" ? Mode::kMerges : Mode::kDom;
    }
    return dom_.key(name);
  }
  bool end_object() {
    if (mode_ == Mode::kVocab) return end_capture();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t size) {
    if (mode_ == Mode::kMerges) {
      mode_ = Mode::kMergePair;
      pair_size_ = 0;
      return true;
    }
    if (mode_ != Mode::kDom) fail_captured("an array");
    if (pending_ == Mode::kMerges) return begin_capture(Mode::kMerges);
    pending_ = Mode::kDom;
    ++depth_;
    return dom_.start_array(size);
  }
  bool end_array() {
    if (mode_ == Mode::kMergePair) return end_merge_pair();
    if (mode_ == Mode::kMerges) return end_capture();
    --depth_;
    return dom_.end_array();
  }

  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    fail("{}: invalid JSON at byte {}: {}", origin_, byte, e.what());
  }

 private:
  enum class Mode { kDom, kVocab, kMerges, kMergePair };

  // `shown` prints the value for an error message; only called on the error path.
  template <typename Shown, typename AddToDom>
  bool scalar(Shown shown, AddToDom add) {
    if (mode_ != Mode::kDom) fail_captured(shown());
    pending_ = Mode::kDom;
    return add();
  }

  bool begin_capture(Mode mode) {
    mode_ = mode;
    pending_ = Mode::kDom;
    if (mode == Mode::kVocab) {
      out_.bpe.has_vocab = true;
      out_.bpe.vocab = VocabTable();
      // A vocabulary entry ("token": id,) takes ~20 bytes and the merges about as much again:
      // reserving for half the file skips the early rehashes without a large overshoot. Capped
      // at 1M entries (above the largest real vocabularies) so a huge file reserves nothing silly.
      out_.bpe.vocab.reserve(std::min<std::size_t>(file_bytes_ / 40, std::size_t{1} << 20));
    } else {
      out_.bpe.has_merges = true;
      out_.bpe.merges = MergeList();
    }
    return true;
  }
  bool end_capture() {
    if (mode_ == Mode::kVocab) flush_vocab();
    mode_ = Mode::kDom;
    return dom_.null();  // the placeholder: the field exists, its content is in out_.bpe
  }

  bool vocab_id(std::uint64_t id) {
    if (id > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
      fail_vocab_id(std::to_string(id));
    }
    pending_entries_[num_pending_++] = {std::move(token_), static_cast<std::int32_t>(id)};
    if (num_pending_ == VocabTable::kBatch) flush_vocab();
    return true;
  }
  void flush_vocab() {
    out_.bpe.vocab.insert_batch(std::span(pending_entries_, num_pending_));
    num_pending_ = 0;
  }
  [[noreturn]] void fail_vocab_id(const std::string& shown) const {
    fail("{}: model.vocab: id of token \"{}\" must be a non-negative 32-bit integer, got {}", origin_, token_, shown);
  }

  bool legacy_merge(const std::string& line) {
    const auto space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      fail("{}: model.merges[{}]: merge \"{}\" must be two tokens separated by one space", origin_,
           out_.bpe.merges.size(), line);
    }
    const std::string_view view = line;
    out_.bpe.merges.add(view.substr(0, space), view.substr(space + 1));
    return true;
  }
  bool merge_pair_part(std::string& part) {
    if (pair_size_ == 2) fail_merge("an array of more than two strings");
    pair_[pair_size_++] = std::move(part);
    return true;
  }
  bool end_merge_pair() {
    if (pair_size_ != 2) fail_merge(fmt::format("an array of {} string(s)", pair_size_));
    out_.bpe.merges.add(pair_[0], pair_[1]);
    mode_ = Mode::kMerges;
    return true;
  }
  [[noreturn]] void fail_merge(const std::string& shown) const {
    fail("{}: model.merges[{}]: merge must be \"a b\" or [\"a\", \"b\"], got {}", origin_, out_.bpe.merges.size(),
         shown);
  }

  // A value where a captured field allows none of its kind.
  [[noreturn]] void fail_captured(const std::string& shown) const {
    if (mode_ == Mode::kVocab) fail_vocab_id(shown);
    fail_merge(mode_ == Mode::kMergePair ? "an array holding " + shown : shown);
  }

  TokenizerJson& out_;
  const std::string& origin_;
  std::size_t file_bytes_;
  DomBuilder dom_;
  Mode mode_ = Mode::kDom;     // where events go now
  Mode pending_ = Mode::kDom;  // the capture the next value starts, if it has the right shape
  int depth_ = 0;              // containers open in the DOM (captured ones not counted)
  std::string root_key_;       // the last key of the root object
  bool in_model_ = false;      // the open depth-2 object is root.model
  std::string token_;          // the vocab key whose id comes next
  std::pair<std::string, std::int32_t> pending_entries_[VocabTable::kBatch];  // not inserted yet
  std::size_t num_pending_ = 0;
  std::string pair_[2];  // strings of the ["a", "b"] merge being read
  int pair_size_ = 0;
};

}  // namespace

TokenizerJson read_tokenizer_json(std::string_view text, const std::string& origin) {
  if (text.size() > std::numeric_limits<std::uint32_t>::max()) {
    fail("{}: {} bytes is more than the 4 GiB a tokenizer.json may have", origin, text.size());
  }
  TokenizerJson out;
  TokenizerJsonHandler handler(out, origin, text.size());
  try {
    Json::sax_parse(text.begin(), text.end(), &handler);
  } catch (const Json::exception& e) {  // e.g. a number too large for any C++ type
    fail("{}: invalid JSON: {}", origin, e.what());
  }
  return out;
}

}  // namespace kiln::tok
