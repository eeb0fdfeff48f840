// A slab of T in chunks that never move. Element i is found by arithmetic from a short table of
// chunks, with no pointer of its own to load first, so a caller can fetch an element before it
// needs it without waiting for anything; and an element stays where it is while the slab grows
// (a reference taken before emplace_back() is still good after it). The slab never shrinks; the
// caller keeps its freed slots (kernel_detail::take_slot).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace electsim::sim {

template <typename T, unsigned ChunkBits = 8>
class ChunkedSlab {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << ChunkBits;

  T& operator[](std::size_t i) { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  std::size_t size() const { return size_; }
  // Adds one default-made element at the end, in a new chunk when the last one is full.
  void emplace_back() {
    if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<T[]>(kChunk));
    ++size_;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace electsim::sim
