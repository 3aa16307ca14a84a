#pragma once
// NamedValues<T>: OpCall's tensors and scalars. A flat vector of (name, value) kept sorted by
// name, with the part of std::map's interface the harness uses (operator[], at, find, erase,
// count, iteration in name order, ==). An op has at most eight named inputs, so up to eight
// entries live inline: building a call allocates nothing (names are short enough for the small-
// string buffer) and a lookup is a scan of a few entries, not a walk through tree nodes.
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
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

  NamedValues() = default;
  NamedValues(const std::map<std::string, T>& map) {  // NOLINT(google-explicit-constructor): a map converts as it did
    for (const auto& [name, value] : map) entries_.emplace_back(name, value);  // already in name order
  }
  NamedValues& operator=(const std::map<std::string, T>& map) { return *this = NamedValues(map); }
  std::map<std::string, T> to_map() const { return std::map<std::string, T>(begin(), end()); }

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  iterator find(std::string_view name) {
    const iterator it = lower_bound(name);
    return it != end() && it->first == name ? it : end();
  }
  const_iterator find(std::string_view name) const {
    const const_iterator it = const_cast<NamedValues*>(this)->lower_bound(name);
    return it != end() && it->first == name ? it : end();
  }
  std::size_t count(std::string_view name) const { return find(name) == end() ? 0 : 1; }
  // nullptr when absent.
  const T* get(std::string_view name) const {
    const const_iterator it = find(name);
    return it == end() ? nullptr : &it->second;
  }

  // Inserts a default value when absent (as std::map does). The reference stays valid until the
  // next insertion or erase.
  T& operator[](std::string_view name) {
    iterator it = lower_bound(name);
    if (it == end() || it->first != name) it = entries_.insert(it, value_type(std::string(name), T()));
    return it->second;
  }
  T& at(std::string_view name) {
    const iterator it = find(name);
    TORCH_CHECK_INDEX(it != end(), "no entry named '", name, "'");
    return it->second;
  }
  const T& at(std::string_view name) const { return const_cast<NamedValues*>(this)->at(name); }
  std::size_t erase(std::string_view name) {
    const iterator it = find(name);
    if (it == end()) return 0;
    entries_.erase(it);
    return 1;
  }

  friend bool operator==(const NamedValues& a, const NamedValues& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const NamedValues& a, const NamedValues& b) { return !(a == b); }

 private:
  iterator lower_bound(std::string_view name) {
    return std::lower_bound(begin(), end(), name,
                            [](const value_type& entry, std::string_view key) { return entry.first < key; });
  }
  Storage entries_;
};

}  // namespace crossdev::ops
