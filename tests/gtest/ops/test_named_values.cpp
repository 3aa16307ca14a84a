// NamedValues (impl/ops/named_values.h): OpCall's name -> value table. Its order and lookups are
// checked against std::map<std::string, T>, the container it replaces, on names that differ only in
// length, share prefixes, or hold bytes above 0x7f (std::string orders them as unsigned char).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ops/named_values.h"

namespace crossdev::ops {
namespace {

const std::vector<std::string> kNames = {"x", "shift", "scale", "x2", "", "sc", "scale_value", "\xc3\xa9ps", "eps", "X"};

std::vector<std::string> names_of(const NamedValues<double>& values) {
  std::vector<std::string> out;
  for (const auto& [name, value] : values) out.push_back(name);
  return out;
}

TEST(NamedValues, IteratesInTheOrderOfAStdMapWhateverTheInsertionOrder) {
  for (std::size_t rotate = 0; rotate < kNames.size(); ++rotate) {
    NamedValues<double> values;
    std::map<std::string, double> oracle;
    for (std::size_t i = 0; i < kNames.size(); ++i) {
      const std::string& name = kNames[(i + rotate) % kNames.size()];
      values[name] = static_cast<double>(i);
      oracle[name] = static_cast<double>(i);
    }
    std::vector<std::string> expected;
    for (const auto& [name, value] : oracle) expected.push_back(name);
    EXPECT_EQ(names_of(values), expected) << "rotation " << rotate;
    EXPECT_EQ(values.to_map(), oracle);
  }
}

// The typed kernels sort an op's argument names once with std::string's < and append each call's
// values in that order (typed_kernels.h): that must build the table inserting them one by one does.
TEST(NamedValues, AppendingInStdStringOrderBuildsWhatInsertingBuilds) {
  std::vector<std::string> sorted = kNames;
  std::sort(sorted.begin(), sorted.end());
  NamedValues<double> appended, inserted;
  for (std::size_t i = 0; i < sorted.size(); ++i) appended.append_in_order(sorted[i], static_cast<double>(i));
  for (std::size_t i = sorted.size(); i-- > 0;) inserted[sorted[i]] = static_cast<double>(i);
  EXPECT_EQ(names_of(appended), names_of(inserted));
  EXPECT_TRUE(appended == inserted);
  for (const std::string& name : kNames) EXPECT_EQ(appended.at(name), inserted.at(name)) << name;
}

TEST(NamedValues, FindsOnlyTheExactName) {
  NamedValues<double> values;
  values["scale"] = 1.0;
  values["x"] = 2.0;
  EXPECT_EQ(values.count("scale"), 1u);
  EXPECT_EQ(values.count("sc"), 0u);           // a prefix of a stored name
  EXPECT_EQ(values.count("scale_value"), 0u);  // a stored name is its prefix
  EXPECT_EQ(values.count("X"), 0u);
  EXPECT_EQ(values.count(""), 0u);
  ASSERT_NE(values.get("x"), nullptr);
  EXPECT_EQ(*values.get("x"), 2.0);
  EXPECT_EQ(values.get("y"), nullptr);
  EXPECT_EQ(values.at("scale"), 1.0);
  EXPECT_THROW(values.at("scal"), c10::IndexError);
}

TEST(NamedValues, OperatorBracketInsertsOnceAndEraseRemoves) {
  NamedValues<double> values;
  values["shift"] = 1.0;
  values["shift"] = 3.0;  // the same entry
  values["eps"];          // a default value
  EXPECT_EQ(values.size(), 2u);
  EXPECT_EQ(values.at("shift"), 3.0);
  EXPECT_EQ(values.at("eps"), 0.0);
  EXPECT_EQ(values.erase("shif"), 0u);
  EXPECT_EQ(values.erase("shift"), 1u);
  EXPECT_EQ(names_of(values), std::vector<std::string>{"eps"});
}

}  // namespace
}  // namespace crossdev::ops
