// Oracle: the documented --config format (serve_config.hpp): fields map onto the scheduler and
// pipeline, relative paths resolve against the file, and every mistake names file and field.
#include "server/serve_config.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.hpp"

namespace kiln::server {
namespace {

std::filesystem::path write(const testing::TempDir& dir, const std::string& text) {
  const auto path = dir.path() / "models.json";
  std::ofstream(path) << text;
  return path;
}

TEST(ServeConfig, ReadsEveryField) {
  testing::TempDir dir;
  const auto path = write(dir, R"({"models": [
    {"name": "a", "model": "m1", "device": "REFERENCE", "draft": "d", "context": 1024, "max_num_seqs": 8,
     "max_num_batched_tokens": 512, "cache_size": 2, "num_kv_blocks": 100, "enable_prefix_caching": false,
     "properties": {"KV_CACHE_PRECISION": "u8"}, "reasoning_parser": "qwen3", "tool_call_parser": "mistral"},
    {"name": "b", "model": "/abs/m2"}, {"name": "c", "model": "m3", "tool_call_parser": ""}]})");
  // The command line's parsers serve the models that name none.
  const AnswerParsers defaults{.split_reasoning = false, .tool_call_format = ToolCallFormat::kHermes};
  const auto models = read_models_config(path, defaults);
  ASSERT_EQ(models.size(), 3u);
  const ServedModelOptions& a = models[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dir, dir.path() / "m1");
  EXPECT_EQ(a.device, "REFERENCE");
  ASSERT_TRUE(a.properties.draft);
  EXPECT_EQ(a.properties.draft->dir, dir.path() / "d");
  EXPECT_EQ(a.properties.context_tokens, 1024);
  EXPECT_EQ(a.scheduler.max_num_seqs, 8);
  EXPECT_EQ(a.scheduler.max_num_batched_tokens, 512);
  EXPECT_EQ(a.scheduler.cache_size, 2u);
  EXPECT_EQ(a.scheduler.num_kv_blocks, 100);
  EXPECT_FALSE(a.scheduler.enable_prefix_caching);
  EXPECT_EQ(a.properties.device_properties.at("KV_CACHE_PRECISION"), "u8");
  EXPECT_EQ(models[1].dir, "/abs/m2");
  EXPECT_EQ(models[1].device, "CPU");
  EXPECT_TRUE(models[1].scheduler.enable_prefix_caching);
  EXPECT_TRUE(a.parsers.split_reasoning);
  EXPECT_EQ(a.parsers.tool_call_format, ToolCallFormat::kMistral);
  EXPECT_FALSE(models[1].parsers.split_reasoning);
  EXPECT_EQ(models[1].parsers.tool_call_format, ToolCallFormat::kHermes);
  EXPECT_FALSE(models[2].parsers.tool_call_format) << "an empty name turns the default off";
}

TEST(ServeConfig, MistakesNameFileAndField) {
  testing::TempDir dir;
  const auto bad = [&](const std::string& text, const char* part) {
    EXPECT_KILN_ERROR(read_models_config(write(dir, text)), part);
  };
  bad(R"({"models": []})", "models");
  bad(R"([1])", "models");
  bad(R"({"models": [{"model": "m"}]})", "name");
  bad(R"({"models": [{"name": "a"}]})", "model");
  bad(R"({"models": [{"name": "a", "model": "m", "contxt": 5}]})", "contxt");
  bad(R"({"models": [{"name": "a", "model": "m", "max_num_seqs": 0}]})", "max_num_seqs");
  bad(R"({"models": [{"name": "a", "model": "m", "context": "long"}]})", "context");
  bad(R"({"models": [{"name": "a", "model": "m"}, {"name": "a", "model": "n"}]})", "served twice");
  bad(R"({"models": [{"name": "a", "model": "m", "properties": {"X": 1}}]})", "properties");
  bad(R"({"models": [{"name": "a", "model": "m", "tool_call_parser": "pythonic"}]})", "pythonic");
  bad(R"({"models": [{"name": "a", "model": "m", "reasoning_parser": "r1"}]})", "models[0]");
  EXPECT_KILN_ERROR(read_models_config(dir.path() / "missing.json"), "missing.json");
}

// vLLM's --kv-events-config object, with its defaults.
TEST(ServeConfig, ReadsKvEventsConfig) {
  testing::TempDir dir;
  const auto models = read_models_config(write(dir, R"({"models": [
    {"name": "a", "model": "m", "kv_events_config": {"enable_kv_cache_events": true, "publisher": "zmq",
     "endpoint": "tcp://*:6000", "replay_endpoint": "tcp://*:6001", "topic": "kv", "buffer_steps": 5, "hwm": 7}},
    {"name": "b", "model": "m", "kv_events_config": {"enable_kv_cache_events": true, "publisher": "null"}},
    {"name": "c", "model": "m"}]})"));
  const KvEventsConfig& a = models[0].kv_events;
  EXPECT_TRUE(a.enabled);
  EXPECT_EQ(a.endpoint, "tcp://*:6000");
  EXPECT_EQ(a.replay_endpoint, "tcp://*:6001");
  EXPECT_EQ(a.topic, "kv");
  EXPECT_EQ(a.buffer_steps, 5);
  EXPECT_EQ(a.hwm, 7);
  EXPECT_FALSE(models[1].kv_events.enabled) << "the null publisher publishes nothing";
  const KvEventsConfig& c = models[2].kv_events;
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.endpoint, "tcp://*:5557");
  EXPECT_TRUE(c.replay_endpoint.empty());
  EXPECT_EQ(c.buffer_steps, 10000);

  const auto bad = [&](const std::string& config, const char* part) {
    const std::string text = R"({"models": [{"name": "a", "model": "m", "kv_events_config": )" + config + "}]}";
    EXPECT_KILN_ERROR(read_models_config(write(dir, text)), part);
  };
  bad(R"({"enable_kv_cache_events": true, "endpont": "x"})", "endpont");
  bad(R"({"publisher": "kafka"})", "publisher");
  bad(R"({"max_queue_size": 10})", "max_queue_size");
  bad(R"({"buffer_steps": -1})", "buffer_steps");
  bad(R"({"endpoint": ""})", "endpoint");
  bad(R"("on")", "kv_events_config");
}

}  // namespace
}  // namespace kiln::server
