#include "core/json_text.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

using nlohmann::json;

constexpr const char* kFffd = "\xef\xbf\xbd";  // U+FFFD in UTF-8

TEST(JsonText, AsDumpForValidText) {
  const json j = {{"nqn", "nqn.2024-01.io.rnvme:t\xc3\xa9st"}, {"n", 1}};
  EXPECT_EQ(dump_json(j), j.dump());
  EXPECT_EQ(dump_json(j, 2), j.dump(2));
}

// Strings from a target or the kernel need not be UTF-8: every bad byte becomes U+FFFD and the
// result is valid JSON, where j.dump() throws type_error 316.
TEST(JsonText, ReplacesBytesThatAreNotUtf8) {
  const json j = {{"nqn", "nqn.\xff\xfe"}, {"lines", {"ok", "cut \xc3"}}};
  EXPECT_THROW((void)j.dump(), json::type_error);
  std::string text;
  ASSERT_NO_THROW(text = dump_json(j, 2));
  const json back = json::parse(text);
  EXPECT_EQ(back["nqn"], std::string("nqn.") + kFffd + kFffd);
  EXPECT_EQ(back["lines"][1], std::string("cut ") + kFffd);
  EXPECT_EQ(back["lines"][0], "ok");
}

}  // namespace
}  // namespace rnvme
