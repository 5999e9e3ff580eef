#include "eval/jsonl_reader.hpp"

#include <sstream>

#include "util/error.hpp"
#include "util/file_io.hpp"

namespace kiln::eval {

void for_each_jsonl_object(const std::filesystem::path& path, const std::function<void(const JsonFields&)>& visit) {
  std::istringstream lines(read_file(path));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string origin = fmt::format("{}: line {}", path.string(), number);
    const Json json = parse_json_text(line, origin);
    if (!json.is_object()) fail("{}: expected a JSON object", origin);
    visit(JsonFields(json, origin));
  }
}

}  // namespace kiln::eval
