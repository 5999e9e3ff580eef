// LLMPipeline end to end on the golden checkpoints. Oracles: transformers' greedy continuations
// (golden.json) for plain prompts, batches and streaming; the same text through every streamer
// form; stop strings cut the golden text at their first occurrence; a chat turn that finds the
// previous turns' KV in the prefix cache generates exactly what a stateless call over the whole
// history does, while prefilling only the new tokens and the partial block before them (with a
// draft model, in both models, with plain decoding's answers); CANCEL drops a turn from the
// history, STOP keeps it.
// Tests against transformers' text run on the REFERENCE device (exact); the CPU default's f16
// KV cache flips the nearly tied logits of these random-weight checkpoints.
#include "kiln/llm_pipeline.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../models/golden_checkpoint.hpp"
#include "test_models.hpp"

namespace kiln {
namespace {

GenerationConfig greedy(std::int64_t n) { return testing::greedy_config(n); }

LLMPipeline pipeline(const std::string& name = "llama3_tiny", const PipelineProperties& p = {},
                     const std::string& device = "CPU") {
  return LLMPipeline(testing::checkpoint_dir(name), device, p);
}

// The exact path, for tests whose oracle is transformers' output.
LLMPipeline reference_pipeline(const std::string& name = "llama3_tiny", const PipelineProperties& p = {}) {
  return pipeline(name, p, "REFERENCE");
}

TEST(LLMPipeline, GreedyTextMatchesTransformers) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  LLMPipeline pipe = reference_pipeline();
  for (const auto& p : g.prompts) {
    const DecodedResults r = pipe.generate(p.prompt, greedy(32));
    ASSERT_EQ(r.texts.size(), 1u);
    EXPECT_EQ(r.texts[0], p.greedy_text) << p.prompt;
    EXPECT_EQ(r.tokens[0], p.greedy_ids);
    EXPECT_EQ(r.finish_reasons[0], GenerationFinishReason::LENGTH);
  }
  // A batch gives each prompt its own continuation.
  std::vector<std::string> prompts;
  for (const auto& p : g.prompts) prompts.push_back(p.prompt);
  const DecodedResults batch = pipe.generate(prompts, greedy(32));
  ASSERT_EQ(batch.texts.size(), prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(batch.texts[i], g.prompts[i].greedy_text);
}

TEST(LLMPipeline, TokenIdPromptsGiveTransformersGreedy) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  LLMPipeline pipe = reference_pipeline();
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& p : g.prompts) ids.push_back(p.ids);
  const DecodedResults batch = pipe.generate(ids, greedy(32));
  ASSERT_EQ(batch.tokens.size(), ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(batch.tokens[i], g.prompts[i].greedy_ids);
    EXPECT_EQ(batch.texts[i], g.prompts[i].greedy_text);
  }
}

// cancel() from another thread ends the generate() under way, keeping what it generated.
TEST(LLMPipeline, CancelFromAnotherThreadEndsTheCall) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  LLMPipeline pipe = reference_pipeline();
  GenerationConfig endless = greedy(200);
  endless.ignore_eos = true;
  std::atomic<bool> done{false};
  DecodedResults r;
  std::thread caller([&] {
    r = pipe.generate(std::vector<std::string>{g.prompts[0].prompt, g.prompts[1].prompt}, endless);
    done = true;
  });
  // A cancel that comes before the call has added its requests finds nothing: repeat it.
  while (!done) {
    pipe.cancel();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  caller.join();
  ASSERT_EQ(r.finish_reasons.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.finish_reasons[i], GenerationFinishReason::CANCEL);
    EXPECT_LT(r.tokens[i].size(), 200u);
  }
  EXPECT_EQ(pipe.generate(g.prompts[0].prompt, greedy(32)).texts[0], g.prompts[0].greedy_text);
}

TEST(LLMPipeline, EveryStreamerFormSeesTheSameOutput) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  const auto& p = g.prompts[3];
  LLMPipeline pipe = reference_pipeline();
  std::string text;
  const DecodedResults r = pipe.generate(p.prompt, greedy(32), TextStreamerCallback([&](const std::string& piece) {
                                           text += piece;
                                           return StreamingStatus::RUNNING;
                                         }));
  EXPECT_EQ(text, p.greedy_text);
  EXPECT_EQ(r.texts[0], p.greedy_text);

  struct Recorder : StreamerBase {
    std::vector<std::int32_t> tokens;
    int ends = 0;
    StreamingStatus write(std::int32_t token) override {
      tokens.push_back(token);
      return StreamingStatus::RUNNING;
    }
    void end() override { ++ends; }
  };
  auto recorder = std::make_shared<Recorder>();
  pipe.generate(p.prompt, greedy(32), recorder);
  EXPECT_EQ(recorder->tokens, p.greedy_ids);
  EXPECT_EQ(recorder->ends, 1);
  // The stop token that ends the sequence is streamed and kept in the result's ids, but is not
  // text, as with OpenVINO GenAI's StreamerBase (openvino-genai 2026.4 on the same request).
  std::size_t stop_at = 3;  // the first greedy token from the fourth on that did not come before
  while (std::find(p.greedy_ids.begin(), p.greedy_ids.begin() + long(stop_at), p.greedy_ids[stop_at]) !=
         p.greedy_ids.begin() + long(stop_at)) {
    ++stop_at;
  }
  GenerationConfig stop_token = greedy(32);
  stop_token.stop_token_ids = {p.greedy_ids[stop_at]};
  recorder = std::make_shared<Recorder>();
  const DecodedResults stopped_by_token = pipe.generate(p.prompt, stop_token, recorder);
  const std::vector<std::int32_t> through_stop(p.greedy_ids.begin(), p.greedy_ids.begin() + long(stop_at) + 1);
  EXPECT_EQ(recorder->tokens, through_stop);
  EXPECT_EQ(stopped_by_token.tokens[0], through_stop);
  EXPECT_EQ(stopped_by_token.texts[0],
            pipe.get_tokenizer().decode(std::vector<std::int32_t>(through_stop.begin(), through_stop.end() - 1)));

  // The bool form stops when it returns true; the result ends where it stopped reading. (Text
  // pieces are coalesced, so a fast engine may have handed it everything in one piece.)
  std::string seen;
  const DecodedResults stopped =
      pipe.generate(p.prompt, greedy(32), BoolStreamerCallback([&](const std::string& piece) {
                      seen += piece;
                      return true;
                    }));
  EXPECT_EQ(stopped.finish_reasons[0], GenerationFinishReason::STOP);
  EXPECT_EQ(stopped.texts[0], seen);
  EXPECT_TRUE(p.greedy_text.starts_with(seen));
  // A token streamer sees one token at a time: STOP at the third keeps exactly three.
  struct StopAtThird : StreamerBase {
    int seen = 0;
    StreamingStatus write(std::int32_t) override {
      return ++seen == 3 ? StreamingStatus::STOP : StreamingStatus::RUNNING;
    }
  };
  const DecodedResults three = pipe.generate(p.prompt, greedy(32), std::make_shared<StopAtThird>());
  EXPECT_EQ(three.finish_reasons[0], GenerationFinishReason::STOP);
  EXPECT_EQ(three.tokens[0], std::vector<std::int32_t>(p.greedy_ids.begin(), p.greedy_ids.begin() + 3));
  EXPECT_KILN_ERROR(pipe.generate(std::vector<std::string>{"a", "b"}, greedy(4), recorder), "single prompt");
}

TEST(LLMPipeline, StopStringsCutTheTextAtTheirFirstOccurrence) {
  const auto g = testing::load_golden_checkpoint("llama2_tiny");
  LLMPipeline pipe = reference_pipeline("llama2_tiny");
  for (const auto& p : g.prompts) {
    const std::string& full = p.greedy_text;
    if (full.size() < 12) continue;
    // Three bytes from the middle, widened to whole UTF-8 characters (a stop string is text).
    const auto is_continuation = [&](std::size_t i) { return i < full.size() && (full[i] & 0xC0) == 0x80; };
    std::size_t begin = full.size() / 2, end = begin + 3;
    while (is_continuation(begin)) --begin;
    while (is_continuation(end)) ++end;
    const std::string stop = full.substr(begin, end - begin);
    const std::size_t at = full.find(stop);
    GenerationConfig c = greedy(32);
    c.stop_strings = {stop};
    std::string streamed;
    const DecodedResults r = pipe.generate(p.prompt, c, TextStreamerCallback([&](const std::string& piece) {
                                             streamed += piece;
                                             return StreamingStatus::RUNNING;
                                           }));
    EXPECT_EQ(r.texts[0], full.substr(0, at)) << p.prompt;
    EXPECT_EQ(streamed, r.texts[0]) << p.prompt;
    EXPECT_EQ(r.finish_reasons[0], GenerationFinishReason::STOP);
    c.include_stop_str_in_output = true;
    EXPECT_EQ(pipe.generate(p.prompt, c).texts[0], full.substr(0, at + stop.size())) << p.prompt;
  }
}

TEST(LLMPipeline, SamplesBeamsAndLogprobs) {
  LLMPipeline pipe = pipeline();
  GenerationConfig c = greedy(8);
  c.do_sample = true;
  c.num_return_sequences = 3;
  c.top_k = 20;
  c.rng_seed = 42;
  const DecodedResults a = pipe.generate("Hello world", c);
  const DecodedResults b = pipe.generate("Hello world", c);
  ASSERT_EQ(a.texts.size(), 3u);
  EXPECT_EQ(a.texts, b.texts);                                         // seeded
  EXPECT_FALSE(a.texts[0] == a.texts[1] && a.texts[1] == a.texts[2]);  // independent samples
  c = greedy(8);
  c.num_beams = 4;
  c.num_return_sequences = 2;
  c.logprobs = 3;
  const DecodedResults beams = pipe.generate("Hello world", c);
  ASSERT_EQ(beams.texts.size(), 2u);
  EXPECT_GE(beams.scores[0], beams.scores[1]);
  ASSERT_EQ(beams.logprobs.size(), 2u);
  ASSERT_EQ(beams.logprobs[0].size(), beams.tokens[0].size());
  EXPECT_EQ(beams.logprobs[0][0].top.size(), 3u);
  // Beams output only at the end, but their first token came from the first of 8 steps: its time
  // is taken then, before the generation ends (a share of the duration would be a timed test,
  // which a loaded machine breaks).
  ASSERT_EQ(beams.perf_metrics.raw.ttfts_ms.size(), 1u);
  EXPECT_LT(beams.perf_metrics.raw.ttfts_ms[0], beams.perf_metrics.raw.generate_durations_ms[0]);
  // Greedy logprobs: the chosen token is the most likely one, and the score is their sum.
  c = greedy(6);
  c.logprobs = 2;
  const DecodedResults g = pipe.generate("Hello world", c);
  double sum = 0;
  for (const TokenLogprob& t : g.logprobs[0]) {
    EXPECT_EQ(t.token, t.top[0].first);
    EXPECT_LE(t.logprob, 0.0f);
    sum += t.logprob;
  }
  EXPECT_NEAR(g.scores[0], sum, 1e-4);
}

// Chat turns resume inside blocks earlier turns filled and the prefix cache holds (the writes go
// to copies: kv_test's WritingACachedBlockCopiesIt); a stateless request served from that cache
// answers as a fresh pipeline does. Oracle: the fresh pipeline (REFERENCE: exact).
TEST(LLMPipeline, ChatTurnsAndTheCacheAnswerAsAFreshPipeline) {
  PipelineProperties p;
  p.kv_block_size = 4;  // small blocks: every turn ends inside blocks the cache holds
  LLMPipeline chat = reference_pipeline("llama3_tiny", p);
  GenerationConfig c = greedy(9);
  chat.start_chat("You are terse.");
  chat.generate("The quick brown fox", c);
  const ChatHistory after_one = chat.get_chat_history();
  chat.generate("jumps over", c);
  chat.generate("the lazy dog", c);
  ChatHistory ask(std::vector<ChatMessage>(after_one.begin(), after_one.end()));
  ask.push_back({"user", "and then?"});
  LLMPipeline fresh = reference_pipeline("llama3_tiny", p);
  const DecodedResults want = fresh.generate(ask, c);
  const DecodedResults got = chat.generate(ask, c);
  EXPECT_LT(got.perf_metrics.raw.num_prefilled_tokens[0], got.perf_metrics.raw.num_input_tokens[0]);
  EXPECT_EQ(got.tokens[0], want.tokens[0]);
}

// Chat turns find their history's keys and values in the prefix cache in whole blocks: a turn
// computes its new tokens and at most the partial block before them.
constexpr std::int64_t kChatBlock = 4;

PipelineProperties small_blocks(PipelineProperties p = {}) {
  p.kv_block_size = kChatBlock;
  return p;
}

TEST(LLMPipeline, ChatReusesTheKvCacheAndMatchesStatelessGeneration) {
  LLMPipeline pipe = pipeline("llama3_tiny", small_blocks());
  GenerationConfig c = greedy(10);
  c.ignore_eos = false;
  pipe.start_chat("You are terse.");
  const DecodedResults first = pipe.generate("Hello world", c);
  const DecodedResults second = pipe.generate("The quick brown fox", c);
  const ChatHistory& history = pipe.get_chat_history();
  ASSERT_EQ(history.size(), 5u);
  EXPECT_EQ(history[0].role, "system");
  EXPECT_EQ(history[2].content, first.texts[0]);
  EXPECT_EQ(history[4].content, second.texts[0]);
  // The second turn prefilled only what the first did not leave in the cache: none of the first
  // turn's prompt (the template renders it identically) but its last partial block, and of the
  // first answer only what does not re-tokenize as generated (these random-weight answers hold
  // bytes that decode to U+FFFD).
  const RawPerfMetrics& raw = second.perf_metrics.raw;
  EXPECT_LE(raw.num_prefilled_tokens[0],
            raw.num_input_tokens[0] - first.perf_metrics.raw.num_input_tokens[0] + kChatBlock - 1)
      << raw.num_prefilled_tokens[0];
  // Oracle: the same conversation, stateless, on a pipeline without any cached KV.
  ChatHistory upto({history[0], history[1], history[2], {"user", "The quick brown fox"}});
  LLMPipeline fresh = pipeline("llama3_tiny", small_blocks());
  const DecodedResults stateless = fresh.generate(upto, c);
  EXPECT_EQ(stateless.tokens[0], second.tokens[0]);
  EXPECT_EQ(stateless.perf_metrics.raw.num_prefilled_tokens[0], stateless.perf_metrics.raw.num_input_tokens[0]);
  // On the chat's own pipeline, the prefix cache serves the stateless call the same answer.
  const DecodedResults cached = pipe.generate(upto, c);
  EXPECT_EQ(cached.tokens[0], second.tokens[0]);
  EXPECT_LT(cached.perf_metrics.raw.num_prefilled_tokens[0], cached.perf_metrics.raw.num_input_tokens[0]);
  pipe.finish_chat();
  EXPECT_TRUE(pipe.get_chat_history().empty());
}

// With a draft model both caches carry over: the second turn's draft computes no more of the
// prompt than the main model does (the new tokens, give or take the block of the one token it
// lagged), and the answers are plain decoding's (a chat without the draft). Without reuse it
// would compute the whole history, as on the first turn.
TEST(LLMPipeline, ChatWithADraftReusesBothKvCaches) {
  PipelineProperties props = small_blocks();
  props.draft = draft_model(testing::draft_dir(), "REFERENCE");
  props.adaptive_speculation = false;
  LLMPipeline speculative = reference_pipeline("llama3_tiny", props), plain = reference_pipeline();
  GenerationConfig c = greedy(12);
  speculative.start_chat("You are terse.");
  plain.start_chat("You are terse.");
  double previous_input = 0;
  for (const char* message : {"Hello world", "The quick brown fox", "jumps over"}) {
    const DecodedResults s = speculative.generate(message, c);
    EXPECT_EQ(s.tokens, plain.generate(message, c).tokens) << message;
    const RawPerfMetrics& raw = s.perf_metrics.raw;
    ASSERT_EQ(raw.num_draft_prefilled_tokens.size(), 1u);
    EXPECT_GT(raw.num_proposed_tokens, 0);
    if (previous_input == 0) {
      EXPECT_EQ(raw.num_draft_prefilled_tokens[0], raw.num_input_tokens[0]);  // nothing cached yet
    } else {
      EXPECT_LE(raw.num_prefilled_tokens[0], raw.num_input_tokens[0] - previous_input + kChatBlock - 1) << message;
      EXPECT_LE(raw.num_draft_prefilled_tokens[0], raw.num_prefilled_tokens[0] + kChatBlock) << message;
    }
    previous_input = raw.num_input_tokens[0];
  }
}

// Ends generation with `status` at its third token (a text streamer's pieces depend on how far
// the engine ran ahead of the reader; tokens do not).
struct EndAtThirdToken : StreamerBase {
  explicit EndAtThirdToken(StreamingStatus s) : status(s) {}
  StreamingStatus write(std::int32_t) override { return ++tokens == 3 ? status : StreamingStatus::RUNNING; }
  StreamingStatus status;
  int tokens = 0;
};

TEST(LLMPipeline, CancelDropsTheTurnStopKeepsIt) {
  LLMPipeline pipe = pipeline();
  GenerationConfig c = greedy(12);
  pipe.start_chat();
  const DecodedResults cancelled =
      pipe.generate("Hello world", c, std::make_shared<EndAtThirdToken>(StreamingStatus::CANCEL));
  EXPECT_EQ(cancelled.finish_reasons[0], GenerationFinishReason::CANCEL);
  EXPECT_TRUE(pipe.get_chat_history().empty());
  const DecodedResults stopped =
      pipe.generate("Hello world", c, std::make_shared<EndAtThirdToken>(StreamingStatus::STOP));
  EXPECT_EQ(stopped.finish_reasons[0], GenerationFinishReason::STOP);
  ASSERT_EQ(stopped.tokens[0].size(), 3u);  // what the streamer took, though the engine ran on
  EXPECT_EQ(stopped.texts[0], pipe.get_tokenizer().decode(stopped.tokens[0], true));
  ASSERT_EQ(pipe.get_chat_history().size(), 2u);
  EXPECT_EQ(pipe.get_chat_history()[1].content, stopped.texts[0]);
}

// The last piece of an answer can be a tail held back because it began a stop string, released
// only when generation ends; CANCEL returned for that piece still drops the turn.
TEST(LLMPipeline, CancelOnTheReleasedTailDropsTheTurn) {
  LLMPipeline pipe = pipeline();
  GenerationConfig c = greedy(12);
  pipe.start_chat();
  const std::string full = pipe.generate("Hello world", c).texts[0];  // the answer, unstreamed
  ASSERT_FALSE(full.empty());
  std::size_t last_char = full.size() - 1;
  while (last_char > 0 && (static_cast<unsigned char>(full[last_char]) & 0xC0) == 0x80) --last_char;
  c.stop_strings = {full.substr(last_char) + "\x01"};  // the answer ends with its first character
  pipe.start_chat();                                   // a new conversation: the same first turn
  std::string streamed;
  int calls_at_end = 0;
  const DecodedResults r = pipe.generate("Hello world", c, TextStreamerCallback([&](const std::string& piece) {
                                           streamed += piece;
                                           if (streamed != full) return StreamingStatus::RUNNING;
                                           ++calls_at_end;
                                           return StreamingStatus::CANCEL;
                                         }));
  EXPECT_EQ(calls_at_end, 1);
  EXPECT_EQ(streamed, full);
  EXPECT_EQ(r.finish_reasons[0], GenerationFinishReason::CANCEL);
  EXPECT_TRUE(pipe.get_chat_history().empty());
}

TEST(LLMPipeline, PerfMetricsArePopulated) {
  LLMPipeline pipe = pipeline();
  const DecodedResults r = pipe.generate("Hello world", greedy(16));
  const PerfMetrics& m = r.perf_metrics;
  EXPECT_GT(m.load_time_ms, 0);
  EXPECT_GT(m.get_ttft().mean, 0);
  EXPECT_GT(m.get_tpot().mean, 0);
  EXPECT_EQ(m.raw.token_latencies_ms.size(), 15u);
  EXPECT_GT(m.get_throughput().mean, 0);
  EXPECT_GE(m.get_generate_duration().mean, m.get_ttft().mean);
  EXPECT_EQ(m.get_num_generated_tokens().mean, 16);
  EXPECT_GT(m.get_num_input_tokens().mean, 1);
  pipe.generate("Hello world", greedy(16));
  EXPECT_EQ(pipe.get_perf_metrics().num_calls(), 2);
}

TEST(LLMPipeline, SpeculativeDecodingThroughThePipeline) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  PipelineProperties props;
  props.draft = draft_model(testing::draft_dir(), "REFERENCE");
  props.adaptive_speculation = false;
  LLMPipeline pipe = reference_pipeline("llama3_tiny", props);
  const DecodedResults r = pipe.generate(g.prompts[1].prompt, greedy(32));  // num_assistant_tokens defaults to 5
  EXPECT_EQ(r.texts[0], g.prompts[1].greedy_text);
  EXPECT_GT(r.perf_metrics.raw.num_proposed_tokens, 0);
  EXPECT_GT(r.perf_metrics.get_acceptance_rate().mean, 0);
}

TEST(LLMPipeline, RejectsBadSetups) {
  PipelineProperties props;
  props.draft = draft_model(testing::checkpoint_dir("llama2_tiny"));
  EXPECT_KILN_ERROR(pipeline("llama3_tiny", props), "draft model", "tokenizer differs");
  EXPECT_KILN_ERROR(LLMPipeline(testing::checkpoint_dir("llama3_tiny"), "NPU"), "device 'NPU'", "accepted: CPU, GPU");
  LLMPipeline pipe = pipeline();
  GenerationConfig c = greedy(4);
  c.num_beams = 2;
  EXPECT_KILN_ERROR(
      pipe.generate("x", c, TextStreamerCallback([](const std::string&) { return StreamingStatus::RUNNING; })),
      "streaming needs a single sequence");
  c = greedy(4);
  c.top_p = 2;
  EXPECT_KILN_ERROR(pipe.set_generation_config(c), "top_p");
}

}  // namespace
}  // namespace kiln
