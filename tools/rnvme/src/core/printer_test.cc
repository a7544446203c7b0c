// Rendering of every model in both formats, compared with golden files in testdata/golden.
#include "core/printer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "testing/test_env.h"

namespace rnvme {
namespace {

using testing::expect_golden;

Topology sample_topology() {
  Topology t;
  NvmeSubsystem s;
  s.name = "nvme-subsys0";
  s.nqn = "nqn.2024-01.io.rnvme:target1";
  NvmeController c;
  c.name = "nvme0";
  c.instance = 0;
  c.transport = "rdma";
  c.address = "traddr=192.168.50.10,trsvcid=4420,src_addr=192.168.50.1";
  c.traddr = "192.168.50.10";
  c.trsvcid = "4420";
  c.host_traddr = "192.168.50.1";
  c.state = "live";
  c.subsysnqn = s.nqn;
  c.hostnqn = testing::kHostnqn;
  c.hostid = testing::kHostUuid;
  c.cntlid = 1;
  c.queue_count = 3;
  c.sqsize = 127;
  c.ctrl_loss_tmo = 600;
  c.reconnect_delay = 10;
  c.paths.push_back({"nvme0c0n1", "", 1, 1073741824, 512});
  c.rnvme = {{"error_recoveries", "2"}, {"last_error", "1234 -104"}, {"rdma_device", "rxe0"}};
  s.controllers.push_back(c);
  s.namespaces.push_back({"nvme0n1", "/dev/nvme0n1", 1, 1073741824, 512});
  t.subsystems.push_back(s);
  return t;
}

std::vector<RdmaDevice> sample_rdma() {
  RdmaDevice d;
  d.index = 0;
  d.name = "rxe0";
  d.node_type = "CA";
  RdmaPort p;
  p.index = 1;
  p.state = "ACTIVE";
  p.phys_state = "LINK_UP";
  p.link_layer = "Ethernet";
  p.active_mtu = 1024;
  p.netdev = "eth0";
  p.netdev_mtu = 1500;
  p.gids = {{0, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "IB/RoCE v1", "eth0"},
            {1, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2", "eth0"},
            {3, "0000:0000:0000:0000:0000:ffff:c0a8:3201", "RoCE v2", "eth0"}};
  d.ports.push_back(p);
  return {d};
}

template <typename T>
std::string render(Format f, const T& model) {
  std::ostringstream out, err;
  Printer(f, out, err).print(model);
  return out.str();
}

TEST(Printer, TopologyText) { expect_golden("list.txt", render(Format::kText, sample_topology())); }
TEST(Printer, TopologyJson) { expect_golden("list.json", render(Format::kJson, sample_topology())); }

TEST(Printer, TopologyJsonUsesNumbersAndNulls) {
  auto j = nlohmann::json::parse(render(Format::kJson, sample_topology()));
  const auto& c = j["subsystems"][0]["controllers"][0];
  EXPECT_TRUE(c["queue_count"].is_number_integer());
  EXPECT_EQ(c["queue_count"], 3);
  EXPECT_TRUE(c["fast_io_fail_tmo"].is_null());
  EXPECT_EQ(j["subsystems"][0]["namespaces"][0]["size_bytes"], 1073741824);
  EXPECT_EQ(c["rnvme"]["error_recoveries"], 2);
  EXPECT_EQ(c["rnvme"]["last_error"], "1234 -104");
}

TEST(Printer, EmptyTopology) {
  EXPECT_EQ(render(Format::kText, Topology{}), "no NVMe subsystems\n");
  EXPECT_EQ(nlohmann::json::parse(render(Format::kJson, Topology{})),
            nlohmann::json({{"subsystems", nlohmann::json::array()}, {"version", 1}}));
}

TEST(Printer, DiscoveryTextAndJson) {
  auto log = decode_discovery_log(testing::make_discovery_log(
      {{"nqn.2024-01.io.rnvme:target1", "192.168.50.10", "4420"},
       {"nqn.2014-08.org.nvmexpress.discovery", "192.168.50.10", "4420", 3}}));
  ASSERT_TRUE(log.ok());
  expect_golden("discover.txt", render(Format::kText, *log));
  expect_golden("discover.json", render(Format::kJson, *log));
}

TEST(Printer, RdmaTextAndJson) {
  expect_golden("rdma.txt", render(Format::kText, sample_rdma()));
  expect_golden("rdma.json", render(Format::kJson, sample_rdma()));
}

TEST(Printer, RdmaFlagsMtuBelowWhatTheLinkAllows) {
  auto devs = sample_rdma();
  devs[0].ports[0].netdev_mtu = 4200;
  EXPECT_NE(render(Format::kText, devs).find("allows 4096"), std::string::npos);
  devs[0].ports[0].netdev_mtu = 1500;
  EXPECT_EQ(render(Format::kText, devs).find("allows"), std::string::npos);
}

TEST(Printer, ErrorTextAndJson) {
  Error e = make_error(ErrorCode::kConnect, "connect to 192.168.50.10:4999 (nqn.x:y) failed",
                       "nothing listens there", "check --trsvcid");
  e.reason = "wrong_port";
  e.sys_errno = 104;
  e.evidence = {"nvme nvme0: Connect rejected: status 8 (invalid service ID)."};
  e.record = {{"stage", "cm"}, {"cause", "no-listener"}, {"qid", "0"}};
  std::ostringstream out, err;
  Printer(Format::kText, out, err).print_error(e);
  expect_golden("error.txt", err.str());
  EXPECT_EQ(out.str(), "");
  std::ostringstream out2, err2;
  Printer(Format::kJson, out2, err2).print_error(e);
  auto j = nlohmann::json::parse(err2.str());
  EXPECT_EQ(j["error"]["reason"], "wrong_port");
  EXPECT_EQ(j["error"]["errno"], 104);
  EXPECT_EQ(j["error"]["exit_code"], 4);
  EXPECT_EQ(j["error"]["record"]["cause"], "no-listener");
  expect_golden("error.json", err2.str());
  e.record.clear();  // no record (in-tree nvme_rdma): null, and no text line
  std::ostringstream out3, err3;
  Printer(Format::kJson, out3, err3).print_error(e);
  EXPECT_TRUE(nlohmann::json::parse(err3.str())["error"]["record"].is_null());
}

TEST(Printer, QuietDropsNotesNotErrors) {
  std::ostringstream out, err;
  Printer p(Format::kText, out, err);
  p.note("warning: shown");
  p.set_quiet(true);
  p.note("warning: not shown");
  p.print_error(make_error(ErrorCode::kUsage, "still shown"));
  EXPECT_EQ(err.str(), "warning: shown\nrnvme: still shown\n");
}

TEST(Printer, HostCheckText) {
  HostCheck hc = check_host_identity(
      {std::string(testing::kHostnqn), std::string("11111111-2222-4333-8444-555555555555")});
  expect_golden("hostnqn-mismatch.txt", render(Format::kText, hc));
}

TEST(Printer, ConnectOutcomes) {
  ConnectOutcome dry{"", -1, -1, "transport=rdma,traddr=1.2.3.4", true};
  EXPECT_EQ(render(Format::kText, dry), "transport=rdma,traddr=1.2.3.4\n");
  ConnectOutcome live{"nvme3", 3, 7, "x", false};
  EXPECT_EQ(render(Format::kText, live), "connected nvme3 (cntlid 7)\n");
  auto j = nlohmann::json::parse(render(Format::kJson, live));
  EXPECT_EQ(j["instance"], 3);
  EXPECT_EQ(j["device"], "nvme3");
}

// Every JSON document, whatever the command, carries the schema version at its top level.
TEST(Printer, EveryJsonDocumentCarriesTheSchemaVersion) {
  auto log = decode_discovery_log(testing::make_discovery_log({{"nqn.x:y", "192.168.50.10", "4420"}}));
  ASSERT_TRUE(log.ok());
  HostCheck hc = check_host_identity({std::string(testing::kHostnqn), std::string(testing::kHostUuid)});
  const std::vector<std::pair<const char*, std::string>> docs = {
      {"discover", render(Format::kJson, *log)},
      {"list", render(Format::kJson, sample_topology())},
      {"rdma", render(Format::kJson, sample_rdma())},
      {"rdma, no devices", render(Format::kJson, std::vector<RdmaDevice>{})},
      {"hostnqn", render(Format::kJson, hc)},
      {"connect", render(Format::kJson, ConnectOutcome{"nvme3", 3, 7, "x", false, false})},
      {"disconnect", render(Format::kJson, DisconnectOutcome{{"nvme3"}, false})},
      {"connect-all", render(Format::kJson, ConnectAllOutcome{})},
  };
  for (const auto& [what, text] : docs) {
    auto j = nlohmann::json::parse(text);
    ASSERT_TRUE(j.is_object()) << what;
    EXPECT_EQ(j["version"], kJsonSchemaVersion) << what;
    EXPECT_TRUE(j["version"].is_number_integer()) << what;
  }
  std::ostringstream out, err;
  Printer(Format::kJson, out, err).print_error(make_error(ErrorCode::kUsage, "bad"));
  auto e = nlohmann::json::parse(err.str());
  EXPECT_EQ(e["version"], 1);
  EXPECT_EQ(e["error"]["message"], "bad");
  // text output is unchanged
  EXPECT_EQ(render(Format::kText, Topology{}).find("version"), std::string::npos);
}

// Strings from a target or the kernel are untrusted: a subsystem NQN, a kernel line or a module
// record with bytes that are not UTF-8 is shown with U+FFFD, in valid JSON, and never throws
// (j.dump()'s strict handler threw type_error 316: "internal error", std::terminate in an error).
TEST(Printer, JsonShowsBytesThatAreNotUtf8AsReplacementCharacters) {
  const std::string bad = "nqn.\xff\xfe";
  const std::string shown = "nqn.\xef\xbf\xbd\xef\xbf\xbd";  // two U+FFFD
  auto log = decode_discovery_log(testing::make_discovery_log({{bad, "192.168.50.10", "4420"}}));
  ASSERT_TRUE(log.ok());
  std::string text;
  ASSERT_NO_THROW(text = render(Format::kJson, *log));
  EXPECT_EQ(nlohmann::json::parse(text)["entries"][0]["subnqn"], shown);
  Topology t = sample_topology();
  t.subsystems[0].nqn = bad;
  t.subsystems[0].controllers[0].subsysnqn = bad;
  ASSERT_NO_THROW(text = render(Format::kJson, t));
  EXPECT_EQ(nlohmann::json::parse(text)["subsystems"][0]["nqn"], shown);

  Error e = make_error(ErrorCode::kConnect, "connect to " + bad + " failed");
  e.evidence = {"nvme nvme0: " + bad};
  e.record = {{"subnqn", bad}};
  std::ostringstream out, err;
  ASSERT_NO_THROW(Printer(Format::kJson, out, err).print_error(e));
  const auto j = nlohmann::json::parse(err.str());
  EXPECT_EQ(j["error"]["message"], "connect to " + shown + " failed");
  EXPECT_EQ(j["error"]["evidence"][0], "nvme nvme0: " + shown);
  EXPECT_EQ(j["error"]["record"]["subnqn"], shown);
  EXPECT_EQ(j["version"], kJsonSchemaVersion);
}

TEST(Printer, HumanSize) {
  EXPECT_EQ(human_size(512), "512 B");
  EXPECT_EQ(human_size(1073741824), "1.00 GiB");
  EXPECT_EQ(human_size(1536), "1.50 KiB");
}

// `rnvme --version`: nvme-cli's "<name> version <v>" lines; the libnvme loaded, and the one built
// against when they differ or the loaded one is unknown.
TEST(Printer, VersionTextAndJson) {
  EXPECT_EQ(render(Format::kText, VersionInfo{"0.1.0", "1.3", "1.3"}),
            "rnvme version 0.1.0\nlibnvme version 1.3\n");
  EXPECT_EQ(render(Format::kText, VersionInfo{"0.1.0", "1.3", "1.4"}),
            "rnvme version 0.1.0\nlibnvme version 1.4 (built against 1.3)\n");
  EXPECT_EQ(render(Format::kText, VersionInfo{"0.1.0", "1.3", ""}),
            "rnvme version 0.1.0\nlibnvme version unknown (built against 1.3)\n");
  auto j = nlohmann::json::parse(render(Format::kJson, VersionInfo{"0.1.0", "1.3", ""}));
  EXPECT_EQ(j["rnvme"], "0.1.0");
  EXPECT_TRUE(j["libnvme"].is_null());
  EXPECT_EQ(j["libnvme_built"], "1.3");
}

}  // namespace
}  // namespace rnvme
