// The OpenAPI document of the server's routes (src/server/data/openapi.json, compiled in), served
// at GET /openapi.json. The client tests hold the server to it (schemathesis), so it is the
// contract, kept beside the code it describes.
#pragma once

#include <string_view>

namespace kiln::server {

std::string_view openapi_spec();

}  // namespace kiln::server
