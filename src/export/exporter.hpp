// `kiln export`: a Hugging Face checkpoint in, kiln's IR out (docs/FORMAT.md). The checkpoint is
// validated, the recipe resolved (export_options.hpp), calibration run when an algorithm needs
// it, precisions planned (precision_plan.hpp), then tensors are read, compressed and written one
// at a time (a layer at a time with AWQ) into a staging directory that is renamed into place only
// when everything, manifest included, is written: an error or Ctrl-C leaves no OUT_DIR.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "export/calibration.hpp"
#include "export/export_options.hpp"

namespace kiln::exporter {

struct ExportResult {
  std::filesystem::path out_dir;
  ExportRecipe recipe;
  std::int64_t num_parameters = 0;
  std::uint64_t model_bin_bytes = 0;
  std::map<std::string, std::int64_t> tensors_by_scheme;  // "int4_sym" → count
  double seconds = 0;
  std::map<std::string, double> phase_seconds;  // "calibration", "sensitivity", "compression", "finish"
  std::int64_t peak_rss_bytes = 0;
};

// `backend` computes calibration forward passes (default: the reference backend).
ExportResult export_model(const ExportOptions& options, const BackendFactory& backend = {});

}  // namespace kiln::exporter
