// HF processors/*.rs for one sequence: the "single" template's pieces in order.
#include "tokenizer/post_processor.hpp"

#include <optional>

namespace kiln::tok {
namespace {

// A single-sequence template: each entry is either the sequence itself or a run of ids.
class Template final : public PostProcessor {
 public:
  struct Piece {
    bool is_sequence;
    std::vector<std::int32_t> ids;
  };
  explicit Template(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}
  void process(std::vector<std::int32_t>& ids) const override {
    std::vector<std::int32_t> out;
    out.reserve(ids.size() + 4);
    for (const Piece& piece : pieces_) {
      if (piece.is_sequence) {
        out.insert(out.end(), ids.begin(), ids.end());
      } else {
        out.insert(out.end(), piece.ids.begin(), piece.ids.end());
      }
    }
    ids.swap(out);
  }

 private:
  std::vector<Piece> pieces_;
};

class Identity final : public PostProcessor {
 public:
  void process(std::vector<std::int32_t>&) const override {}
};

class PostProcessorSequence final : public PostProcessor {
 public:
  explicit PostProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void process(std::vector<std::int32_t>& ids) const override {
    for (const auto& step : steps_) step->process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

// {"SpecialToken": {"id": "<s>", ...}} or {"Sequence": {"id": "A", ...}}; a sequence id other
// than A belongs to the pair template only.
std::unique_ptr<PostProcessor> make_template(const Json& spec, const std::string& origin) {
  const Json& single = spec.at("single");
  const Json& special_tokens = spec.contains("special_tokens") ? spec.at("special_tokens") : Json::object();
  if (!single.is_array()) fail("{}.single: must be an array of pieces", origin);
  std::vector<Template::Piece> pieces;
  for (std::size_t i = 0; i < single.size(); ++i) {
    const Json& piece = single[i];
    const std::string where = fmt::format("{}.single[{}]", origin, i);
    if (piece.contains("Sequence")) {
      pieces.push_back({true, {}});
      continue;
    }
    if (!piece.contains("SpecialToken")) fail("{}: expected SpecialToken or Sequence, got {}", where, piece.dump());
    const auto name = piece.at("SpecialToken").value("id", std::string());
    const auto it = special_tokens.find(name);
    if (it == special_tokens.end() || !it->contains("ids") || !it->at("ids").is_array()) {
      fail("{}: special token \"{}\" is missing from {}.special_tokens", where, name, origin);
    }
    pieces.push_back({false, it->at("ids").get<std::vector<std::int32_t>>()});
  }
  return std::make_unique<Template>(std::move(pieces));
}

// BertProcessing / RobertaProcessing: "cls": ["[CLS]", 101], "sep": ["[SEP]", 102].
std::unique_ptr<PostProcessor> make_cls_sep(const Json& spec, const std::string& origin) {
  auto id_of = [&](const char* key) {
    const Json& pair = spec.at(key);
    if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number_integer()) {
      fail("{}.{}: must be [token, id], got {}", origin, key, pair.dump());
    }
    return pair[1].get<std::int32_t>();
  };
  std::vector<Template::Piece> pieces{{false, {id_of("cls")}}, {true, {}}, {false, {id_of("sep")}}};
  return std::make_unique<Template>(std::move(pieces));
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const Json& spec, const std::string& origin) {
  const JsonFields fields(spec, origin);
  const auto type = fields.get<std::string>("type");
  if (type == "TemplateProcessing") return make_template(spec, origin);
  if (type == "ByteLevel") return std::make_unique<Identity>();  // only trims offsets
  if (type == "BertProcessing" || type == "RobertaProcessing") return make_cls_sep(spec, origin);
  if (type == "Sequence") {
    const Json& list = spec.at("processors");
    if (!list.is_array()) fields.fail_field("processors", "must be an array");
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (std::size_t i = 0; i < list.size(); ++i) {
      steps.push_back(make_post_processor(list[i], fmt::format("{}.processors[{}]", origin, i)));
    }
    return std::make_unique<PostProcessorSequence>(std::move(steps));
  }
  fail(ErrorKind::kUnsupported,
       "{}: post-processor type '{}' is not supported (supported: TemplateProcessing, ByteLevel, "
       "BertProcessing, RobertaProcessing, Sequence)",
       origin, type);
}

std::unique_ptr<PostProcessor> make_bos_eos_processor(std::optional<std::int32_t> bos,
                                                      std::optional<std::int32_t> eos) {
  std::vector<Template::Piece> pieces;
  if (bos) pieces.push_back({false, {*bos}});
  pieces.push_back({true, {}});
  if (eos) pieces.push_back({false, {*eos}});
  return std::make_unique<Template>(std::move(pieces));
}

}  // namespace kiln::tok
