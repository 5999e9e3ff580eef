#include "grammar/grammar_cache.hpp"

#include <list>
#include <mutex>
#include <utility>

#include "util/error.hpp"

namespace kiln::grammar {
namespace {

// Bounds on what the process keeps: grammars are small, vocabularies are not (a 128k one is
// ~10 MiB with its trie).
constexpr std::size_t kMaxGrammars = 64;
constexpr std::size_t kMaxVocabularies = 4;

template <typename Value>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity) {}
  std::shared_ptr<Value> find(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
    return nullptr;
  }
  void put(std::string key, std::shared_ptr<Value> value) {
    entries_.emplace_front(std::move(key), std::move(value));
    if (entries_.size() > capacity_) entries_.pop_back();
  }

 private:
  std::size_t capacity_;
  std::list<std::pair<std::string, std::shared_ptr<Value>>> entries_;
};

std::mutex cache_mutex;
LruCache<CompiledGrammar> grammars(kMaxGrammars);
LruCache<const GrammarVocabulary> vocabularies(kMaxVocabularies);

// Each part with its length in front, so that no two sources share a key.
std::string source_key(const GrammarSource& source) {
  std::string key(1, static_cast<char>('0' + static_cast<int>(source.kind)));
  const auto add = [&key](const std::string& part) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
  };
  add(source.text);
  for (const std::string& choice : source.choices) add(choice);
  key += '|';
  for (const TaggedSchema& tag : source.tags) {
    for (const std::string* part : {&tag.begin, &tag.schema, &tag.end}) add(*part);
  }
  key += '|';
  for (const std::string& trigger : source.triggers) add(trigger);
  return key;
}

std::shared_ptr<const GrammarVocabulary> vocabulary_for(const Tokenizer& tokenizer) {
  const std::string key = tokenizer.fingerprint();
  {
    const std::lock_guard lock(cache_mutex);
    if (auto found = vocabularies.find(key)) return found;
  }
  auto vocabulary = std::make_shared<const GrammarVocabulary>(tokenizer);
  const std::lock_guard lock(cache_mutex);
  vocabularies.put(key, vocabulary);
  return vocabulary;
}

}  // namespace

std::shared_ptr<CompiledGrammar> compile_cached(const GrammarSource& source, const Tokenizer& tokenizer) {
  const std::string key = source_key(source) + '\0' + tokenizer.fingerprint();
  {
    const std::lock_guard lock(cache_mutex);
    if (auto found = grammars.find(key)) return found;
  }
  // Compiled outside the lock: two first requests may both compile; the later one wins the slot.
  auto compiled = std::make_shared<CompiledGrammar>(lower(source_rules(source)), vocabulary_for(tokenizer));
  const std::lock_guard lock(cache_mutex);
  grammars.put(key, compiled);
  return compiled;
}

}  // namespace kiln::grammar
