// What travels between processes besides the small peer messages of sim/message.hpp: a value of
// any type the sender and the receiver agree on (a store request, a sink write, a Redis command,
// or a type a new kind of server defines in its own folder). The kernel carries it without
// looking inside, so a new server's requests and replies need no edit here or in the kernel.
//
// It holds one value or none. A value of up to kInline bytes lives inside the payload, so that a
// request or reply moved through the kernel's slab of bodies never allocates; a larger one is
// kept on the heap. Its type is told by the address of a table made once per type, never by a
// name or an index a list would have to keep.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "sim/assert.hpp"

namespace electsim::sim {

class Payload {
 public:
  // Room for the largest request the built-in servers exchange (a store transaction).
  static constexpr std::size_t kInline = 224;

  Payload() noexcept {}  // NOLINT(modernize-use-equals-default): the storage stays unwritten
  template <typename T, typename V = std::decay_t<T>,
            typename = std::enable_if_t<!std::is_same_v<V, Payload>>>
  Payload(T&& value) {  // NOLINT(google-explicit-constructor): a payload is made of its value
    emplace<V>(std::forward<T>(value));
  }
  Payload(Payload&& other) noexcept { take(other); }
  Payload& operator=(Payload&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Payload(const Payload& other) {
    if (other.type_ != nullptr) other.type_->copy(storage_, other.storage_);
    type_ = other.type_;
  }
  Payload& operator=(const Payload& other) {
    if (this != &other) {
      Payload copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  ~Payload() { reset(); }

  bool empty() const { return type_ == nullptr; }
  template <typename T>
  bool holds() const {
    return type_ == &kType<T>;
  }
  template <typename T>
  T* get_if() {
    return holds<T>() ? &object<T>() : nullptr;
  }
  template <typename T>
  const T* get_if() const {
    return holds<T>() ? &const_cast<Payload*>(this)->object<T>() : nullptr;
  }
  template <typename T>
  T& get() {
    ELECTSIM_ASSERT(holds<T>(), "a payload is read as the type it holds");
    return object<T>();
  }
  template <typename T>
  const T& get() const {
    ELECTSIM_ASSERT(holds<T>(), "a payload is read as the type it holds");
    return const_cast<Payload*>(this)->object<T>();
  }
  void reset() noexcept {
    if (type_ != nullptr) type_->destroy(storage_);
    type_ = nullptr;
  }

 private:
  struct Type {
    void (*destroy)(void* storage) noexcept;
    void (*move)(void* to, void* from) noexcept;  // leaves `from` destroyed
    void (*copy)(void* to, const void* from);
  };
  template <typename T>
  static constexpr bool kFits =
      sizeof(T) <= kInline &&
      alignof(T) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<T>;
  template <typename T>
  static T*& heap(void* storage) {
    return *std::launder(reinterpret_cast<T**>(storage));
  }
  template <typename T>
  static constexpr Type kType = [] {
    if constexpr (kFits<T>) {
      return Type{[](void* s) noexcept { std::launder(reinterpret_cast<T*>(s))->~T(); },
                  [](void* to, void* from) noexcept {
                    T* source = std::launder(reinterpret_cast<T*>(from));
                    ::new (to) T(std::move(*source));
                    source->~T();
                  },
                  [](void* to, const void* from) {
                    ::new (to) T(*std::launder(reinterpret_cast<const T*>(from)));
                  }};
    } else {
      return Type{[](void* s) noexcept { delete heap<T>(s); },
                  [](void* to, void* from) noexcept { ::new (to) T*(heap<T>(from)); },
                  [](void* to, const void* from) {
                    ::new (to) T*(new T(**std::launder(reinterpret_cast<T* const*>(from))));
                  }};
    }
  }();

  template <typename T, typename... Args>
  void emplace(Args&&... args) {
    if constexpr (kFits<T>) {
      ::new (static_cast<void*>(storage_)) T(std::forward<Args>(args)...);
    } else {
      ::new (static_cast<void*>(storage_)) T*(new T(std::forward<Args>(args)...));
    }
    type_ = &kType<T>;
  }
  template <typename T>
  T& object() {
    if constexpr (kFits<T>) {
      return *std::launder(reinterpret_cast<T*>(storage_));
    } else {
      return *heap<T>(storage_);
    }
  }
  void take(Payload& other) noexcept {
    if (other.type_ != nullptr) other.type_->move(storage_, other.storage_);
    type_ = other.type_;
    other.type_ = nullptr;
  }

  // The type first: the kernel and a receiver read it before the value, and in front of the
  // value it shares the value's first cache line instead of taking a line of its own at the end.
  const Type* type_ = nullptr;
  alignas(std::max_align_t) unsigned char storage_[kInline];
};

}  // namespace electsim::sim
