// The read sequence of the discovery log: which Get Log Page commands, and which carry RAE.
#include "sys/nvme_admin.h"

#include <gtest/gtest.h>

#include "core/discovery.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

std::vector<bool> rae_bits(const FakeDiscoveryLogCommand& cmd) {
  std::vector<bool> r;
  for (const auto& rd : cmd.reads) r.push_back(rd.rae);
  return r;
}

const std::vector<LogEntry> kTwo = {{kSubnqn, "192.168.50.10", "4420"},
                                    {"nqn.2024-01.io.rnvme:other", "192.168.50.10", "4420"}};

// nvmet re-arms its discovery-change AEN only after a read with RAE=0 (nvmet_clear_aen_bit): the
// read that confirms the generation counter, the last one, clears the event; the ones before it
// keep it so the log stays latched while it is read (libnvme 1.3 nvme_get_log_page()).
TEST(DiscoveryLogRead, TheConfirmingReadClearsTheEvent) {
  FakeDiscoveryLogCommand cmd;
  cmd.pages = {make_discovery_log(kTwo, 5)};
  auto bytes = read_discovery_log(cmd, "nvme4");
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_EQ(*bytes, cmd.pages[0]);
  ASSERT_EQ(cmd.reads.size(), 3u);
  EXPECT_EQ(cmd.reads[0].len, kDiscoveryHeaderSize);
  EXPECT_EQ(cmd.reads[1].len, kDiscoveryHeaderSize + 2 * kDiscoveryEntrySize);
  EXPECT_EQ(cmd.reads[2].len, kDiscoveryHeaderSize);
  EXPECT_EQ(rae_bits(cmd), (std::vector<bool>{true, true, false}));
}

// An empty log is read with RAE=0 too, or a discovery controller whose last subsystem went away
// would never announce the next one.
TEST(DiscoveryLogRead, AnEmptyLogClearsTheEventToo) {
  FakeDiscoveryLogCommand cmd;
  cmd.pages = {make_discovery_log({}, 9)};
  auto bytes = read_discovery_log(cmd, "nvme4");
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto log = decode_discovery_log(*bytes);
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->entries.empty());
  ASSERT_FALSE(cmd.reads.empty());
  EXPECT_FALSE(cmd.reads.back().rae);
  for (size_t i = 0; i + 1 < cmd.reads.size(); i++) EXPECT_TRUE(cmd.reads[i].rae) << i;
}

// The log changes after the entries were read: the confirming read (RAE=0) shows it, and the
// next attempt's reads keep the event again until its own confirming read.
TEST(DiscoveryLogRead, AChangeWhileReadingIsReadAgain) {
  FakeDiscoveryLogCommand cmd;
  const auto v5 = make_discovery_log(kTwo, 5);
  const auto v6 = make_discovery_log({kTwo[0]}, 6);
  cmd.pages = {v5, v5, v6};  // the third read and every later one see generation 6
  auto bytes = read_discovery_log(cmd, "nvme4");
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_EQ(*bytes, v6);
  EXPECT_EQ(rae_bits(cmd), (std::vector<bool>{true, true, false, true, true, false}));
}

TEST(DiscoveryLogRead, AFailedReadIsTheError) {
  FakeDiscoveryLogCommand cmd;
  cmd.pages = {make_discovery_log(kTwo, 5)};
  cmd.fail_from = 2;
  auto bytes = read_discovery_log(cmd, "nvme4");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().message, "fake read failed");
  EXPECT_EQ(cmd.reads.size(), 2u);
}

}  // namespace
}  // namespace rnvme
