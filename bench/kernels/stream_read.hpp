// A streaming-read bandwidth probe: each thread sums its own slice of a buffer far larger than
// the last-level cache with 256-bit loads. This is the decode roofline's denominator: GEMV cannot
// read weights faster than this.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

class ThreadPool;

// Sums `bytes` (a multiple of 128) of 32-byte-aligned data; the result only defeats dead-code
// elimination.
std::uint64_t stream_read_sum(const std::uint8_t* data, std::size_t bytes);

// Reads the buffer once, split evenly across the pool's threads; returns GB/s (1e9 bytes/s).
double measure_read_bandwidth_gbs(ThreadPool& pool, const std::uint8_t* data, std::size_t bytes);

}  // namespace kiln
