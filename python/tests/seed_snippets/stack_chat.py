import openvino_genai as ov_genai

pipe = ov_genai.LLMPipeline("llama31-8b-int4-ov", "GPU")   # or "CPU", "NPU"

config = pipe.get_generation_config()
config.max_new_tokens = 256
config.temperature = 0.2
config.top_p = 0.9

def streamer(subword):
    print(subword, end="", flush=True)
    return False            # bool convention: True asks the pipeline to stop

pipe.start_chat()           # keeps history and reuses the KV cache across turns
pipe.generate("Summarise what a stateful OpenVINO model is.", config, streamer)
pipe.generate("Now in one sentence.", config, streamer)
pipe.finish_chat()
