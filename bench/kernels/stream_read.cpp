// Compiled with AVX2 flags (kiln_isa_sources): 256-bit loads saturate memory on every CPU that
// has them, so the probe needs no AVX-512 variant.
#include "stream_read.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "runtime/thread_pool.hpp"

namespace kiln {

std::uint64_t stream_read_sum(const std::uint8_t* data, std::size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0; i < bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 96)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  return static_cast<std::uint64_t>(_mm256_extract_epi64(s, 0) + _mm256_extract_epi64(s, 1) +
                                    _mm256_extract_epi64(s, 2) + _mm256_extract_epi64(s, 3));
}

double measure_read_bandwidth_gbs(ThreadPool& pool, const std::uint8_t* data, std::size_t bytes) {
  const std::size_t threads = pool.num_threads();
  const std::size_t slice = bytes / threads / 4096 * 4096;
  std::atomic<std::uint64_t> sink{0};
  const auto start = std::chrono::steady_clock::now();
  pool.parallel_for(threads,
                    [&](std::size_t task, std::size_t) { sink += stream_read_sum(data + task * slice, slice); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(slice * threads) / seconds / 1e9 + 0.0 * static_cast<double>(sink.load());
}

}  // namespace kiln
