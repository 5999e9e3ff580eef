// The --json FILE of a command that measures for a while (bench, eval, budget --measure): the
// file is opened before the work, so a path that cannot be written fails at once instead of
// after minutes of measuring, and it is written atomically at the end (nothing is left behind
// when the work fails).
#pragma once

#include <memory>
#include <string>

#include "util/file_io.hpp"
#include "util/json.hpp"

namespace kiln::cli {

class JsonOutput {
 public:
  explicit JsonOutput(const std::string& path);  // empty: no file
  bool enabled() const { return writer_ != nullptr; }
  // Writes `json` (indented, one trailing newline) and renames the file into place.
  void write(const Json& json);

 private:
  std::unique_ptr<AtomicFileWriter> writer_;
};

}  // namespace kiln::cli
