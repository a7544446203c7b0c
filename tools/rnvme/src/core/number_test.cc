#include "core/number.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace rnvme {
namespace {

TEST(Number, DecimalAndHex) {
  EXPECT_EQ(parse_number<int>("28"), 28);
  EXPECT_EQ(parse_number<int>("0x1c"), 28);
  EXPECT_EQ(parse_number<int>("0X1C"), 28);
  EXPECT_EQ(parse_number<uint32_t>("0xffffffff"), 0xffffffffu);
  EXPECT_EQ(parse_number<uint32_t>("385"), 385u);
}

TEST(Number, TheWholeTextOrNothing) {
  for (const char* s : {"", "0x", "12x", " 12", "12 ", "0x1g", "x12", "1.5"}) {
    EXPECT_FALSE(parse_number<int>(s)) << "'" << s << "'";
    EXPECT_FALSE(parse_number<uint32_t>(s)) << "'" << s << "'";
  }
}

TEST(Number, WhatDoesNotFitIsNoNumber) {
  EXPECT_FALSE(parse_number<int>("2147483648"));
  EXPECT_FALSE(parse_number<int>("0x80000000"));
  EXPECT_FALSE(parse_number<int>("99999999999999999999"));
  EXPECT_FALSE(parse_number<uint32_t>("0x1ffffffff"));
  EXPECT_FALSE(parse_number<uint32_t>("-1"));  // unsigned: no sign
  EXPECT_EQ(parse_number<int>("-1"), -1);
}

}  // namespace
}  // namespace rnvme
