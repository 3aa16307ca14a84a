#include "spec/bench_values.h"

#include "util/named_table.h"

#include <charconv>
#include <limits>
#include <string>

namespace crossdev::bench {
namespace {

template <typename T>
struct Named {
  const char* name;
  T value;
};

constexpr Named<Profile> kProfiles[] = {{"default", Profile::Default}, {"long", Profile::Long}};
constexpr Named<Pass> kPasses[] = {{"fwd", Pass::Forward}, {"fwd_bwd", Pass::ForwardBackward}};
constexpr Named<std::int64_t> kSizeSuffixes[] = {{"", 1}, {"K", 1024}, {"M", 1024 * 1024}};

template <typename T, std::size_t N>
std::optional<T> lookup(const Named<T> (&table)[N], std::string_view name) noexcept {
  for (const auto& row : table) {
    if (name == row.name) return row.value;
  }
  return std::nullopt;
}

template <typename T, std::size_t N>
const char* reverse_lookup(const Named<T> (&table)[N], T value) noexcept {
  for (const auto& row : table) {
    if (row.value == value) return row.name;
  }
  return "?";
}

}  // namespace

std::optional<Profile> profile_from_name(std::string_view name) noexcept { return lookup(kProfiles, name); }
const char* profile_name(Profile profile) noexcept { return reverse_lookup(kProfiles, profile); }
const char* profile_names() noexcept {
  static const std::string names = named::names(kProfiles);
  return names.c_str();
}


std::optional<Pass> pass_from_name(std::string_view name) noexcept { return lookup(kPasses, name); }
const char* pass_names() noexcept {
  static const std::string names = named::names(kPasses);
  return names.c_str();
}

std::optional<Size> size_from_text(std::string_view text) noexcept {
  std::int64_t count = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, count);
  if (ec != std::errc() || ptr == text.data() || count <= 0) return std::nullopt;
  const auto multiplier = lookup(kSizeSuffixes, std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  if (!multiplier || count > std::numeric_limits<std::int64_t>::max() / *multiplier) return std::nullopt;
  return Size{count * *multiplier, std::string(text)};
}

}  // namespace crossdev::bench
