#include "core/attempt.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

constexpr const char* kFail =
    "rnvme: attempt v=1 id=7 kind=connect pid=812 ctrl=nvme1 addr=192.0.2.2:4420 result=fail "
    "err=-5 stage=fabrics-connect cause=subsystem-not-found qid=0 nvme_status=0x4182 "
    "nvme_result=0x10100";

TEST(AttemptRecord, ParsesEveryKey) {
  auto r = parse_attempt_record(kFail);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->failed());
  EXPECT_EQ(r->stage(), "fabrics-connect");
  EXPECT_EQ(r->cause(), "subsystem-not-found");
  EXPECT_EQ(r->get("nvme_result"), "0x10100");
  EXPECT_EQ(r->get("addr"), "192.0.2.2:4420");
  EXPECT_EQ(r->get("absent"), "");
  EXPECT_EQ(r->kv.size(), 13u);
}

TEST(AttemptRecord, RefusesOtherMessagesAndVersions) {
  EXPECT_FALSE(parse_attempt_record("rnvme: queue 0: Fabrics Connect failed (16770)"));
  EXPECT_FALSE(parse_attempt_record("nvme nvme1: attempt v=1 kind=connect result=ok"));
  EXPECT_FALSE(parse_attempt_record("rnvme: attempt v=2 kind=connect pid=1 result=ok"));
  EXPECT_FALSE(parse_attempt_record("rnvme: attempt v=1 kind=connect pid=1"));  // no result
  EXPECT_FALSE(parse_attempt_record("rnvme: attempt v=1 kind=connect result=ok stray"));
  EXPECT_FALSE(parse_attempt_record("rnvme: attempt v=1 =x kind=connect result=ok"));
}

// Two concurrent connects: each process finds its own record, the newest if it made several.
TEST(AttemptRecord, PicksTheWritersOwnRecord) {
  std::vector<std::string> lines = {
      "rnvme: attempt v=1 id=1 kind=connect pid=100 result=fail stage=cm cause=no-listener",
      "rnvme: attempt v=1 id=2 kind=connect pid=200 result=fail stage=address cause=no-neighbour",
      "rnvme: attempt v=1 id=3 kind=reconnect pid=0 result=fail stage=cm cause=no-answer",
      "rnvme: attempt v=1 id=4 kind=connect pid=1000 result=ok",
  };
  auto a = find_own_attempt(lines, 100);
  auto b = find_own_attempt(lines, 200);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->cause(), "no-listener");
  EXPECT_EQ(b->cause(), "no-neighbour");
  EXPECT_FALSE(find_own_attempt(lines, 0));   // reconnects belong to no writer
  EXPECT_FALSE(find_own_attempt(lines, 10));  // a pid prefix is not a match
  lines.push_back("rnvme: attempt v=1 id=9 kind=connect pid=100 result=ok");
  EXPECT_FALSE(find_own_attempt(lines, 100)->failed());
}

}  // namespace
}  // namespace rnvme
