#include "export/synthetic_checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "export/byte_level_tokenizer.hpp"
#include "export/progress_bar.hpp"
#include "ir/model_config.hpp"
#include "ir/safetensors_writer.hpp"
#include "models/tensor_specs.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/half.hpp"
#include "util/path_probe.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;

constexpr float kInitStd = 0.02f;  // Llama's initializer_range
constexpr std::size_t kChunkElements = 1u << 20;

Json llama3_rope(double factor) {
  return {{"rope_type", "llama3"},
          {"factor", factor},
          {"low_freq_factor", 1.0},
          {"high_freq_factor", 4.0},
          {"original_max_position_embeddings", 8192}};
}

Json llama3_config(std::int64_t hidden, std::int64_t layers, std::int64_t heads, std::int64_t kv_heads,
                   std::int64_t intermediate, bool tied, double rope_factor) {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", hidden},
          {"num_hidden_layers", layers},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"head_dim", hidden / heads},
          {"intermediate_size", intermediate},
          {"vocab_size", 128256},
          {"max_position_embeddings", 131072},
          {"rms_norm_eps", 1e-5},
          {"rope_theta", 500000.0},
          {"rope_scaling", llama3_rope(rope_factor)},
          {"tie_word_embeddings", tied},
          {"attention_bias", false},
          {"mlp_bias", false},
          {"hidden_act", "silu"},
          {"bos_token_id", 128000},
          {"eos_token_id", 128001},
          {"torch_dtype", "bfloat16"}};
}

// Qwen2.5 / Qwen3 shapes (the published config.json's fields kiln reads; tied embeddings).
Json qwen_config(const char* architecture, std::int64_t hidden, std::int64_t layers, std::int64_t heads,
                 std::int64_t kv_heads, std::int64_t head_dim, std::int64_t intermediate, std::int64_t context) {
  return {{"architectures", {architecture}},
          {"hidden_size", hidden},
          {"num_hidden_layers", layers},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"head_dim", head_dim},
          {"intermediate_size", intermediate},
          {"vocab_size", 151936},
          {"max_position_embeddings", context},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 1000000.0},
          {"tie_word_embeddings", true},
          {"use_sliding_window", false},
          {"attention_bias", false},
          {"hidden_act", "silu"},
          {"bos_token_id", 151643},
          {"eos_token_id", 151645},
          {"torch_dtype", "bfloat16"}};
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// ≈ N(0, std²): the sum of four 16-bit uniforms of one random word (Irwin–Hall), one hash per value.
float gaussian_like(std::uint64_t key, float std) {
  const std::uint64_t r = splitmix64(key);
  double sum = 0;
  for (int k = 0; k < 4; ++k) sum += static_cast<double>((r >> (16 * k)) & 0xffff) / 65536.0;
  return static_cast<float>((sum - 2.0) * std::sqrt(3.0) * std);
}

ElementType checkpoint_dtype(const ir::ModelConfig& c) {
  if (c.torch_dtype == "float32") return ElementType::kF32;
  if (c.torch_dtype == "float16") return ElementType::kF16;
  return ElementType::kBf16;
}

// Appends `count` values of tensor `spec` starting at `first`, encoded in `dtype`.
void encode_values(const models::TensorSpec& spec, std::uint64_t seed, std::uint64_t first, std::size_t count,
                   ElementType dtype, std::vector<std::uint8_t>& out) {
  const std::uint64_t base = splitmix64(seed ^ name_hash(spec.name));
  // Every norm gain (layer norms, Qwen3's per-head q/k norms, the final norm).
  const bool is_norm = spec.role == models::TensorRole::kNorm && spec.name.ends_with("norm.weight");
  out.resize(count * element_bytes(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    // Norm gains start at one, as a freshly initialised model's; everything else is noise.
    const float v = is_norm ? 1.0f : gaussian_like(base + first + i, kInitStd);
    if (dtype == ElementType::kF32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      const std::uint16_t h = dtype == ElementType::kF16 ? f32_to_f16(v) : f32_to_bf16(v);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
}

void write_tokenizer(const SynthOptions& o, const ir::ModelConfig& c, const fs::path& dir) {
  if (o.tokenizer_dir) {
    bool any = false;
    for (const char* name : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model"}) {
      if (fs::exists(*o.tokenizer_dir / name)) {
        fs::copy_file(*o.tokenizer_dir / name, dir / name);
        any = true;
      }
    }
    if (!any)
      fail(ErrorKind::kNotFound, "--tokenizer {}: no tokenizer.json or tokenizer.model there",
           o.tokenizer_dir->string());
    return;
  }
  ByteLevelTokenizerSpec spec;
  spec.vocab_size = c.vocab_size;
  spec.bos_token_id = c.bos_token_id.value_or(static_cast<std::int32_t>(c.vocab_size - 2));
  spec.eos_token_id = c.eos_token_ids.empty() ? static_cast<std::int32_t>(c.vocab_size - 1) : c.eos_token_ids.front();
  spec.model_max_length = c.max_position_embeddings;
  write_byte_level_tokenizer(dir, spec);
}

}  // namespace

std::optional<Json> synth_preset_config(std::string_view like) {
  if (like == "llama-3.2-1b") return llama3_config(2048, 16, 32, 8, 8192, true, 32.0);
  if (like == "llama-3.1-8b") return llama3_config(4096, 32, 32, 8, 14336, false, 8.0);
  if (like == "qwen2.5-0.5b") return qwen_config("Qwen2ForCausalLM", 896, 24, 14, 2, 64, 4864, 32768);
  if (like == "qwen3-0.6b") return qwen_config("Qwen3ForCausalLM", 1024, 28, 16, 8, 128, 3072, 40960);
  return std::nullopt;
}

SynthResult synthesize_checkpoint(const SynthOptions& o) {
  Stopwatch clock;
  Json config_json;
  if (auto preset = synth_preset_config(o.like)) {
    config_json = *preset;
  } else if (is_file_path(o.like)) {
    config_json = read_json_file(o.like);
  } else {
    fail(
        "--like '{}' is neither a preset (llama-3.2-1b, llama-3.1-8b, qwen2.5-0.5b, qwen3-0.6b) nor a config.json file",
        o.like);
  }
  const ir::ModelConfig config = ir::parse_model_config(config_json, o.like);
  const ElementType dtype = checkpoint_dtype(config);
  const std::vector<models::TensorSpec> specs = models::tensor_specs(config);

  // Shards in model order, each up to max_shard_bytes (a larger tensor gets a shard of its own).
  std::vector<std::vector<std::size_t>> shards(1);
  std::uint64_t shard_bytes = 0;
  SynthResult result;
  std::vector<std::uint64_t> tensor_elements;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::uint64_t n = 1;
    for (std::int64_t d : specs[i].shape) n *= static_cast<std::uint64_t>(d);
    tensor_elements.push_back(n);
    const std::uint64_t bytes = n * element_bytes(dtype);
    if (!shards.back().empty() && shard_bytes + bytes > o.max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(i);
    shard_bytes += bytes;
    result.num_parameters += static_cast<std::int64_t>(n);
    result.weight_bytes += bytes;
  }
  result.num_shards = static_cast<std::int64_t>(shards.size());

  StagingDirectory staging(o.out_dir);
  ProgressBar progress(static_cast<std::int64_t>(result.weight_bytes >> 20), o.show_progress);
  std::uint64_t done_bytes = 0;
  Json weight_map = Json::object();
  std::vector<std::uint8_t> buffer;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::string file = shards.size() == 1
                                 ? "model.safetensors"
                                 : fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, shards.size());
    std::vector<ir::SafetensorsTensorInfo> infos;
    for (std::size_t i : shards[s]) {
      infos.push_back({specs[i].name, dtype, specs[i].shape});
      weight_map[specs[i].name] = file;
    }
    ir::SafetensorsStreamWriter writer(staging.path() / file, infos, {{"format", "pt"}});
    for (std::size_t i : shards[s]) {
      for (std::uint64_t first = 0; first < tensor_elements[i]; first += kChunkElements) {
        if (o.cancel && o.cancel->load()) fail("synth interrupted: {} not written", o.out_dir.string());
        const auto count =
            static_cast<std::size_t>(std::min<std::uint64_t>(kChunkElements, tensor_elements[i] - first));
        encode_values(specs[i], o.seed, first, count, dtype, buffer);
        writer.write(buffer);
        done_bytes += buffer.size();
        progress.update(static_cast<std::int64_t>(done_bytes >> 20), specs[i].name);
      }
    }
    writer.commit();
  }
  progress.finish();
  if (shards.size() > 1) {
    const Json index = {{"metadata", {{"total_size", result.weight_bytes}}}, {"weight_map", weight_map}};
    write_file_atomic(staging.path() / "model.safetensors.index.json", index.dump(2) + "\n");
  }
  write_file_atomic(staging.path() / "config.json", config_json.dump(2) + "\n");
  Json generation = {{"bos_token_id", config.bos_token_id.value_or(0)}, {"do_sample", false}};
  if (!config.eos_token_ids.empty()) generation["eos_token_id"] = config.eos_token_ids;
  write_file_atomic(staging.path() / "generation_config.json", generation.dump(2) + "\n");
  write_tokenizer(o, config, staging.path());
  staging.commit();
  result.seconds = clock.elapsed_ms() / 1000.0;
  return result;
}

}  // namespace kiln::exporter
