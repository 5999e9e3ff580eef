// The files a model directory carries beside its weights that a tokenizer or generation needs
// (tokenizer.json, tokenizer_config.json, the chat template, generation_config.json, ...): every
// export, kiln's IR or OpenVINO's, copies them from its source.
#pragma once

#include <filesystem>

namespace kiln::exporter {

// Copies those of the files present in `from` into `to` (an existing directory).
void copy_side_files(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace kiln::exporter
