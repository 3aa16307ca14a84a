// impl/util/named_table.h and the tables built on it: lookups by name, and "expected one of" lists
// that are made from the table they check (issue 15), so a new row needs no second edit.
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

#include "device/device_kind.h"
#include "device/device_spec.h"
#include "device/host_profile.h"
#include "manager/error_info.h"
#include "policy/preset.h"
#include "util/named_table.h"

namespace crossdev {
namespace {

enum class Colour { Red = 0, Green, Blue };
struct ColourRow {
  Colour colour;
  const char* name;
  const char* meaning;
};
constexpr ColourRow kColours[] = {{Colour::Red, "red", "stop"}, {Colour::Green, "green", "go"}, {Colour::Blue, "blue", "?"}};
constexpr ColourRow kShuffled[] = {{Colour::Green, "green", "go"}, {Colour::Red, "red", "stop"}};
constexpr ColourRow kTwice[] = {{Colour::Red, "red", "stop"}, {Colour::Green, "red", "go"}};
static_assert(named::in_enum_order(kColours, &ColourRow::colour));
static_assert(!named::in_enum_order(kShuffled, &ColourRow::colour));
static_assert(named::names_unique(kColours) && !named::names_unique(kTwice));

TEST(NamedTable, FindsRowsByExactName) {
  ASSERT_NE(named::find(kColours, "green"), nullptr);
  EXPECT_EQ(named::find(kColours, "green")->colour, Colour::Green);
  EXPECT_EQ(named::find(kColours, "Green"), nullptr) << "lookups are case-sensitive, like torch.device";
  EXPECT_EQ(named::find(kColours, ""), nullptr);
  EXPECT_TRUE(named::contains(kColours, "blue"));
  EXPECT_FALSE(named::contains(kColours, "blu"));
}

TEST(NamedTable, ListsAreBuiltFromTheRowsInOrder) {
  EXPECT_EQ(named::names(kColours), "red, green, blue");
  EXPECT_EQ(named::names(kColours, "|"), "red|green|blue");
  EXPECT_EQ(named::names_described(kColours, [](const ColourRow& r) { return r.meaning; }),
            "red (stop), green (go), blue (?)");
  constexpr const char* kBare[] = {"x", "y"};
  EXPECT_EQ(named::names(kBare), "x, y");
  EXPECT_EQ(named::names(std::vector<std::string>{}), "");
}

// Every device kind is in the list the errors print, and the parser's error names every kind.
TEST(NamedTable, EveryDeviceKindIsInItsErrorMessages) {
  std::string error;
  DeviceSpec spec;
  ASSERT_NE(try_parse_device("bogus", spec, &error), ParseStatus::Ok);
  for (DeviceKind kind : kAllDeviceKinds) {
    EXPECT_EQ(kind_from_name(kind_name(kind)), kind);
    EXPECT_NE(valid_kind_list().find(kind_name(kind)), std::string::npos) << kind_name(kind);
    EXPECT_NE(error.find(kind_name(kind)), std::string::npos) << error;
  }
  EXPECT_NE(valid_kind_list().find("xla (alias: tpu)"), std::string::npos) << valid_kind_list();
}

TEST(NamedTable, EveryPresetAndNamedHostIsListed) {
  const std::vector<const Preset*> presets = all_presets();
  ASSERT_FALSE(presets.empty());
  for (const Preset* preset : presets) {
    EXPECT_EQ(find_preset(preset->name), preset);
    EXPECT_NE(preset_names().find(preset->name), std::string::npos);
  }
  EXPECT_EQ(find_preset("no-such-preset"), nullptr);
  // Each listed host name resolves to a host named after it.
  std::string hosts = named_host_list() + ", ";
  for (std::size_t at = 0, comma; (comma = hosts.find(", ", at)) != std::string::npos; at = comma + 2) {
    const std::string name = hosts.substr(at, comma - at);
    EXPECT_EQ(HostProfile::named_or_spec(name).source(), "hypothetical:" + name);
  }
}

TEST(NamedTable, EveryErrorTypeIsListedAndRaisable) {
  for (const char* type : {"RuntimeError", "NotImplementedError", "OutOfMemoryError", "ValueError", "TypeError",
                           "IndexError"}) {
    EXPECT_TRUE(manager::is_known_error_type(type)) << type;
    EXPECT_NE(manager::error_type_list().find(type), std::string::npos) << type;
    std::exception_ptr raised;
    try {
      manager::throw_error_of_type(type, "m");
    } catch (...) {
      raised = std::current_exception();
    }
    EXPECT_EQ(manager::describe_exception(raised).type, type);
  }
}

}  // namespace
}  // namespace crossdev
