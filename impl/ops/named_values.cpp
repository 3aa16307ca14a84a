#include "ops/named_values.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace crossdev::ops {

template <typename T>
NamedValues<T>::NamedValues() = default;

template <typename T>
NamedValues<T>::NamedValues(const std::map<std::string, T>& map) {
  for (const auto& [name, value] : map) entries_.emplace_back(name, value);  // already in name order
}

template <typename T>
NamedValues<T>& NamedValues<T>::operator=(const std::map<std::string, T>& map) {
  return *this = NamedValues(map);
}

template <typename T>
std::map<std::string, T> NamedValues<T>::to_map() const {
  return std::map<std::string, T>(begin(), end());
}

template <typename T>
typename NamedValues<T>::iterator NamedValues<T>::begin() { return entries_.begin(); }
template <typename T>
typename NamedValues<T>::iterator NamedValues<T>::end() { return entries_.end(); }
template <typename T>
typename NamedValues<T>::const_iterator NamedValues<T>::begin() const { return entries_.begin(); }
template <typename T>
typename NamedValues<T>::const_iterator NamedValues<T>::end() const { return entries_.end(); }
template <typename T>
std::size_t NamedValues<T>::size() const { return entries_.size(); }
template <typename T>
bool NamedValues<T>::empty() const { return entries_.empty(); }

namespace {
// Names are a few bytes ("x", "shift", "eps") and every kernel call looks several up: compared
// byte by byte here, inline, rather than through a call to memcmp per comparison (which was the
// largest single share of a call's lookups). Same order as std::string's operator<.
bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

bool name_less(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}
}  // namespace

template <typename T>
typename NamedValues<T>::iterator NamedValues<T>::lower_bound(std::string_view name) {
  iterator it = begin();
  while (it != end() && name_less(it->first, name)) ++it;  // at most eight entries: a scan
  return it;
}

template <typename T>
typename NamedValues<T>::iterator NamedValues<T>::find(std::string_view name) {
  for (iterator it = begin(); it != end(); ++it) {
    if (same_name(it->first, name)) return it;
  }
  return end();
}

template <typename T>
typename NamedValues<T>::const_iterator NamedValues<T>::find(std::string_view name) const {
  return const_cast<NamedValues*>(this)->find(name);
}

template <typename T>
std::size_t NamedValues<T>::count(std::string_view name) const { return find(name) == end() ? 0 : 1; }

template <typename T>
const T* NamedValues<T>::get(std::string_view name) const {
  const const_iterator it = find(name);
  return it == end() ? nullptr : &it->second;
}

template <typename T>
T& NamedValues<T>::operator[](std::string_view name) {
  iterator it = lower_bound(name);
  if (it == end() || it->first != name) it = entries_.insert(it, value_type(std::string(name), T()));
  return it->second;
}

template <typename T>
void NamedValues<T>::append_in_order(const std::string& name, const T& value) {
  TORCH_INTERNAL_ASSERT_DEBUG_ONLY(entries_.empty() || name_less(entries_.back().first, name), "'", name,
                                   "' does not sort after '", entries_.back().first, "'");
  entries_.emplace_back(name, value);
}

template <typename T>
T& NamedValues<T>::at(std::string_view name) {
  const iterator it = find(name);
  TORCH_CHECK_INDEX(it != end(), "no entry named '", name, "'");
  return it->second;
}

template <typename T>
const T& NamedValues<T>::at(std::string_view name) const {
  return const_cast<NamedValues*>(this)->at(name);
}

template <typename T>
std::size_t NamedValues<T>::erase(std::string_view name) {
  const iterator it = find(name);
  if (it == end()) return 0;
  entries_.erase(it);
  return 1;
}

namespace {
// Tensors compare by identity (the same TensorImpl), as std::pair's == would through Tensor's
// is_same; doubles by value.
bool same(const at::Tensor& a, const at::Tensor& b) { return a.is_same(b); }
bool same(double a, double b) { return a == b; }
}  // namespace

template <typename T>
bool NamedValues<T>::operator==(const NamedValues& other) const {
  if (size() != other.size()) return false;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first != other.entries_[i].first || !same(entries_[i].second, other.entries_[i].second)) return false;
  }
  return true;
}

template class NamedValues<at::Tensor>;
template class NamedValues<double>;

}  // namespace crossdev::ops
