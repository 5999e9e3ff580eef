// A file mapped by kiln (weights, a compile-cache entry) that is truncated while mapped turns the
// next read past its new end into SIGBUS, which would kill the process without a word. The live
// mappings are registered here, and a SIGBUS handler names the file whose mapping faulted before
// the process ends as the signal's default would (a supervisor still sees SIGBUS). A fault
// outside every registered mapping goes to the handler installed before kiln's.
#pragma once

#include <cstddef>
#include <filesystem>

namespace kiln {

// Registers [begin, begin + size) as a mapping of `path` (installing the handler on first use).
// A process holds at most 256 registered mappings at once; past that, a fault there is unnamed.
void register_mapping(const void* begin, std::size_t size, const std::filesystem::path& path);
void unregister_mapping(const void* begin);

}  // namespace kiln
