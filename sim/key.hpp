// A store key (of a request, a key-value, a compare, a txn op): a string that keeps up to kInline
// bytes in place. Every request, reply and Raft entry carries one, and they are copied on the
// hot path (a client keeps a copy for its retry, a reply carries the key, a leader sends its log
// entries to each follower); a std::string keeps only 15 bytes in place, so "/electsim/leader"
// and every fleet key ("/electsim/leader/svc-1234") cost an allocation per copy. Longer keys
// (a user's own) live on the heap as a std::string's would. It reads as a std::string_view.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace electsim::sim {

class Key {
 public:
  // The longest key kept in place: 48 bytes in all, with the pointer and the size.
  static constexpr std::size_t kInline = 36;

  Key() = default;
  Key(std::string_view text) { assign(text); }  // NOLINT: reads as the string it holds
  Key(const std::string& text) : Key(std::string_view(text)) {}  // NOLINT
  Key(const char* text) : Key(std::string_view(text)) {}         // NOLINT
  Key(const Key& other) { assign(other.view()); }
  Key(Key&& other) noexcept { take(other); }
  Key& operator=(const Key& other) {
    if (this != &other) assign(other.view());
    return *this;
  }
  Key& operator=(Key&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Key& operator=(std::string_view text) {
    assign(text);
    return *this;
  }
  Key& operator=(const std::string& text) { return *this = std::string_view(text); }
  Key& operator=(const char* text) { return *this = std::string_view(text); }
  ~Key() { release(); }

  const char* data() const { return heap_ != nullptr ? heap_ : inline_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: reads as its text
  std::string str() const { return std::string(view()); }
  bool starts_with(std::string_view prefix) const { return view().starts_with(prefix); }

  // Against a key and each kind of text, each its own exact match: Key converts from all of them
  // and to std::string_view, so one overload alone would leave a comparison ambiguous.
  friend bool operator==(const Key& a, const Key& b) { return a.view() == b.view(); }
  friend bool operator==(const Key& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const Key& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const Key& a, const char* b) { return a.view() == b; }
  friend std::strong_ordering operator<=>(const Key& a, const Key& b) {
    return order(a.view(), b.view());
  }
  friend std::strong_ordering operator<=>(const Key& a, std::string_view b) {
    return order(a.view(), b);
  }
  friend std::strong_ordering operator<=>(const Key& a, const std::string& b) {
    return order(a.view(), std::string_view(b));
  }
  friend std::strong_ordering operator<=>(const Key& a, const char* b) {
    return order(a.view(), std::string_view(b));
  }

 private:
  // string_view's compare, as an ordering (the WebAssembly build's libc++ has no <=> for it).
  static std::strong_ordering order(std::string_view a, std::string_view b) {
    return a.compare(b) <=> 0;
  }
  void assign(std::string_view text) {
    // `text` may be this key's own bytes: they are copied before the old ones are freed.
    if (text.size() <= kInline) {
      char copy[kInline];
      if (!text.empty()) std::memcpy(copy, text.data(), text.size());
      release();
      if (!text.empty()) std::memcpy(inline_, copy, text.size());
    } else {
      char* bytes = new char[text.size()];
      std::memcpy(bytes, text.data(), text.size());
      release();
      heap_ = bytes;
    }
    size_ = static_cast<std::uint32_t>(text.size());
  }
  void take(Key& other) noexcept {
    heap_ = other.heap_;
    size_ = other.size_;
    if (heap_ == nullptr && size_ != 0) std::memcpy(inline_, other.inline_, size_);
    other.heap_ = nullptr;
    other.size_ = 0;
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    size_ = 0;
  }

  char* heap_ = nullptr;  // the bytes of a key longer than kInline
  std::uint32_t size_ = 0;
  char inline_[kInline];
};

}  // namespace electsim::sim
