// Reading the JSON-lines inputs of `kiln eval` (task sets, prompt files): one object per
// non-blank line, each handed over with an origin ("FILE: line N") for error messages.
#pragma once

#include <filesystem>
#include <functional>

#include "util/json.hpp"

namespace kiln::eval {

// Calls `visit` for every non-blank line's object. Throws kiln::Error naming the file and line
// for a line that is not a JSON object.
void for_each_jsonl_object(const std::filesystem::path& path, const std::function<void(const JsonFields&)>& visit);

}  // namespace kiln::eval
