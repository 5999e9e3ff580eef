import openvino_genai as ov_genai

scheduler = ov_genai.SchedulerConfig()
scheduler.cache_size = 2                       # KV-cache pool in GB

draft = ov_genai.draft_model("llama32-1b-int4-ov", "CPU")
pipe = ov_genai.LLMPipeline("llama31-8b-int4-ov", "GPU",
                            scheduler_config=scheduler, draft_model=draft)

config = pipe.get_generation_config()
config.max_new_tokens = 200
config.num_assistant_tokens = 5                # tokens proposed per step
print(pipe.generate("Explain paged attention briefly.", config))
