#include "export/side_files.hpp"

namespace kiln::exporter {

void copy_side_files(const std::filesystem::path& from, const std::filesystem::path& to) {
  constexpr const char* kSideFiles[] = {"tokenizer.json",
                                        "tokenizer_config.json",
                                        "special_tokens_map.json",
                                        "tokenizer.model",
                                        "generation_config.json",
                                        "chat_template.jinja",
                                        "chat_template.json",
                                        "vocab.json",
                                        "merges.txt"};
  for (const char* name : kSideFiles) {
    if (std::filesystem::exists(from / name)) std::filesystem::copy_file(from / name, to / name);
  }
}

}  // namespace kiln::exporter
