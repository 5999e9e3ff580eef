// A program outside kiln's tree, built against the installed libkiln: it prints the greedy
// continuation of a prompt as `kiln run` does, after checking that the streamed text is the
// returned one; a model that cannot be loaded throws kiln::Error, caught here across the
// library boundary.
#include <kiln/error.hpp>
#include <kiln/llm_pipeline.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: consumer MODEL_DIR PROMPT\n";
    return 64;
  }
  try {
    kiln::LLMPipeline pipe(argv[1]);
    kiln::GenerationConfig config = pipe.get_generation_config();
    config.max_new_tokens = 24;
    config.do_sample = false;
    config.apply_chat_template = false;
    std::string streamed;
    const kiln::DecodedResults result =
        pipe.generate(argv[2], config, kiln::TextStreamerCallback([&](const std::string& piece) {
                        streamed += piece;
                        return kiln::StreamingStatus::RUNNING;
                      }));
    if (streamed != result.texts.at(0)) {
      std::cerr << "streamed '" << streamed << "' but returned '" << result.texts.at(0) << "'\n";
      return 3;
    }
    std::cout << streamed << "\n";
  } catch (const kiln::Error& error) {
    std::cerr << "kiln::Error: " << error.what() << "\n";
    return 2;
  }
}
