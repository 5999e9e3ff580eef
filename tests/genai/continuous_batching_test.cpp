// ContinuousBatchingPipeline from many threads. Oracles: transformers' greedy continuations on
// the golden checkpoints (every request, however many run beside it, whatever is preempted,
// stopped, cancelled or failed around it, must produce exactly them), the same request run alone
// through LLMPipeline (beam search, sampling, speculative decoding inside a shared batch), and
// the pipeline's own invariants (every handle ends, the KV pool is empty when no request is
// left). The stress test is the one ThreadSanitizer runs (ctest label tsan).
#include "kiln/continuous_batching_pipeline.hpp"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "../models/golden_checkpoint.hpp"
#include "test_models.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

GenerationConfig greedy(std::int64_t n) { return testing::greedy_config(n); }

std::unique_ptr<ContinuousBatchingPipeline> make_pipeline(SchedulerConfig scheduler = {},
                                                          PipelineProperties properties = {},
                                                          const std::string& name = "llama3_tiny") {
  properties.kv_cache_sequences = std::max<std::int64_t>(properties.kv_cache_sequences, 8);
  properties.context_tokens = 256;
  return std::make_unique<ContinuousBatchingPipeline>(testing::checkpoint_dir(name), scheduler, "REFERENCE",
                                                      properties);
}

std::vector<std::int32_t> prefix(const std::vector<std::int32_t>& ids, std::size_t n) {
  return {ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(n, ids.size()))};
}

// Reads a handle to its end the way a streaming client does, joining the pieces.
GenerationOutput read_streamed(GenerationHandleImpl& h) {
  GenerationOutput all;
  for (GenerationOutputs outs = h.read(); !outs.empty(); outs = h.read()) {
    const GenerationOutput& o = outs.at(0);
    all.generated_ids.insert(all.generated_ids.end(), o.generated_ids.begin(), o.generated_ids.end());
    all.text += o.text;
    all.finish_reason = o.finish_reason;
  }
  return all;
}

TEST(ContinuousBatching, ThreadsAddingAndReadingGetTransformersGreedy) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  constexpr int kThreads = 6;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < g.prompts.size(); ++i) {
        const auto& p = g.prompts[(i + static_cast<std::size_t>(t)) % g.prompts.size()];
        GenerationHandle h =
            pipe->add_request(static_cast<std::uint64_t>(t * 100 + static_cast<int>(i)), p.ids, greedy(32));
        const GenerationOutput out = read_streamed(*h);
        if (out.generated_ids != p.greedy_ids || out.text != p.greedy_text ||
            out.finish_reason != GenerationFinishReason::LENGTH || h->get_status() != GenerationStatus::FINISHED) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(pipe->has_non_finished_requests());
  const PipelineMetrics m = pipe->get_metrics();
  EXPECT_EQ(m.requests, 0);
  EXPECT_EQ(m.num_generated_tokens, kThreads * static_cast<std::int64_t>(g.prompts.size()) * 32);
  EXPECT_EQ(m.cache_usage, 0.0);
  EXPECT_GT(m.max_cache_usage, 0.0);
}

TEST(ContinuousBatching, UnderKvPressureEveryRequestFinishesAsIfAlone) {
  const auto g = testing::load_golden_checkpoint("llama2_tiny");
  // Room for about 4 of these sequences (prompt ≲ 25 tokens + 16 new, blocks of 4 tokens), and
  // 200 requests at once: the newest are preempted and recompute, none is lost or changed.
  PipelineProperties properties;
  properties.kv_block_size = 4;
  auto pipe =
      make_pipeline({.max_num_batched_tokens = 64, .max_num_seqs = 16, .num_kv_blocks = 44}, properties, "llama2_tiny");
  std::vector<GenerationHandle> handles;
  for (std::uint64_t i = 0; i < 200; ++i)
    handles.push_back(pipe->add_request(i, g.prompts[i % g.prompts.size()].ids, greedy(16)));
  for (std::uint64_t i = 0; i < 200; ++i) {
    const std::vector<GenerationOutput> out = handles[i]->read_all();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].generated_ids, prefix(g.prompts[i % g.prompts.size()].greedy_ids, 16)) << "request " << i;
    EXPECT_EQ(handles[i]->get_status(), GenerationStatus::FINISHED);
  }
  const PipelineMetrics m = pipe->get_metrics();
  EXPECT_GT(m.num_preemptions, 0);
  EXPECT_EQ(m.scheduled_requests + m.waiting_requests, 0);
  EXPECT_EQ(m.num_kv_blocks, 44);
  EXPECT_EQ(m.cache_usage, 0.0);
}

// KV cache events read on their own thread while threads generate under KV pressure (the path
// ThreadSanitizer checks): the stream starts with "all blocks cleared", never stores a block twice
// or removes one it did not store, and every stored run is block-aligned text of a request: a
// prompt followed by transformers' greedy continuation.
TEST(ContinuousBatching, KvCacheEventsFollowTheCacheWhileThreadsGenerate) {
  const auto g = testing::load_golden_checkpoint("llama2_tiny");
  PipelineProperties properties;
  properties.kv_block_size = 4;
  properties.kv_cache_events = true;
  auto pipe =
      make_pipeline({.max_num_batched_tokens = 64, .max_num_seqs = 16, .num_kv_blocks = 44}, properties, "llama2_tiny");
  std::atomic<bool> done{false};
  std::vector<KvCacheEvent> events;
  std::thread reader([&] {
    while (!done) {
      for (KvCacheEventBatch& b : pipe->wait_kv_cache_events(std::chrono::milliseconds(20))) {
        EXPECT_GT(b.timestamp, 1.7e9);
        for (KvCacheEvent& e : b.events) events.push_back(std::move(e));
      }
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 3 * g.prompts.size(); ++i) {
        const auto& p = g.prompts[(i + static_cast<std::size_t>(t)) % g.prompts.size()];
        EXPECT_EQ(pipe->add_request(static_cast<std::uint64_t>(t * 1000 + static_cast<int>(i)), p.ids, greedy(16))
                      ->read_all()[0]
                      .generated_ids,
                  prefix(p.greedy_ids, 16));
      }
    });
  }
  for (auto& t : threads) t.join();
  done = true;
  reader.join();
  for (KvCacheEventBatch& b : pipe->wait_kv_cache_events(std::chrono::milliseconds(0))) {
    for (KvCacheEvent& e : b.events) events.push_back(std::move(e));
  }

  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(std::holds_alternative<KvAllBlocksCleared>(events.front()));
  std::vector<std::vector<std::int32_t>> texts;  // what any sequence may hold
  for (const auto& p : g.prompts) {
    texts.push_back(p.ids);
    texts.back().insert(texts.back().end(), p.greedy_ids.begin(), p.greedy_ids.end());
  }
  const auto aligned_in_a_text = [&](const std::vector<std::int32_t>& run, bool at_start) {
    for (const auto& text : texts) {
      for (std::size_t at = 0; at + run.size() <= text.size(); at += 4) {
        if (std::equal(run.begin(), run.end(), text.begin() + static_cast<std::ptrdiff_t>(at))) return true;
        if (at_start) break;
      }
    }
    return false;
  };
  std::set<std::uint64_t> cached;
  std::size_t stored = 0, removed = 0;
  for (const KvCacheEvent& e : events) {
    if (const auto* s = std::get_if<KvBlocksStored>(&e)) {
      ASSERT_EQ(s->token_ids.size(), 4 * s->block_hashes.size());
      EXPECT_TRUE(aligned_in_a_text(s->token_ids, !s->parent_block_hash)) << "tokens no request holds";
      for (const std::uint64_t h : s->block_hashes) EXPECT_TRUE(cached.insert(h).second) << "stored twice";
      stored += s->block_hashes.size();
    } else if (const auto* r = std::get_if<KvBlocksRemoved>(&e)) {
      for (const std::uint64_t h : r->block_hashes) EXPECT_EQ(cached.erase(h), 1u) << "removed, never stored";
      removed += r->block_hashes.size();
    } else {
      cached.clear();
    }
  }
  EXPECT_GT(stored, 44u);  // more than the cache holds: it evicted
  EXPECT_GT(removed, 0u);
  EXPECT_LE(cached.size(), 44u);
}

TEST(ContinuousBatching, StopKeepsCancelDropsAndOthersAreUntouched) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  GenerationHandle stopped = pipe->add_request(1, g.prompts[0].ids, greedy(200));
  GenerationHandle cancelled = pipe->add_request(2, g.prompts[1].ids, greedy(200));
  GenerationHandle plain = pipe->add_request(3, g.prompts[2].ids, greedy(32));
  ASSERT_FALSE(stopped->read().empty());
  stopped->stop();
  ASSERT_FALSE(cancelled->read().empty());
  cancelled->cancel();
  const std::vector<GenerationOutput> s = stopped->read_all();
  EXPECT_EQ(stopped->get_status(), GenerationStatus::STOP);
  EXPECT_EQ(s[0].finish_reason, GenerationFinishReason::STOP);
  EXPECT_LT(s[0].generated_ids.size(), 200u);
  // What it generated before the stop is kept, and is the greedy answer so far (the golden has 32).
  const std::size_t n = std::min<std::size_t>(s[0].generated_ids.size(), 32);
  EXPECT_EQ(prefix(s[0].generated_ids, n), prefix(g.prompts[0].greedy_ids, n));
  cancelled->read_all();
  EXPECT_EQ(cancelled->get_status(), GenerationStatus::CANCEL);
  EXPECT_EQ(plain->read_all()[0].generated_ids, g.prompts[2].greedy_ids);
  EXPECT_EQ(plain->get_status(), GenerationStatus::FINISHED);
  // Ending an ended request changes nothing.
  plain->cancel();
  EXPECT_EQ(plain->get_status(), GenerationStatus::FINISHED);
}

TEST(ContinuousBatching, BadRequestsFailAloneNamingTheLimitOrField) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  // Long enough to be still in flight when its id is offered again just after.
  GenerationHandle good = pipe->add_request(1, g.prompts[0].ids, greedy(200));
  const auto expect_error = [](auto&& call, const std::string& fragment) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one naming " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error([&] { pipe->add_request(1, g.prompts[1].ids, greedy(8)); }, "already in flight");
  expect_error([&] { pipe->add_request(2, std::vector<std::int32_t>(300, 5), greedy(8)); }, "context");
  expect_error([&] { pipe->add_request(3, std::vector<std::int32_t>{}, greedy(8)); }, "empty");
  expect_error([&] { pipe->add_request(4, std::vector<std::int32_t>{1, 1 << 30}, greedy(8)); }, "vocabulary");
  GenerationConfig bad = greedy(8);
  bad.top_p = 2.0;
  expect_error([&] { pipe->add_request(5, g.prompts[1].ids, bad); }, "top_p");
  bad = greedy(8);
  bad.num_assistant_tokens = 3;  // no draft model loaded
  expect_error([&] { pipe->add_request(6, g.prompts[1].ids, bad); }, "draft model");
  EXPECT_EQ(prefix(good->read_all()[0].generated_ids, 32), g.prompts[0].greedy_ids);
  // The refused ids were never taken: they can be used now.
  EXPECT_EQ(pipe->add_request(2, g.prompts[1].ids, greedy(32))->read_all()[0].generated_ids, g.prompts[1].greedy_ids);
}

TEST(ContinuousBatching, AReaderThatNeverReadsStallsNoOne) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  GenerationHandle idle = pipe->add_request(1, g.prompts[0].ids, greedy(32));
  for (std::uint64_t i = 0; i < 4; ++i) {
    GenerationHandle h = pipe->add_request(10 + i, g.prompts[1].ids, greedy(32));
    EXPECT_EQ(h->read_all()[0].generated_ids, g.prompts[1].greedy_ids);
  }
  // Its output waited in its channel, whole.
  EXPECT_EQ(idle->read_all()[0].generated_ids, g.prompts[0].greedy_ids);
}

// An event-loop reader never blocks in read(): it reads with a zero timeout only when the
// handle's callback has said there is something, and must still see every token.
TEST(ContinuousBatching, OutputCallbackWakesANonBlockingReader) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  // Shared with the callback, as the API asks: a call already under way when the callback is
  // removed may still finish, after this test's stack is gone.
  struct Wakeup {
    std::mutex mutex;
    std::condition_variable woken;
    bool signalled = false;
  };
  const auto wakeup = std::make_shared<Wakeup>();
  std::mutex& mutex = wakeup->mutex;
  std::condition_variable& woken = wakeup->woken;
  bool& signalled = wakeup->signalled;
  const auto wake = [wakeup] {
    std::lock_guard lock(wakeup->mutex);
    wakeup->signalled = true;
    wakeup->woken.notify_one();
  };
  std::vector<GenerationHandle> handles;
  for (std::size_t i = 0; i < g.prompts.size(); ++i) {
    handles.push_back(pipe->add_request(i, g.prompts[i].ids, greedy(12)));
    handles.back()->set_on_output(wake);
  }
  std::vector<std::vector<std::int32_t>> ids(handles.size());
  for (;;) {
    {
      std::unique_lock lock(mutex);
      ASSERT_TRUE(woken.wait_for(lock, std::chrono::seconds(60), [&] { return signalled; }));
      signalled = false;
    }
    bool running = false;
    for (std::size_t i = 0; i < handles.size(); ++i) {
      // Ended first, then read: what the last read returns is everything.
      running = running || handles[i]->get_status() == GenerationStatus::RUNNING;
      for (const auto& [seq, out] : handles[i]->read_for(std::chrono::milliseconds(0))) {
        ids[i].insert(ids[i].end(), out.generated_ids.begin(), out.generated_ids.end());
      }
    }
    if (!running) break;
  }
  for (std::size_t i = 0; i < handles.size(); ++i) {
    EXPECT_EQ(ids[i], prefix(g.prompts[i].greedy_ids, 12)) << "request " << i;
    handles[i]->set_on_output({});
  }
  // Set on an ended request, the callback runs at once (there is news: the end).
  bool ran = false;
  handles[0]->set_on_output([&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(ContinuousBatching, OpenVinoStyleStepLoop) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  std::vector<GenerationHandle> handles;
  for (std::size_t i = 0; i < g.prompts.size(); ++i)
    handles.push_back(pipe->add_request(i, g.prompts[i].ids, greedy(32)));
  while (pipe->has_non_finished_requests()) pipe->step();
  for (std::size_t i = 0; i < g.prompts.size(); ++i) {
    EXPECT_EQ(handles[i]->get_status(), GenerationStatus::FINISHED);
    EXPECT_EQ(handles[i]->read_all()[0].generated_ids, g.prompts[i].greedy_ids);
  }
  pipe->step();  // idle: returns at once
}

// cancel_generate(thread) ends that thread's generate() call (as Ctrl-C does in Python) and no other.
TEST(ContinuousBatching, CancelGenerateEndsOnlyTheNamedThreadsCall) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  GenerationConfig endless = greedy(200);
  endless.ignore_eos = true;
  std::promise<std::thread::id> cancelled_thread;
  std::vector<GenerationResult> cancelled, untouched;
  std::atomic<bool> victim_done{false};
  std::thread victim([&] {
    cancelled_thread.set_value(std::this_thread::get_id());
    cancelled = pipe->generate(std::vector<std::string>{g.prompts[0].prompt, g.prompts[1].prompt}, {endless});
    victim_done = true;
  });
  std::thread bystander(
      [&] { untouched = pipe->generate(std::vector<std::string>{g.prompts[1].prompt}, {greedy(32)}); });
  const std::thread::id victim_id = cancelled_thread.get_future().get();
  // Until the call has registered its requests a cancel finds nothing: repeat until it ends.
  while (!victim_done) {
    pipe->cancel_generate(victim_id);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  victim.join();
  bystander.join();
  ASSERT_EQ(cancelled.size(), 2u);
  for (const GenerationResult& r : cancelled) {
    EXPECT_EQ(r.status, GenerationStatus::CANCEL);
    EXPECT_LT(r.tokens[0].size(), 200u);
  }
  EXPECT_EQ(untouched.at(0).status, GenerationStatus::FINISHED);
  EXPECT_EQ(untouched.at(0).texts[0], g.prompts[1].greedy_text);
}

TEST(ContinuousBatching, GenerateWithStreamersAndText) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  std::vector<std::string> prompts;
  for (const auto& p : g.prompts) prompts.push_back(p.prompt);
  const std::vector<GenerationResult> all = pipe->generate(prompts, {greedy(32)});
  ASSERT_EQ(all.size(), prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(all[i].texts[0], g.prompts[i].greedy_text);
    EXPECT_EQ(all[i].status, GenerationStatus::FINISHED);
  }
  // STOP from a text streamer: it is not called again, and the answer is what it saw (a piece
  // holds whatever the engine produced since the previous read, so how much that is varies).
  std::string streamed;
  int pieces = 0;
  const auto stopped = pipe->generate({prompts[0]}, {greedy(200)}, TextStreamerCallback([&](const std::string& s) {
                                        streamed += s;
                                        ++pieces;
                                        return StreamingStatus::STOP;
                                      }));
  EXPECT_EQ(pieces, 1);
  EXPECT_TRUE(stopped[0].status == GenerationStatus::STOP || stopped[0].status == GenerationStatus::FINISHED);
  EXPECT_EQ(stopped[0].texts[0], streamed);
  EXPECT_FALSE(streamed.empty());
  EXPECT_EQ(g.prompts[0].greedy_text.rfind(streamed.substr(0, g.prompts[0].greedy_text.size()), 0), 0u);
  // A token streamer's STOP at its third token: the answer is those three tokens.
  struct StopAtThird : StreamerBase {
    std::vector<std::int32_t> seen;
    bool ended = false;
    StreamingStatus write(std::int32_t token) override {
      seen.push_back(token);
      return seen.size() == 3 ? StreamingStatus::STOP : StreamingStatus::RUNNING;
    }
    void end() override { ended = true; }
  };
  auto tokens = std::make_shared<StopAtThird>();
  const auto by_tokens = pipe->generate({prompts[2]}, {greedy(200)}, tokens);
  EXPECT_EQ(tokens->seen, prefix(g.prompts[2].greedy_ids, 3));
  EXPECT_EQ(by_tokens[0].tokens[0], tokens->seen);
  EXPECT_TRUE(tokens->ended);
  // A streamer that throws ends its own request; the exception reaches the caller, and the
  // pipeline serves the next call as before.
  EXPECT_THROW(
      pipe->generate({prompts[1]}, {greedy(32)}, TextStreamerCallback([](const std::string&) -> StreamingStatus {
                       throw std::runtime_error("streamer broke");
                     })),
      std::runtime_error);
  EXPECT_FALSE(pipe->has_non_finished_requests());
  EXPECT_EQ(pipe->generate({prompts[1]}, {greedy(32)})[0].texts[0], g.prompts[1].greedy_text);
}

TEST(ContinuousBatching, BeamsSamplesAndDraftsShareTheBatchAsAlone) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  PipelineProperties properties;
  properties.draft = draft_model(testing::draft_dir(), "REFERENCE");
  properties.context_tokens = 256;
  properties.kv_cache_sequences = 8;
  LLMPipeline alone(testing::checkpoint_dir("llama3_tiny"), "REFERENCE", properties);
  auto pipe = make_pipeline({}, properties);

  GenerationConfig beams = greedy(16);
  beams.num_beams = 3;
  beams.num_return_sequences = 2;
  GenerationConfig samples = greedy(16);
  samples.do_sample = true;
  samples.top_k = 20;
  samples.rng_seed = 7;
  samples.num_return_sequences = 2;
  GenerationConfig speculative = greedy(32);
  speculative.num_assistant_tokens = 3;

  GenerationHandle b = pipe->add_request(1, g.prompts[0].prompt, beams);
  GenerationHandle s = pipe->add_request(2, g.prompts[1].prompt, samples);
  GenerationHandle d = pipe->add_request(3, g.prompts[2].prompt, speculative);
  GenerationHandle p = pipe->add_request(4, g.prompts[3].prompt, greedy(32));

  const auto expect_same = [](const std::vector<GenerationOutput>& got, const DecodedResults& want) {
    ASSERT_EQ(got.size(), want.tokens.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].generated_ids, want.tokens[i]) << "sequence " << i;
      EXPECT_EQ(got[i].text, want.texts[i]);
      EXPECT_FLOAT_EQ(got[i].score, want.scores[i]);
    }
  };
  expect_same(b->read_all(), alone.generate(g.prompts[0].prompt, beams));
  expect_same(s->read_all(), alone.generate(g.prompts[1].prompt, samples));
  EXPECT_EQ(d->read_all()[0].generated_ids, g.prompts[2].greedy_ids);
  EXPECT_EQ(p->read_all()[0].generated_ids, g.prompts[3].greedy_ids);
}

// A long shared prefix (a system prompt) is computed once: later requests take its blocks from
// the prefix cache. Oracle: the same requests on a pipeline with prefix caching off.
TEST(ContinuousBatching, SharedPrefixIsComputedOnceAndChangesNoToken) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  std::vector<std::int32_t> shared;
  for (const auto& p : g.prompts) shared.insert(shared.end(), p.ids.begin(), p.ids.end());  // ~60 tokens
  const auto with_suffix = [&](std::size_t i) {
    std::vector<std::int32_t> ids = shared;
    ids.insert(ids.end(), g.prompts[i].ids.begin() + 1, g.prompts[i].ids.end());
    return ids;
  };
  PipelineProperties properties;
  properties.kv_block_size = 8;
  auto cached = make_pipeline({}, properties);
  auto uncached = make_pipeline({.enable_prefix_caching = false}, properties);
  const auto full_blocks = static_cast<std::int64_t>(shared.size() / 8 * 8);
  EXPECT_EQ(cached->add_request(0, with_suffix(0), greedy(16))->read_all()[0].generated_ids,
            uncached->add_request(0, with_suffix(0), greedy(16))->read_all()[0].generated_ids);
  EXPECT_EQ(cached->get_metrics().prefix_cache_hits, 0);
  std::vector<GenerationHandle> handles;
  for (std::size_t i = 1; i < g.prompts.size(); ++i)
    handles.push_back(cached->add_request(i, with_suffix(i), greedy(16)));
  for (std::size_t i = 1; i < g.prompts.size(); ++i) {
    EXPECT_EQ(handles[i - 1]->read_all()[0].generated_ids,
              uncached->add_request(i, with_suffix(i), greedy(16))->read_all()[0].generated_ids);
    // Each request's own metrics: what it found in the cache was not prefilled.
    const RawPerfMetrics& raw = handles[i - 1]->get_perf_metrics().raw;
    ASSERT_EQ(raw.num_input_tokens.size(), 1u);
    EXPECT_EQ(raw.num_input_tokens[0], double(with_suffix(i).size()));
    EXPECT_LE(raw.num_prefilled_tokens[0], raw.num_input_tokens[0] - double(full_blocks));
    EXPECT_EQ(raw.num_generated_tokens[0], 16);
    EXPECT_EQ(raw.token_latencies_ms.size(), 15u);
    ASSERT_EQ(raw.ttfts_ms.size(), 1u);
    EXPECT_GT(raw.ttfts_ms[0], 0);
    EXPECT_GE(raw.generate_durations_ms[0], raw.ttfts_ms[0]);
    // Waiting for the first step comes before the first token.
    ASSERT_EQ(raw.queue_times_ms.size(), 1u);
    EXPECT_GE(raw.queue_times_ms[0], 0);
    EXPECT_LE(raw.queue_times_ms[0], raw.ttfts_ms[0]);
  }
  const PipelineMetrics m = cached->get_metrics();
  EXPECT_GE(m.prefix_cache_hits, static_cast<std::int64_t>(g.prompts.size() - 1) * full_blocks);
  EXPECT_EQ(m.num_prompt_tokens - m.num_computed_prompt_tokens, m.prefix_cache_hits);
  EXPECT_EQ(uncached->get_metrics().prefix_cache_queries, 0);
}

// cache_size is a cap in GiB that counts the KV precision's bytes; num_kv_blocks overrides it.
// Oracle: the layout arithmetic written out from the checkpoint's config.
TEST(ContinuousBatching, CacheSizeIsAByteCapInTheKvPrecision) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  const ir::ModelConfig& c = g.checkpoint->config();
  PipelineProperties properties;
  properties.kv_block_size = 16;
  const auto blocks_in_a_gib = [&](std::uint64_t value_bytes, std::uint64_t param_bytes_per_head) {
    const std::uint64_t token = 2 * static_cast<std::uint64_t>(c.num_layers * c.num_kv_heads) *
                                (static_cast<std::uint64_t>(c.head_dim) * value_bytes + param_bytes_per_head);
    return static_cast<std::int64_t>((std::uint64_t{1} << 30) / (token * 16));
  };
  // On the CPU device, whose KV pool is mapped memory touched only where used.
  properties.device_properties = {{"KV_CACHE_PRECISION", "f32"}};
  ContinuousBatchingPipeline f32(testing::checkpoint_dir("llama3_tiny"), {.cache_size = 1}, "CPU", properties);
  EXPECT_EQ(f32.get_metrics().num_kv_blocks, blocks_in_a_gib(4, 0));
  // u8: a byte per value and an f32 scale and zero point per group of 32 values.
  properties.device_properties = {{"KV_CACHE_PRECISION", "u8"}};
  ContinuousBatchingPipeline u8(testing::checkpoint_dir("llama3_tiny"), {.cache_size = 1}, "CPU", properties);
  const std::uint64_t groups = (static_cast<std::uint64_t>(c.head_dim) + 31) / 32;
  EXPECT_EQ(u8.get_metrics().num_kv_blocks, blocks_in_a_gib(1, groups * 8));
  EXPECT_EQ(u8.add_request(1, g.prompts[0].ids, greedy(4))->read_all()[0].generated_ids.size(), 4u);
  ContinuousBatchingPipeline both(testing::checkpoint_dir("llama3_tiny"), {.num_kv_blocks = 20, .cache_size = 1}, "CPU",
                                  properties);
  EXPECT_EQ(both.get_metrics().num_kv_blocks, 20);
}

// A latency-pinned pool pins the thread that builds it; the engine thread keeps that CPU, and the
// caller gets its own affinity back (threads it starts later would otherwise share one CPU).
TEST(ContinuousBatching, TheCallersCpuAffinityIsLeftAsItWas) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  cpu_set_t before, after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  PipelineProperties properties;
  properties.device_properties = {{"PERFORMANCE_HINT", "LATENCY"}};
  ContinuousBatchingPipeline pipe(testing::checkpoint_dir("llama3_tiny"), {}, "CPU", properties);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  EXPECT_EQ(pipe.add_request(1, g.prompts[0].ids, greedy(4))->read_all()[0].generated_ids.size(), 4u);
}

// A handle let go of (a client that disconnected) cancels its request, whose KV blocks go back.
TEST(ContinuousBatching, DroppingTheHandleCancelsItsRequest) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  GenerationHandle h = pipe->add_request(1, g.prompts[0].ids, greedy(200));
  ASSERT_FALSE(h->read().empty());
  h.reset();
  while (pipe->has_non_finished_requests()) pipe->step();
  const PipelineMetrics m = pipe->get_metrics();
  EXPECT_LT(m.num_generated_tokens, 200);
  EXPECT_EQ(m.cache_usage, 0.0);
}

TEST(ContinuousBatching, HandlesOutliveThePipeline) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline();
  GenerationHandle h = pipe->add_request(1, g.prompts[0].ids, greedy(200));
  ASSERT_FALSE(h->read().empty());
  pipe.reset();
  h->read_all();
  EXPECT_EQ(h->get_status(), GenerationStatus::CANCEL);
  h->stop();  // nothing left to reach: no effect, no crash
  EXPECT_TRUE(h->read().empty());
}

// Many threads adding, reading (blocking and with timeouts), stopping and cancelling at random,
// against one pipeline. What must hold: no race (ThreadSanitizer), every handle ends with the
// status its caller caused, a finished answer is the greedy one, and nothing is left behind.
TEST(ContinuousBatching, StressAddReadStopCancelFromManyThreads) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline({.max_num_batched_tokens = 48, .max_num_seqs = 8});
  constexpr int kThreads = 8;
  constexpr int kRequestsPerThread = 12;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < kRequestsPerThread; ++i) {
        const auto& p = g.prompts[rng() % g.prompts.size()];
        const auto id = static_cast<std::uint64_t>(t * 1000 + i);
        GenerationHandle h = pipe->add_request(id, p.ids, greedy(24));
        const unsigned action = rng() % 4;
        if (action == 1) {
          h->read_for(std::chrono::milliseconds(rng() % 5));
          h->cancel();
        } else if (action == 2) {
          h->read();
          h->stop();
        } else if (action == 3) {
          while (h->get_status() == GenerationStatus::RUNNING) h->read_for(std::chrono::milliseconds(1));
        }
        const std::vector<GenerationOutput> out = h->read_all();
        const GenerationStatus status = h->get_status();
        const bool ok = status == GenerationStatus::FINISHED ? out[0].generated_ids == prefix(p.greedy_ids, 24)
                        : status == GenerationStatus::STOP   ? action == 2
                        : status == GenerationStatus::CANCEL ? action == 1
                                                             : false;
        if (!ok) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_FALSE(pipe->has_non_finished_requests());
  EXPECT_EQ(pipe->get_metrics().cache_usage, 0.0);
}

// Different grammars in one batch, from several threads: each request's constrained greedy output
// is the one it gets alone, and passes a check independent of the grammar engine (nlohmann's
// parser, std::regex, the list of choices). The grammars share the process cache and their
// compiled masks across threads (ThreadSanitizer runs this test).
TEST(ContinuousBatching, DifferentGrammarsPerRequestEachGetTheirOwnOutput) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto pipe = make_pipeline({.max_num_batched_tokens = 64, .max_num_seqs = 8});
  std::vector<StructuredOutputConfig> grammars(4);
  grammars[0].json_schema = R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": -9, "maximum": 99},
      "ok": {"type": "boolean"}}, "required": ["n", "ok"]})";
  grammars[1].regex = "[a-z]{2,6}-[0-9]{3}";
  grammars[2].choice = {"alpha", "beta", "gamma"};
  grammars[3].structural_tags = {{"<f>", R"({"type": "integer"})", "</f>"}};  // free text, <f> opens a tag
  grammars[3].triggers = {"<f>"};
  const auto passes = [&](std::size_t k, const std::string& text) {
    if (k == 0) {
      const Json v = Json::parse(text, nullptr, false);
      return v.is_object() && v.size() == 2 && v["n"].is_number_integer() && v["n"] >= -9 && v["n"] <= 99 &&
             v["ok"].is_boolean();
    }
    if (k == 1) return std::regex_match(text, std::regex("[a-z]{2,6}-[0-9]{3}"));
    if (k == 2) return text == "alpha" || text == "beta" || text == "gamma";
    return true;  // free text: the solo run is the oracle
  };
  const auto config = [&](std::size_t k) {
    GenerationConfig c = greedy(160);  // room for JSON's whitespace (up to 20 per gap)
    c.ignore_eos = false;
    c.structured_output_config = grammars[k];
    return c;
  };
  std::vector<std::vector<std::string>> alone(grammars.size());  // [grammar][prompt]
  for (std::size_t k = 0; k < grammars.size(); ++k) {
    for (std::size_t i = 0; i < g.prompts.size(); ++i) {
      GenerationHandle h = pipe->add_request(900 + k * 10 + i, g.prompts[i].ids, config(k));
      alone[k].push_back(read_streamed(*h).text);
      EXPECT_TRUE(passes(k, alone[k].back())) << k << ": " << alone[k].back();
    }
  }
  constexpr int kThreads = 4;
  std::atomic<int> different{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t j = 0; j < grammars.size() * g.prompts.size(); ++j) {
        const std::size_t k = (j + static_cast<std::size_t>(t)) % grammars.size();
        const std::size_t i = j % g.prompts.size();
        GenerationHandle h = pipe->add_request(static_cast<std::uint64_t>(t * 1000) + j, g.prompts[i].ids, config(k));
        if (read_streamed(*h).text != alone[k][i]) ++different;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(different.load(), 0);
  EXPECT_EQ(pipe->get_metrics().cache_usage, 0.0);
}

}  // namespace
}  // namespace kiln
