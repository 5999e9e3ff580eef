#include "server/random_id.hpp"

#include <random>

#include <fmt/format.h>

namespace kiln::server {
namespace {

std::mt19937_64& generator() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

std::string random_hex(std::size_t digits) {
  std::string out;
  while (out.size() < digits) out += fmt::format("{:016x}", generator()());
  return out.substr(0, digits);
}

std::string random_alphanumeric(std::size_t length) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<std::size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string out;
  for (std::size_t i = 0; i < length; ++i) out += kAlphabet[pick(generator())];
  return out;
}

}  // namespace kiln::server
