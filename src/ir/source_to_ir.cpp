#include "ir/source_to_ir.hpp"

#include "ir/ir_writer.hpp"
#include "util/error.hpp"

namespace kiln::ir {

void write_ir(const TensorSource& source, const ModelConfig& config, const std::filesystem::path& dir,
              const std::string& producer) {
  IrWriter writer(dir);
  for (const std::string& name : source.names()) {
    const TensorView& t = *source.find(name);
    if (!t.quantization) {
      writer.add_tensor(IrTensorEntry::plain(name, t.dtype, t.shape), t.bytes);
      continue;
    }
    const TensorQuantization& q = *t.quantization;
    IrTensorEntry codes = IrTensorEntry::plain(name, code_storage(q.scheme), t.shape);
    codes.quantization = IrQuantization{q.scheme, q.group_size, scale_tensor_name(name),
                                        has_zero_points(q.scheme) ? zero_point_tensor_name(name) : std::string()};
    writer.add_tensor(std::move(codes), t.bytes);
    const auto groups = static_cast<std::int64_t>(
        num_groups(static_cast<std::size_t>(t.shape[1]), static_cast<std::size_t>(q.group_size)));
    writer.add_tensor(IrTensorEntry::plain(scale_tensor_name(name), ElementType::kF16, {t.shape[0], groups}), q.scales);
    if (has_zero_points(q.scheme)) {
      writer.add_tensor(
          IrTensorEntry::plain(zero_point_tensor_name(name), zero_point_storage(q.scheme), {t.shape[0], groups}),
          q.zero_points);
    }
  }
  writer.finish(config, producer);
}

}  // namespace kiln::ir
