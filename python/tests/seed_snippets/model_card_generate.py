import openvino_genai as ov_genai

model_path = "./Llama-3.2-1B-Computer-Engineering-OpenVINO-INT4"

# CPU, GPU, or NPU depending on available OpenVINO devices.
device = "CPU"

pipe = ov_genai.LLMPipeline(
    model_path,
    device,
)

config = ov_genai.GenerationConfig()

config.max_new_tokens = 200
config.do_sample = True
config.temperature = 0.7
config.top_p = 0.9
config.repetition_penalty = 1.1
config.apply_chat_template = False

question = "Explain the purpose of CPU cache memory."

prompt = f"""Q: {question}
A:"""

result = pipe.generate(
    prompt,
    config,
)

print(result)
