// The valid model directories model_files_fuzz starts every input from, built once per process
// in its scratch directory from the committed checkpoint fixtures, and the files it may replace.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::fuzz {

enum class ModelKind { kHfCheckpoint, kIr };

struct ModelFile {
  ModelKind kind;              // which loader opens the directory it lies in
  std::filesystem::path path;  // in the scratch directory
  std::string base;            // its valid contents, restored after each input
  std::string seed;            // a smaller valid stand-in for the seed, or empty for `base`
};

// A Phi-3 checkpoint (fused projections, longrope), a sharded Llama 2 one and kiln's IR of part
// of the Phi-3 one (plain, int4_asym and int8_sym tensors), under `scratch`; the files in
// selector order.
std::vector<ModelFile> make_model_files(const std::filesystem::path& scratch);

// One seed per file (its selector byte, then its contents) into `dir`, except those over 64 KB.
void write_model_file_seeds(const std::vector<ModelFile>& files, const std::filesystem::path& dir);

}  // namespace kiln::fuzz
