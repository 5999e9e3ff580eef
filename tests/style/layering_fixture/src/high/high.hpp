#pragma once
#include "kiln/low_api.hpp"
#include "low/low.hpp"
