#pragma once
// NamedValues<T>: OpCall's tensors and scalars. A flat vector of (name, value) kept sorted by
// name, with the part of std::map's interface the harness uses (operator[], at, find, erase,
// count, iteration in name order, ==). An op has at most eight named inputs, so up to eight
// entries live inline: building a call allocates nothing (names are short enough for the small-
// string buffer) and a lookup is a scan of a few entries, not a walk through tree nodes.
//
// Every member is defined once, in named_values.cpp, for the two instantiations OpCall uses
// (extern template below): the per-capability copies of the CPU kernels (ops/cpu/dispatch.h)
// include this header through op_spec.h, and an inline member would otherwise be compiled into
// each copy under that copy's instruction set, one weak symbol shared by all of them
// (tests/gtest/ops/check_capability_symbols.py refuses that).
#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace crossdev::ops {

template <typename T>
class NamedValues {
 public:
  using value_type = std::pair<std::string, T>;
  using Storage = c10::SmallVector<value_type, 8>;
  using iterator = typename Storage::iterator;
  using const_iterator = typename Storage::const_iterator;

  NamedValues();
  NamedValues(const std::map<std::string, T>& map);  // NOLINT(google-explicit-constructor): a map converts as it did
  NamedValues& operator=(const std::map<std::string, T>& map);
  std::map<std::string, T> to_map() const;

  iterator begin();
  iterator end();
  const_iterator begin() const;
  const_iterator end() const;
  std::size_t size() const;
  bool empty() const;

  iterator find(std::string_view name);
  const_iterator find(std::string_view name) const;
  std::size_t count(std::string_view name) const;
  const T* get(std::string_view name) const;  // nullptr when absent

  T& operator[](std::string_view name);        // inserts a default T when absent
  // Appends an entry whose name sorts after every present one (the caller knows the order, e.g.
  // the typed kernels' argument slots sorted once per op): no search and no shifting.
  void append_in_order(const std::string& name, const T& value);
  T& at(std::string_view name);                // IndexError when absent
  const T& at(std::string_view name) const;
  std::size_t erase(std::string_view name);

  bool operator==(const NamedValues& other) const;

 private:
  iterator lower_bound(std::string_view name);
  Storage entries_;
};

extern template class NamedValues<at::Tensor>;
extern template class NamedValues<double>;

}  // namespace crossdev::ops
