#include "server/serve_config.hpp"

#include <set>

#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln::server {
namespace {

const std::set<std::string> kFields = {"name",
                                       "model",
                                       "device",
                                       "draft",
                                       "context",
                                       "max_num_seqs",
                                       "max_num_batched_tokens",
                                       "cache_size",
                                       "num_kv_blocks",
                                       "enable_prefix_caching",
                                       "properties",
                                       "reasoning_parser",
                                       "tool_call_parser",
                                       "kv_events_config"};

ServedModelOptions read_model(const Json& entry, const std::string& where, const std::filesystem::path& base,
                              const AnswerParsers& default_parsers) {
  if (!entry.is_object()) fail("{}: must be an object", where);
  const JsonFields f(entry, where);
  for (const auto& [key, value] : entry.items()) {
    if (!kFields.contains(key)) f.fail_field(key, "is not a field of a served model");
  }
  ServedModelOptions m;
  m.name = f.get<std::string>("name");
  if (m.name.empty()) f.fail_field("name", "must not be empty");
  const auto resolve = [&](const std::string& path) { return base / std::filesystem::path(path); };
  m.dir = resolve(f.get<std::string>("model"));
  m.device = f.get_or<std::string>("device", m.device);
  if (const auto draft = f.get_optional<std::string>("draft"))
    m.properties.draft = draft_model(resolve(*draft), m.device);
  m.properties.context_tokens = f.get_or<std::int64_t>("context", m.properties.context_tokens);
  m.scheduler.max_num_seqs = f.get_or<std::int32_t>("max_num_seqs", m.scheduler.max_num_seqs);
  m.scheduler.max_num_batched_tokens =
      f.get_or<std::int64_t>("max_num_batched_tokens", m.scheduler.max_num_batched_tokens);
  m.scheduler.cache_size = f.get_or<std::size_t>("cache_size", m.scheduler.cache_size);
  m.scheduler.num_kv_blocks = f.get_or<std::int64_t>("num_kv_blocks", m.scheduler.num_kv_blocks);
  m.scheduler.enable_prefix_caching = f.get_or<bool>("enable_prefix_caching", m.scheduler.enable_prefix_caching);
  if (m.properties.context_tokens < 1) f.fail_field("context", "must be at least 1");
  if (m.scheduler.max_num_seqs < 1) f.fail_field("max_num_seqs", "must be at least 1");
  if (m.scheduler.max_num_batched_tokens < 1) f.fail_field("max_num_batched_tokens", "must be at least 1");
  if (m.scheduler.num_kv_blocks < 0) f.fail_field("num_kv_blocks", "must be at least 0");
  if (const auto it = entry.find("properties"); it != entry.end() && !it->is_null()) {
    if (!it->is_object()) f.fail_field("properties", "must be an object of NAME: VALUE strings");
    for (const auto& [name, value] : it->items()) {
      if (!value.is_string()) f.fail_field("properties", "value of " + name + " must be a string");
      m.properties.device_properties[name] = value.get<std::string>();
    }
  }
  if (const auto it = entry.find("kv_events_config"); it != entry.end() && !it->is_null()) {
    m.kv_events = read_kv_events_config(*it, where + ": kv_events_config");
  }
  const AnswerParsers own = answer_parsers(f.get_or<std::string>("reasoning_parser", ""),
                                           f.get_or<std::string>("tool_call_parser", ""), where);
  m.parsers.split_reasoning =
      entry.contains("reasoning_parser") ? own.split_reasoning : default_parsers.split_reasoning;
  m.parsers.tool_call_format =
      entry.contains("tool_call_parser") ? own.tool_call_format : default_parsers.tool_call_format;
  return m;
}

}  // namespace

std::vector<ServedModelOptions> read_models_config(const std::filesystem::path& file,
                                                   const AnswerParsers& default_parsers) {
  const Json config = read_json_file(file);
  const std::string origin = file.string();
  if (!config.is_object()) fail("{}: must be a JSON object with a \"models\" array", origin);
  const JsonFields f(config, origin);
  const auto models = config.find("models");
  if (models == config.end() || !models->is_array() || models->empty()) {
    f.fail_field("models", "must be a non-empty array of served models");
  }
  std::vector<ServedModelOptions> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < models->size(); ++i) {
    const std::string where = origin + ": models[" + std::to_string(i) + "]";
    out.push_back(read_model((*models)[i], where, file.parent_path(), default_parsers));
    if (!names.insert(out.back().name).second) fail("{}: name '{}' is served twice", where, out.back().name);
  }
  return out;
}

}  // namespace kiln::server
