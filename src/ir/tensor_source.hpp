// Where a model's tensors come from: a Hugging Face checkpoint today, kiln's IR later. Model
// code asks for tensors by their Hugging Face name and never learns which file holds them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor_view.hpp"

namespace kiln::ir {

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // nullptr when absent. The view stays valid as long as the source lives.
  virtual const TensorView* find(std::string_view name) const = 0;
  virtual std::vector<std::string> names() const = 0;
  // For error messages: the directory or file the tensors come from.
  virtual std::string origin() const = 0;
};

}  // namespace kiln::ir
