// Tokenizer (encode to TokenizedInputs, decode, chat templates) and ChatHistory, as openvino_genai
// has them; messages are dicts with "role" and "content".
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "bindings.hpp"
#include "kiln/chat_history.hpp"
#include "kiln/tokenizer.hpp"
#include "tokenized_inputs.hpp"

namespace kiln::python {

std::vector<std::vector<std::int32_t>> prompts_of(const TokenizedInputs& inputs) {
  const IdTensor& ids = inputs.input_ids;
  const IdTensor& mask = inputs.attention_mask;
  const bool masked = !mask.values.empty();
  if (masked && (mask.rows != ids.rows || mask.columns != ids.columns)) {
    throw py::value_error("TokenizedInputs: attention_mask is " + std::to_string(mask.rows) + "x" +
                          std::to_string(mask.columns) + ", input_ids " + std::to_string(ids.rows) + "x" +
                          std::to_string(ids.columns));
  }
  std::vector<std::vector<std::int32_t>> out(ids.rows);
  for (std::size_t r = 0; r < ids.rows; ++r) {
    for (std::size_t c = 0; c < ids.columns; ++c) {
      const std::size_t i = r * ids.columns + c;
      if (masked && mask.values[i] == 0) continue;
      const std::int64_t id = ids.values[i];
      if (id < 0 || id > std::numeric_limits<std::int32_t>::max()) {
        throw py::value_error("TokenizedInputs: input_ids[" + std::to_string(r) + "][" + std::to_string(c) + "] is " +
                              std::to_string(id) + ", not a token id");
      }
      out[r].push_back(static_cast<std::int32_t>(id));
    }
  }
  return out;
}

namespace {

py::dict to_dict(const ChatMessage& message) {
  py::dict d;
  d["role"] = message.role;
  d["content"] = message.content;
  return d;
}

ChatMessage to_message(const py::handle& value) {
  if (!py::isinstance<py::dict>(value)) throw py::type_error("a chat message is a dict with 'role' and 'content'");
  const auto d = value.cast<py::dict>();
  for (const auto& [key, unused] : d) {
    const std::string name = py::str(key);
    if (name != "role" && name != "content") {
      throw py::value_error("chat message: kiln keeps 'role' and 'content', not '" + name + "'");
    }
  }
  if (!d.contains("role") || !d.contains("content")) throw py::value_error("chat message: needs 'role' and 'content'");
  return {d["role"].cast<std::string>(), d["content"].cast<std::string>()};
}

ChatHistory to_history(const py::iterable& messages) {
  ChatHistory history;
  for (const py::handle m : messages) history.push_back(to_message(m));
  return history;
}

py::object tensor_data(const IdTensor& t) {
  py::list rows;
  for (std::size_t r = 0; r < t.rows; ++r) {
    py::list row;
    for (std::size_t c = 0; c < t.columns; ++c) row.append(t.values[r * t.columns + c]);
    rows.append(row);
  }
  return rows;
}

IdTensor to_tensor(const py::iterable& rows) {
  IdTensor t;
  for (const py::handle row : rows) {
    const auto values = row.cast<std::vector<std::int64_t>>();
    if (t.rows == 0) t.columns = values.size();
    if (values.size() != t.columns) throw py::value_error("Tensor: rows of different lengths");
    t.values.insert(t.values.end(), values.begin(), values.end());
    ++t.rows;
  }
  return t;
}

// Rows of ids as a rectangle: truncated to max_length, padded (to the longest row, or to
// max_length when pad_to_max_length) on `padding_side` with the pad id; the mask marks real ids.
TokenizedInputs pad(const std::vector<std::vector<std::int32_t>>& rows, std::int64_t pad_id,
                    std::optional<std::size_t> max_length, bool pad_to_max_length, bool left) {
  std::size_t columns = 0;
  for (const auto& row : rows) columns = std::max(columns, max_length ? std::min(row.size(), *max_length) : row.size());
  if (pad_to_max_length && max_length) columns = *max_length;
  TokenizedInputs out;
  for (IdTensor* t : {&out.input_ids, &out.attention_mask}) {
    t->rows = rows.size();
    t->columns = columns;
    t->values.reserve(rows.size() * columns);
  }
  for (const auto& row : rows) {
    const std::size_t n = std::min(row.size(), columns);
    const std::size_t padding = columns - n;
    const auto add_padding = [&] {
      out.input_ids.values.insert(out.input_ids.values.end(), padding, pad_id);
      out.attention_mask.values.insert(out.attention_mask.values.end(), padding, 0);
    };
    if (left) add_padding();
    out.input_ids.values.insert(out.input_ids.values.end(), row.begin(), row.begin() + static_cast<std::ptrdiff_t>(n));
    out.attention_mask.values.insert(out.attention_mask.values.end(), n, 1);
    if (!left) add_padding();
  }
  return out;
}

std::int64_t id_or_minus_one(const std::optional<std::int32_t>& id) { return id ? *id : -1; }

void bind_chat_history(py::module_& m) {
  py::class_<ChatHistory>(m, "ChatHistory", "A conversation: messages in order, each {'role': ..., 'content': ...}.")
      .def(py::init<>())
      .def(py::init(&to_history), py::arg("messages"))
      .def("append", [](ChatHistory& h, const py::handle& message) { h.push_back(to_message(message)); })
      .def("extend",
           [](ChatHistory& h, const py::iterable& messages) {
             for (const py::handle m : messages) h.push_back(to_message(m));
           })
      .def("pop",
           [](ChatHistory& h) {
             if (h.empty()) throw py::index_error("pop from an empty ChatHistory");
             py::dict last = to_dict(h.back());
             h.pop_back();
             return last;
           })
      .def("clear", &ChatHistory::clear)
      .def("get_messages",
           [](const ChatHistory& h) {
             py::list out;
             for (const ChatMessage& message : h) out.append(to_dict(message));
             return out;
           })
      .def("__len__", &ChatHistory::size)
      .def("__bool__", [](const ChatHistory& h) { return !h.empty(); })
      .def("__getitem__", [](const ChatHistory& h, std::ptrdiff_t i) {
        const auto n = static_cast<std::ptrdiff_t>(h.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("ChatHistory index out of range");
        return to_dict(h[static_cast<std::size_t>(i)]);
      });
  py::implicitly_convertible<py::list, ChatHistory>();
}

void bind_tokenized_inputs(py::module_& m) {
  py::class_<IdTensor>(m, "Tensor", "Token ids or an attention mask: rows x columns of int64.")
      .def(py::init(&to_tensor), py::arg("rows"))
      .def_property_readonly("shape", [](const IdTensor& t) { return py::make_tuple(t.rows, t.columns); })
      .def_property_readonly("data", &tensor_data)
      .def("tolist", &tensor_data)
      .def("__len__", [](const IdTensor& t) { return t.rows; });
  py::implicitly_convertible<py::list, IdTensor>();

  py::class_<TokenizedInputs>(m, "TokenizedInputs", "Prompts as token ids with their attention mask.")
      .def(py::init([](IdTensor ids, IdTensor mask) {
             return TokenizedInputs{std::move(ids), std::move(mask)};
           }),
           py::arg("input_ids"), py::arg("attention_mask"))
      .def_readwrite("input_ids", &TokenizedInputs::input_ids)
      .def_readwrite("attention_mask", &TokenizedInputs::attention_mask);
}

void bind_tokenizer_class(py::module_& m) {
  py::class_<Tokenizer>(m, "Tokenizer", "A Hugging Face tokenizer (tokenizer.json) with its chat template.")
      .def(py::init([](const std::filesystem::path& path, const py::dict& properties, const py::kwargs& kwargs) {
             if (!properties.empty() || !kwargs.empty()) throw py::value_error("Tokenizer: kiln takes no properties");
             return Tokenizer::from_dir(path);
           }),
           py::arg("tokenizer_path"), py::arg("properties") = py::dict(), py::call_guard<py::gil_scoped_release>())
      .def(
          "encode",
          [](const Tokenizer& t, const py::object& prompts, bool add_special_tokens, bool pad_to_max_length,
             std::optional<std::size_t> max_length, std::optional<std::string> padding_side) {
            std::vector<std::string> texts;
            if (py::isinstance<py::str>(prompts)) {
              texts.push_back(prompts.cast<std::string>());
            } else {
              texts = prompts.cast<std::vector<std::string>>();
            }
            if (padding_side && *padding_side != "left" && *padding_side != "right") {
              throw py::value_error("encode: padding_side is 'left' or 'right', got '" + *padding_side + "'");
            }
            std::vector<std::vector<std::int32_t>> rows;
            {
              py::gil_scoped_release release;
              rows = t.encode_batch(texts, add_special_tokens);
            }
            const std::int64_t pad_id = t.pad_token_id().value_or(t.eos_token_id().value_or(0));
            return pad(rows, pad_id, max_length, pad_to_max_length, padding_side == "left");
          },
          py::arg("prompts"), py::arg("add_special_tokens") = true, py::arg("pad_to_max_length") = false,
          py::arg("max_length") = py::none(), py::arg("padding_side") = py::none())
      .def(
          "decode",
          [](const Tokenizer& t, const py::object& tokens, bool skip_special_tokens) -> py::object {
            const auto decode = [&](const std::vector<std::int32_t>& ids) {
              return t.decode(ids, skip_special_tokens);
            };
            if (py::isinstance<IdTensor>(tokens)) {
              const auto& tensor = tokens.cast<const IdTensor&>();
              std::vector<std::string> out;
              for (std::size_t r = 0; r < tensor.rows; ++r) {
                const auto row = tensor.values.begin() + static_cast<std::ptrdiff_t>(r * tensor.columns);
                out.push_back(decode({row, row + static_cast<std::ptrdiff_t>(tensor.columns)}));
              }
              return py::cast(out);
            }
            const auto seq = tokens.cast<py::sequence>();
            if (seq.size() > 0 && !py::isinstance<py::int_>(seq[0])) {
              std::vector<std::string> out;
              for (const auto& ids : seq.cast<std::vector<std::vector<std::int32_t>>>()) out.push_back(decode(ids));
              return py::cast(out);
            }
            return py::cast(decode(seq.cast<std::vector<std::int32_t>>()));
          },
          py::arg("tokens"), py::arg("skip_special_tokens") = true)
      .def(
          "apply_chat_template",
          [](const Tokenizer& t, const ChatHistory& history, bool add_generation_prompt,
             const std::string& chat_template) {
            return t.apply_chat_template(history, add_generation_prompt, chat_template);
          },
          py::arg("history"), py::arg("add_generation_prompt"), py::arg("chat_template") = "")
      .def_property_readonly("chat_template", &Tokenizer::chat_template)
      .def("get_bos_token_id", [](const Tokenizer& t) { return id_or_minus_one(t.bos_token_id()); })
      .def("get_eos_token_id", [](const Tokenizer& t) { return id_or_minus_one(t.eos_token_id()); })
      .def("get_pad_token_id", [](const Tokenizer& t) { return id_or_minus_one(t.pad_token_id()); })
      .def("get_bos_token", &Tokenizer::bos_token)
      .def("get_eos_token", &Tokenizer::eos_token)
      .def("get_pad_token", &Tokenizer::pad_token)
      .def("get_vocab_size", &Tokenizer::vocab_size)
      .def("get_vocab",
           [](const Tokenizer& t) {
             py::dict vocab;
             for (std::int32_t id = 0; id < t.vocab_size(); ++id) {
               if (t.has_id(id)) vocab[py::str(t.id_to_token(id))] = id;
             }
             return vocab;
           })
      .def("token_to_id", &Tokenizer::token_to_id)
      .def("id_to_token", &Tokenizer::id_to_token)
      .def("fingerprint", &Tokenizer::fingerprint);
}

}  // namespace

void bind_tokenizer(py::module_& m) {
  bind_chat_history(m);
  bind_tokenized_inputs(m);
  bind_tokenizer_class(m);
}

}  // namespace kiln::python
