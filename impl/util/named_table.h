#pragma once
// Tables of named rows, in the style of c10's Device.cpp: a value is found by its name in the table
// that defines it, and every "expected one of ..." message is built from that same table, so a new
// row is one edit and no hand-typed list of names can fall behind.
//
//   constexpr Row kRows[] = {{"a", ...}, {"b", ...}};
//   const Row* row = named::find(kRows, text);             // nullptr when unknown
//   throw ...("unknown '" + text + "'; expected one of " + named::names(kRows));
//   static_assert(named::in_enum_order(kKinds, &Info::kind));  // kKinds[i].kind == Kind(i)
//
// A row is a name itself (const char*, std::string), anything with a `name` member, or a pointer to
// such a row (tables of `const Preset*`).
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

namespace crossdev::named {

template <class Row>
constexpr std::string_view name_of(const Row& row) noexcept {
  if constexpr (std::is_convertible_v<const Row&, std::string_view>)
    return row;
  else if constexpr (std::is_pointer_v<Row>)
    return row->name;
  else
    return row.name;
}

// The row called `name`, or nullptr. Case-sensitive, like torch.device.
template <class Rows>
constexpr auto find(const Rows& rows, std::string_view name) noexcept -> decltype(&*std::begin(rows)) {
  for (const auto& row : rows)
    if (name_of(row) == name) return &row;
  return nullptr;
}

template <class Rows>
constexpr bool contains(const Rows& rows, std::string_view name) noexcept {
  return find(rows, name) != nullptr;
}

// "a, b, c": every row's name, in table order.
template <class Rows>
std::string names(const Rows& rows, std::string_view separator = ", ") {
  std::string out;
  for (const auto& row : rows) {
    if (!out.empty()) out.append(separator);
    out.append(name_of(row));
  }
  return out;
}

// "a (what a means), b (...)": names with a per-row description, e.g. `[](auto& r) { return r.meaning; }`.
template <class Rows, class Describe>
std::string names_described(const Rows& rows, Describe describe, std::string_view separator = ", ") {
  std::string out;
  for (const auto& row : rows) {
    if (!out.empty()) out.append(separator);
    out.append(name_of(row)).append(" (").append(describe(row)).append(")");
  }
  return out;
}

// True when rows[i].*key is enumerator i for every row, so `rows[static_cast<int>(e)]` is e's row.
template <class Rows, class Row, class Enum>
constexpr bool in_enum_order(const Rows& rows, Enum Row::*key) noexcept {
  std::size_t i = 0;
  for (const auto& row : rows) {
    if (static_cast<std::size_t>(row.*key) != i) return false;
    ++i;
  }
  return true;
}

// True when no two rows share a name (checked once by a test for every table).
template <class Rows>
constexpr bool names_unique(const Rows& rows) noexcept {
  for (auto a = std::begin(rows); a != std::end(rows); ++a)
    for (auto b = std::next(a); b != std::end(rows); ++b)
      if (name_of(*a) == name_of(*b)) return false;
  return true;
}

}  // namespace crossdev::named
