// The routes and a CompletionJob on a real pipeline, without HTTP. Oracles: transformers' greedy
// continuations of the golden checkpoint (what the text must be), OpenAI's response and chunk
// shapes, and the pipeline's own metrics (a cancelled request leaves nothing running).
#include "server/openai_routes.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include <nlohmann/json.hpp>

#include "../models/golden_checkpoint.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Fixture {
  Fixture() : golden(testing::load_golden_checkpoint("llama3_tiny")), routes({.models = {{"tiny", {}}}}) {
    pipeline = load(golden.dir);
    routes.set_pipeline("tiny", pipeline);
  }
  static std::shared_ptr<ContinuousBatchingPipeline> load(const std::filesystem::path& dir) {
    PipelineProperties properties;
    properties.context_tokens = 128;
    properties.kv_cache_sequences = 4;
    return std::make_shared<ContinuousBatchingPipeline>(dir, SchedulerConfig{}, "REFERENCE", properties);
  }
  // The text of transformers' first n greedy tokens (all it has when it has fewer).
  std::string greedy_text(std::size_t prompt, std::size_t n) const {
    const auto& ids = golden.prompts[prompt].greedy_ids;
    n = std::min(n, ids.size());
    return pipeline->get_tokenizer().decode(std::vector<std::int32_t>(ids.begin(), ids.begin() + long(n)));
  }
  Reply post(const std::string& path, const json& body) {
    return routes.handle({.method = "POST", .path = path, .headers = {}, .body = body.dump()});
  }
  testing::GoldenCheckpoint golden;
  OpenAiRoutes routes;
  std::shared_ptr<ContinuousBatchingPipeline> pipeline;
};

// Polls a pending reply as the HTTP server does: on each wakeup, until it is done. The wakeup
// state is shared with the callback, which the engine thread may still be running when the
// Poller is destroyed.
struct Poller {
  struct Wake {
    std::mutex mutex;
    std::condition_variable cv;
    bool woken = false;
  };
  explicit Poller(std::shared_ptr<PendingResponse> p) : pending(std::move(p)) {
    pending->set_wakeup([wake = wake] {
      std::lock_guard lock(wake->mutex);
      wake->woken = true;
      wake->cv.notify_one();
    });
  }
  // Polls until done or until `enough` says to stop; returns the stream's bytes.
  Progress run(const std::function<bool(const std::string&)>& enough = {}) {
    Progress all;
    while (!all.done) {
      Progress p = pending->poll();
      all.chunk += p.chunk;
      all.done = p.done;
      if (p.response) all.response = p.response;
      if (all.done || (enough && enough(all.chunk))) break;
      std::unique_lock lock(wake->mutex);
      if (!wake->cv.wait_for(lock, 60s, [&] { return wake->woken; })) ADD_FAILURE() << "no wakeup in 60 s";
      wake->woken = false;
    }
    return all;
  }
  std::shared_ptr<Wake> wake = std::make_shared<Wake>();
  std::shared_ptr<PendingResponse> pending;
};

std::shared_ptr<PendingResponse> pending_of(Reply reply) {
  if (auto* r = std::get_if<HttpResponse>(&reply)) ADD_FAILURE() << r->status << " " << r->body;
  return std::get<std::shared_ptr<PendingResponse>>(reply);
}

// The texts of a stream's chunks, joined, and whether it ended with [DONE].
std::pair<std::string, bool> stream_text(const std::string& sse) {
  std::string text;
  bool done = false;
  for (std::size_t at = 0; (at = sse.find("data: ", at)) != std::string::npos;) {
    const std::size_t end = sse.find("\n\n", at);
    const std::string data = sse.substr(at + 6, end - at - 6);
    at = end;
    if (data == "[DONE]") {
      done = true;
      continue;
    }
    const json chunk = json::parse(data);
    for (const json& c : chunk.value("choices", json::array())) text += c.value("text", "");
  }
  return {text, done};
}

TEST(OpenAiRoutes, CompletionIsTransformersGreedy) {
  Fixture f;
  const auto& prompt = f.golden.prompts[0];
  const json body = {
      {"model", "tiny"}, {"prompt", prompt.ids}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}};
  Poller poller(pending_of(f.post("/v1/completions", body)));
  const Progress done = poller.run();
  ASSERT_TRUE(done.response);
  const json r = json::parse(done.response->body);
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["choices"][0]["text"], f.greedy_text(0, 8));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["prompt_tokens"], prompt.ids.size());
  EXPECT_EQ(r["usage"]["completion_tokens"], 8);

  Poller streamed(pending_of(
      f.post("/v1/completions",
             {{"prompt", prompt.ids}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}, {"stream", true}})));
  const auto [text, ended] = stream_text(streamed.run().chunk);
  EXPECT_EQ(text, f.greedy_text(0, 8));
  EXPECT_TRUE(ended);
}

TEST(OpenAiRoutes, ExpiringAStreamCancelsItAndSaysWhy) {
  Fixture f;
  const json body = {{"prompt", f.golden.prompts[1].ids},
                     {"max_tokens", 100},
                     {"temperature", 0},
                     {"ignore_eos", true},
                     {"stream", true}};
  Poller poller(pending_of(f.post("/v1/completions", body)));
  std::string sse = poller.run([](const std::string& s) { return s.find("\"text\"") != std::string::npos; }).chunk;
  const Progress last = poller.pending->expire();
  EXPECT_TRUE(last.done);
  sse += last.chunk;
  EXPECT_NE(sse.find(R"("code":"timeout")"), std::string::npos) << sse;
  EXPECT_NE(sse.find(R"("finish_reason":"abort")"), std::string::npos) << sse;
  const auto [text, ended] = stream_text(sse);
  EXPECT_TRUE(ended);
  // What came in time is the greedy start (the golden continuation may be the shorter one).
  const std::string golden = f.greedy_text(1, 100);
  EXPECT_TRUE(golden.starts_with(text) || text.starts_with(golden)) << text;
  // The engine lets the request go: nothing runs, no KV block is held.
  for (int i = 0; i < 200 && f.pipeline->has_non_finished_requests(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(f.pipeline->has_non_finished_requests());
}

TEST(OpenAiRoutes, NonStreamingExpiryIs504) {
  Fixture f;
  auto pending = pending_of(
      f.post("/v1/chat/completions",
             {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 100}, {"ignore_eos", true}}));
  const Progress last = pending->expire();
  ASSERT_TRUE(last.response);
  EXPECT_EQ(last.response->status, 504);
  EXPECT_EQ(json::parse(last.response->body)["error"]["code"], "timeout");
}

TEST(OpenAiRoutes, BadRequestsNeverReachTheEngine) {
  Fixture f;
  const auto status = [&](const std::string& path, const json& body) {
    const Reply r = f.post(path, body);
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r).status : 200;
  };
  EXPECT_EQ(status("/v1/completions", {{"prompt", "x"}, {"model", "other"}}), 404);
  EXPECT_EQ(status("/v1/completions", {{"prompt", std::vector<int>(200, 1)}}), 400);  // past the context
  EXPECT_EQ(status("/v1/completions", {{"prompt", "x"}, {"logit_bias", {{"99999", 1}}}}), 400);
  EXPECT_EQ(status("/v1/completions", {{"prompt", "x"}, {"max_tokens", 129}}), 400);
  EXPECT_FALSE(f.pipeline->has_non_finished_requests());
}

TEST(OpenAiRoutes, SeveralModelsEachWithItsOwnPipeline) {
  const auto llama3 = testing::load_golden_checkpoint("llama3_tiny");
  const auto llama2 = testing::load_golden_checkpoint("llama2_tiny");
  OpenAiRoutes routes({.models = {{"three", {}}, {"two", {}}}});
  const auto body = [](const std::string& model, const std::vector<std::int32_t>& ids) {
    return json{{"model", model}, {"prompt", ids}, {"max_tokens", 4}, {"temperature", 0}, {"ignore_eos", true}}.dump();
  };
  const auto status = [&](const std::string& b) {
    const Reply r = routes.handle({.method = "POST", .path = "/v1/completions", .headers = {}, .body = b});
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r).status : 200;
  };
  EXPECT_EQ(status(body("two", llama2.prompts[0].ids)), 503);  // still loading
  auto three = Fixture::load(llama3.dir);
  auto two = Fixture::load(llama2.dir);
  routes.set_pipeline("three", three);
  routes.set_pipeline("two", two);
  for (const auto& [name, golden, pipe] : {std::tuple{"three", &llama3, three}, std::tuple{"two", &llama2, two}}) {
    const Reply r = routes.handle(
        {.method = "POST", .path = "/v1/completions", .headers = {}, .body = body(name, golden->prompts[0].ids)});
    Poller poller(pending_of(r));
    const Progress done = poller.run();
    ASSERT_TRUE(done.response);
    const auto& ids = golden->prompts[0].greedy_ids;
    EXPECT_EQ(json::parse(done.response->body)["choices"][0]["text"],
              pipe->get_tokenizer().decode(std::vector<std::int32_t>(ids.begin(), ids.begin() + 4)))
        << name;
  }
  const json unnamed = {{"prompt", "x"}};
  EXPECT_EQ(status(unnamed.dump()), 400);  // several served: model is required
  const Reply listed = routes.handle({.method = "GET", .path = "/v1/models", .headers = {}, .body = ""});
  EXPECT_EQ(json::parse(std::get<HttpResponse>(listed).body)["data"].size(), 2u);
}

}  // namespace
}  // namespace kiln::server
