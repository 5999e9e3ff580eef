#include "cli/json_output.hpp"

namespace kiln::cli {

JsonOutput::JsonOutput(const std::string& path)
    : writer_(path.empty() ? nullptr : std::make_unique<AtomicFileWriter>(path)) {}

void JsonOutput::write(const Json& json) {
  if (!writer_) return;
  // Invalid UTF-8 in a generated text is replaced, not an error: the results are still written.
  writer_->write(json.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
  writer_->commit();
  writer_.reset();
}

}  // namespace kiln::cli
