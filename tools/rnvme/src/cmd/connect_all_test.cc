#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cerrno>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

class ConnectAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_host_identity(env.fs);
    add_modules(env.fs);
    // Each connect gets the next instance; discovery controllers answer with a log page.
    env.fabrics.handler = [this](const std::string& o) -> Result<std::string> {
      if (o.find("nqn=nqn.2024-01.io.rnvme:bad") != std::string::npos) {
        env.kmsg.emit("nvme nvme9: Connect Invalid Data Parameter, subsysnqn \"nqn.2024-01.io.rnvme:bad\"");
        Error e = make_error(ErrorCode::kConnect, "write failed");
        e.sys_errno = EIO;
        return e;
      }
      return fmt::format("instance={},cntlid=1\n", next++);
    };
    env.dlog.pages["nvme0"] = make_discovery_log({
        {kSubnqn, "192.168.50.10", "4420"},
        {"nqn.2024-01.io.rnvme:target2", "192.168.50.10", "4420"},
        {"nqn.2014-08.org.nvmexpress.discovery", "192.168.50.20", "4420", 1},  // referral
        {"nqn.2024-01.io.rnvme:tcp", "192.168.50.10", "4420", 2, 3},
    });
  }
  std::vector<std::string> statuses() {
    std::vector<std::string> s;
    const auto j = nlohmann::json::parse(env.out.str());
    for (const auto& i : j["results"]) s.push_back(i["status"]);
    return s;
  }
  TestEnv env;
  int next = 0;
};

TEST_F(ConnectAllTest, FromDiscoveryConf) {
  env.json();
  env.fs.add("/etc/nvme/discovery.conf", "# lab\n--transport=rdma --traddr=192.168.50.10 --trsvcid=4420 -Q 32\n");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "skipped", "skipped"}));
  ASSERT_EQ(env.fabrics.written.size(), 3u);  // discovery + two subsystems
  // Tunables of the discovery line carry over to every connection it yields.
  EXPECT_NE(env.fabrics.written[1].find("nqn=nqn.2024-01.io.rnvme:target1"), std::string::npos);
  EXPECT_NE(env.fabrics.written[1].find("queue_size=32"), std::string::npos);
  EXPECT_EQ(env.fs.writes[0].first, "/sys/class/nvme/nvme0/delete_controller");
}

// nvme-cli's package installs a discovery.conf of comments only: nothing to do is not a failure
// (rnvme-autoconnect.service runs on every host with the file).
TEST_F(ConnectAllTest, NothingConfiguredIsNotAnError) {
  env.fs.add("/etc/nvme/discovery.conf",
             "# Used for extracting default controller discovery parameters\n"
             "#\n# Example:\n# --transport=<trtype> --traddr=<traddr> --trsvcid=<trsvcid> "
             "--host-traddr=<host-traddr> --host-iface=<host-iface>\n");
  ConnectAllArgs args;
  args.lock_file.clear();
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_NE(env.out.str().find("nothing configured"), std::string::npos) << env.out.str();
  EXPECT_TRUE(env.fabrics.written.empty());
  TestEnv env2;
  env2.json();
  ASSERT_TRUE(run_connect_all(env2.ctx, args).ok());  // neither file exists
  EXPECT_NE(nlohmann::json::parse(env2.out.str())["note"].get<std::string>().find("nothing configured"),
            std::string::npos);
}

// A discovery.conf shared with nvme-cli: its TCP line, options for other transports, an option
// rnvme does not know and a malformed secret each cost their own line, never the file.
TEST_F(ConnectAllTest, DiscoveryConfSharedWithNvmeCli) {
  env.json();
  env.fs.add("/etc/nvme/discovery.conf",
             "--transport=tcp --traddr=192.168.60.10 --trsvcid=8009\n"
             "--transport=rdma --traddr=192.168.50.10 --trsvcid=4420 --host-iface=eth1 --hdr-digest\n"
             "--transport=rdma --traddr=192.168.50.11 --frobnicate=1\n"
             "-t rdma -a 192.168.50.12 -S DHHC-1:00:abcd:\n");
  ConnectAllArgs args;
  args.lock_file.clear();
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), (std::vector<std::string>{"skipped", "connected", "connected", "skipped",
                                                  "skipped", "skipped", "skipped"}));
  const auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["results"][0]["detail"], "transport tcp is not rdma");
  EXPECT_NE(j["results"][5]["detail"].get<std::string>().find("--frobnicate"), std::string::npos);
  EXPECT_NE(j["results"][6]["detail"].get<std::string>().find("invalid --dhchap-secret"),
            std::string::npos);
  ASSERT_EQ(env.fabrics.written.size(), 3u);  // the RDMA discovery controller and its two subsystems
  EXPECT_EQ(env.fabrics.written[0].find("192.168.60.10"), std::string::npos);
  EXPECT_NE(env.err.str().find("discovery.conf:2: --host-iface does not apply to rdma"),
            std::string::npos);
}

// config.json's DH-HMAC-CHAP keys are honoured: the host's (host-wide or per port) and the
// controller's; a malformed one costs its port, not the file.
TEST_F(ConnectAllTest, ConfigJsonDhchapKeysHonoured) {
  env.json();
  env.fs.add("/etc/nvme/config.json", std::string(R"([{"dhchap_key": "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", "subsystems": [{"nqn": ")") + kSubnqn +
      R"(", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "dhchap_ctrl_key": "DHHC-1:02:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:"},
                      {"transport": "rdma", "traddr": "192.168.50.11", "dhchap_key": "", "hdr_digest": false},
                      {"transport": "rdma", "traddr": "192.168.50.12", "dhchap_key": "DHHC-1:00:abcd:"},
                      {"transport": "rdma", "traddr": "192.168.50.13", "queue_size": "lots"}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "skipped", "skipped"}));
  ASSERT_EQ(env.fabrics.written.size(), 2u);
  EXPECT_NE(env.fabrics.written[0].find("dhchap_secret=DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:,dhchap_ctrl_secret=DHHC-1:02:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:"),
            std::string::npos) << env.fabrics.written[0];
  // "" is config.json's unset: the host-wide key applies
  EXPECT_NE(env.fabrics.written[1].find("traddr=192.168.50.11"), std::string::npos);
  EXPECT_NE(env.fabrics.written[1].find("dhchap_secret=DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"), std::string::npos);
  EXPECT_EQ(env.out.str().find("DHHC"), std::string::npos) << env.out.str();
}

// The udev path: the persistent discovery controller that announced a log change is read where
// it is (no second discovery controller), and its host address carries over to the connections.
TEST_F(ConnectAllTest, FromThePersistentDiscoveryControllerThatChanged) {
  env.json();
  add_controller(env.fs, "nvme4", "nvme-subsys4", std::string(kDiscoveryNqn), "rdma", "192.168.50.10",
                 "4420");
  env.fs.add("/sys/class/nvme/nvme4/address",
             "traddr=192.168.50.10,trsvcid=4420,host_traddr=192.168.50.1\n");
  env.dlog.pages["nvme4"] = env.dlog.pages["nvme0"];
  next = 5;
  ConnectAllArgs args;
  args.lock_file.clear();
  args.device = "nvme4";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "skipped", "skipped"}));
  ASSERT_EQ(env.fabrics.written.size(), 2u);  // the two subsystems, no discovery controller
  EXPECT_NE(env.fabrics.written[0].find("host_traddr=192.168.50.1"), std::string::npos)
      << env.fabrics.written[0];
  EXPECT_TRUE(env.fs.writes.empty());  // nvme4 is not deleted
  args.device = "nvme0";               // not a discovery controller
  add_sample_controllers(env.fs);
  EXPECT_EQ(run_connect_all(env.ctx, args).error().code, ErrorCode::kUsage);
}

TEST_F(ConnectAllTest, FromConfigJsonDirectAndFailuresCounted) {
  env.json();
  env.fs.add("/etc/nvme/config.json", R"([{"subsystems": [
      {"nqn": "nqn.2024-01.io.rnvme:target1", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420"}]},
      {"nqn": "nqn.2024-01.io.rnvme:bad", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420"}]},
      {"nqn": "nqn.2024-01.io.rnvme:t", "ports": [{"transport": "tcp", "traddr": "192.168.60.10"}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  auto st = run_connect_all(env.ctx, args);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConnect);
  EXPECT_EQ(st.error().message, "1 of 3 connections failed");
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "failed", "skipped"}));
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["results"][1]["failure_class"], "wrong_nqn");
  EXPECT_EQ(j["results"][0]["device"], "nvme0");
}

TEST_F(ConnectAllTest, CustomConfigPathAndAlreadyConnected) {
  env.json();
  add_controller(env.fs, "nvme3", "nvme-subsys3", kSubnqn, "rdma", "192.168.50.10", "4420");
  env.fs.add("/srv/c.json", R"([{"subsystems": [{"nqn": "nqn.2024-01.io.rnvme:target1", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420"}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  args.config_json = "/srv/c.json";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), std::vector<std::string>{"already_connected"});
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(nlohmann::json::parse(env.out.str())["results"][0]["device"], "nvme3");
}

// The same check as `connect`: another host NQN is another association.
TEST_F(ConnectAllTest, AnotherHostsControllerIsNotOurs) {
  env.json();
  add_controller(env.fs, "nvme3", "nvme-subsys3", kSubnqn, "rdma", "192.168.50.10", "4420");
  env.fs.add("/sys/class/nvme/nvme3/hostnqn", "nqn.2024-01.io.rnvme:host-b\n");
  env.fs.add("/sys/class/nvme/nvme3/hostid", "11111111-2222-4333-8444-555555555555\n");
  env.fs.add("/srv/c.json", R"([{"subsystems": [{"nqn": "nqn.2024-01.io.rnvme:target1", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420"}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  args.config_json = "/srv/c.json";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), std::vector<std::string>{"connected"});
  EXPECT_EQ(env.fabrics.written.size(), 1u);
}

TEST_F(ConnectAllTest, CommandLineDiscoveryController) {
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_NE(env.fabrics.written[0].find("nqn=nqn.2014-08.org.nvmexpress.discovery"), std::string::npos);
  EXPECT_NE(env.out.str().find("connected"), std::string::npos);
}

// The discovery controller named on the command line takes its unset options from its port in
// config.json, as `discover` does; they carry over to the connections, as a discovery.conf
// line's do.
TEST_F(ConnectAllTest, CommandLineDiscoveryControllerTakesItsConfigJsonPort) {
  env.fs.add("/srv/c.json", std::string(R"([{"subsystems": [{"nqn": ")") + std::string(kDiscoveryNqn) +
                                R"(", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "keep_alive_tmo": 7}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();
  args.config_json = "/srv/c.json";
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  ASSERT_EQ(env.fabrics.written.size(), 3u);
  EXPECT_NE(env.fabrics.written[0].find("keep_alive_tmo=7"), std::string::npos) << env.fabrics.written[0];
  EXPECT_NE(env.fabrics.written[1].find("keep_alive_tmo=7"), std::string::npos);
  args.config_json = "none";
  env.fabrics.written.clear();
  next = 0;  // the discovery controller is nvme0 again
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(env.fabrics.written[0].find("keep_alive_tmo"), std::string::npos);
}

// nvme-cli's --dump-config: the entries of discovery.conf and config.json, with the command
// line's options where they leave them unset and the host identity connect would send, as
// config.json; keys hidden; what would be skipped named on stderr; nothing connected or locked.
TEST_F(ConnectAllTest, DumpConfigPrintsWhatWouldBeConnectedAndConnectsNothing) {
  env.json();  // the dump is config.json's layout whatever the output format
  env.fs.add("/etc/nvme/discovery.conf",
             "--transport=rdma --traddr=192.168.50.20 -Q 32\n--transport=tcp --traddr=192.168.60.10\n");
  env.fs.add("/etc/nvme/config.json", std::string(R"([{"subsystems": [{"nqn": ")") + kSubnqn +
      R"(", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "dhchap_key": "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"}]}]}])");
  ConnectAllArgs args;
  args.lock_file = "/dev/null/connect-all.lock";  // taking it would fail (ENOTDIR), harmlessly
  args.dump_config = true;
  args.opts.queue_size = 64;
  args.opts.ctrl_loss_tmo = -1;
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.err.str();
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_EQ(env.out.str().find("DHHC"), std::string::npos) << env.out.str();
  const auto j = nlohmann::json::parse(env.out.str());
  ASSERT_TRUE(j.is_array()) << env.out.str();
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["hostnqn"], kHostnqn);  // from /etc/nvme, as connect would send it
  EXPECT_EQ(j[0]["hostid"], kHostUuid);
  const auto& subs = j[0]["subsystems"];
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0]["nqn"], kDiscoveryNqn);
  EXPECT_EQ(subs[0]["ports"][0]["traddr"], "192.168.50.20");
  EXPECT_EQ(subs[0]["ports"][0]["queue_size"], 32);  // the line's own value stays
  EXPECT_EQ(subs[0]["ports"][0]["ctrl_loss_tmo"], -1);
  EXPECT_EQ(subs[1]["nqn"], kSubnqn);
  EXPECT_EQ(subs[1]["ports"][0]["queue_size"], 64);  // the command line's, where the file has none
  EXPECT_EQ(subs[1]["ports"][0]["dhchap_key"], "(secret)");
  EXPECT_FALSE(j.dump().find("192.168.60.10") != std::string::npos);
  EXPECT_NE(env.err.str().find("discovery.conf:2: skipped: transport tcp is not rdma"),
            std::string::npos) << env.err.str();
  // nothing configured: an empty list
  TestEnv empty;
  ASSERT_TRUE(run_connect_all(empty.ctx, args).ok());
  EXPECT_EQ(empty.out.str(), "[]\n");
}

TEST_F(ConnectAllTest, DryRunConnectsNothing) {
  env.ctx.dry_run = true;
  env.fs.add("/etc/nvme/config.json", R"([{"subsystems": [{"nqn": "nqn.2024-01.io.rnvme:target1", "ports": [{"transport": "rdma", "traddr": "192.168.50.10"}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_NE(env.out.str().find("would_connect"), std::string::npos);
}

TEST_F(ConnectAllTest, BrokenConfigIsAConfigError) {
  env.fs.add("/etc/nvme/config.json", "{not json");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  auto st = run_connect_all(env.ctx, args);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
}

}  // namespace
}  // namespace rnvme
