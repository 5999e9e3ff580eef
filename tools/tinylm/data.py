"""Training batches for kiln-tiny: random windows of man-page text plus packed Q/A sequences.

Invariant: a batch depends only on the corpus, the tokenizer and the numpy Generator passed in;
every Q/A sequence starts with a whole item at position 0 (the shape of an eval prompt), and
padding after the last whole item is masked out of the loss (so is each item's prompt part when
the loss is on answers only).
"""
import json
import os

import numpy as np

IGNORE_INDEX = -100


def load_corpus(corpus_dir):
    """(train page texts, heldout page texts, Q/A pairs) from make_corpus.py's output."""
    train, heldout = [], []
    with open(os.path.join(corpus_dir, "pages.jsonl"), encoding="utf-8") as f:
        for line in f:
            page = json.loads(line)
            (train if page["split"] == "train" else heldout).append(page["text"])
    with open(os.path.join(corpus_dir, "qa.jsonl"), encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    return train, heldout, pairs


def _prompt_length(prompt_ids, item_ids, what):
    """Number of leading item tokens that are the prompt (they must tokenise identically)."""
    if item_ids[:len(prompt_ids)] != prompt_ids:
        raise ValueError(f"Q/A item {what!r}: its prompt does not tokenise as a prefix of the "
                         f"whole item, so the answer tokens cannot be told apart")
    return len(prompt_ids)


def _as_list(ids):
    # transformers returns a BatchEncoding or a plain list depending on its version.
    return list(ids if isinstance(ids, list) else ids["input_ids"])


class BatchMaker:
    """Builds [batch, seq_len] input/label arrays; Q/A rows are a fixed share of every batch.

    qa_loss "all" trains on every Q/A token; "answer" masks each item's prompt ("Q: ...\nA:" or
    the chat template up to the assistant header) so Q/A gradients go to the answers only."""

    def __init__(self, tokenizer, texts, pairs, seq_len, chat_fraction, qa_loss="all"):
        if qa_loss not in ("all", "answer"):
            raise ValueError(f"qa_loss must be 'all' or 'answer', got {qa_loss!r}")
        self.seq_len = seq_len
        self.pad_id = tokenizer.convert_tokens_to_ids("<|end_of_text|>")
        bos, eos = tokenizer.bos_token_id, self.pad_id
        # [num_text_tokens]: every page as BOS text EOS, pages in corpus order.
        encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
        self.stream = np.array([t for ids in encoded for t in [bos, *ids, eos]], dtype=np.int64)
        if len(self.stream) <= seq_len + 1:
            raise ValueError(f"text stream of {len(self.stream)} tokens is shorter than "
                             f"seq_len {seq_len}")
        plain = [f"Q: {p['question']}\nA: {p['answer']}\n" for p in pairs]
        plain_ids = tokenizer(plain, add_special_tokens=False)["input_ids"]
        # Q/A items in two renderings: completion text (the eval's format) and the chat
        # template (so that `kiln chat` gets answers too). Each is a list of token ids.
        self.plain_items = [[bos, *ids, eos] for ids in plain_ids]
        self.chat_items = [_as_list(tokenizer.apply_chat_template(
            [{"role": "user", "content": p["question"]},
             {"role": "assistant", "content": p["answer"]}], tokenize=True)) for p in pairs]
        # Per item, how many leading tokens are excluded from the loss.
        self.plain_masked = [0] * len(pairs)
        self.chat_masked = [0] * len(pairs)
        if qa_loss == "answer":
            prompts = tokenizer([f"Q: {p['question']}\nA:" for p in pairs],
                                add_special_tokens=False)["input_ids"]
            self.plain_masked = [_prompt_length([bos, *prompt], item, p["question"])
                                 for prompt, item, p in zip(prompts, self.plain_items, pairs)]
            self.chat_masked = [
                _prompt_length(_as_list(tokenizer.apply_chat_template(
                    [{"role": "user", "content": p["question"]}], tokenize=True,
                    add_generation_prompt=True)), item, p["question"])
                for item, p in zip(self.chat_items, pairs)]
        self.chat_fraction = chat_fraction
        longest = max(len(ids) for ids in self.plain_items + self.chat_items)
        if longest > seq_len:
            raise ValueError(f"a Q/A item of {longest} tokens exceeds seq_len {seq_len}")

    @property
    def num_text_tokens(self):
        return len(self.stream)

    def _text_row(self, rng):
        start = rng.integers(0, len(self.stream) - self.seq_len)
        row = self.stream[start:start + self.seq_len]
        return row, row.copy()

    def _qa_row(self, rng):
        inputs, labels = [], []
        while True:
            index = rng.integers(0, len(self.plain_items))
            use_chat = rng.random() < self.chat_fraction
            item = (self.chat_items if use_chat else self.plain_items)[index]
            masked = (self.chat_masked if use_chat else self.plain_masked)[index]
            if len(inputs) + len(item) > self.seq_len:
                break
            inputs += item
            labels += [IGNORE_INDEX] * masked + item[masked:]
        padding = self.seq_len - len(inputs)
        inputs += [self.pad_id] * padding
        labels += [IGNORE_INDEX] * padding
        return np.array(inputs, dtype=np.int64), np.array(labels, dtype=np.int64)

    def batch(self, rng, batch_size, qa_rows):
        """(input_ids, labels), each [batch_size, seq_len]; the first qa_rows rows are Q/A."""
        rows = [self._qa_row(rng) if i < qa_rows else self._text_row(rng)
                for i in range(batch_size)]
        return (np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows]))
