#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "cmd/commands.h"
#include "core/discovery.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

// A referral entry: another discovery service, at traddr:trsvcid.
LogEntry referral(const std::string& traddr, const std::string& trsvcid = "4420",
                  uint8_t trtype = kTrtypeRdma) {
  return {std::string(kDiscoveryNqn), traddr, trsvcid, kSubtypeReferral, trtype};
}

// The value of `key` in an option string written to /dev/nvme-fabrics, or "".
std::string option_value(const std::string& o, const std::string& key) {
  const std::string k = "," + key + "=";
  const auto at = ("," + o).find(k);
  if (at == std::string::npos) return {};
  const auto from = at + k.size() - 1;
  return o.substr(from, o.find(',', from) - from);
}

// connect-all's own command line (setup_connect_all) parsed into `args`' flags.
bool setup_and_parse(ConnectAllArgs& args, std::vector<std::string> words) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("connect-all");
  Action action = setup_connect_all(*sub);
  words.insert(words.begin(), "connect-all");
  std::reverse(words.begin(), words.end());
  try {
    app.parse(words);
  } catch (const CLI::ParseError&) {
    return false;
  }
  // the flags the action holds are not reachable from here: read them back by name
  args.discovery.persistent = sub->count("--persistent") == 1;
  args.discovery.force = sub->count("--force") == 1;
  return true;
}

class ConnectAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_host_identity(env.fs);
    add_modules(env.fs);
    // Each connect gets the next instance; discovery controllers answer with a log page: nvme0's,
    // or the one `served` at their traddr:trsvcid.
    env.fabrics.handler = [this](const std::string& o) -> Result<std::string> {
      if (o.find("nqn=nqn.2024-01.io.rnvme:bad") != std::string::npos) {
        env.kmsg.emit("nvme nvme9: Connect Invalid Data Parameter, subsysnqn \"nqn.2024-01.io.rnvme:bad\"");
        Error e = make_error(ErrorCode::kConnect, "write failed");
        e.sys_errno = EIO;
        return e;
      }
      if (unreachable.contains(option_value(o, "traddr"))) {
        Error e = make_error(ErrorCode::kConnect, "write failed");
        e.sys_errno = EHOSTUNREACH;
        return e;
      }
      const int n = next++;
      const std::string service = option_value(o, "traddr") + ":" + option_value(o, "trsvcid");
      if (option_value(o, "nqn") == kDiscoveryNqn && served.contains(service))
        env.dlog.pages[fmt::format("nvme{}", n)] = served[service];
      return fmt::format("instance={},cntlid=1\n", n);
    };
    env.dlog.pages["nvme0"] = make_discovery_log({
        {kSubnqn, "192.168.50.10", "4420"},
        {"nqn.2024-01.io.rnvme:target2", "192.168.50.10", "4420"},
        referral("192.168.50.20"),
        {"nqn.2024-01.io.rnvme:tcp", "192.168.50.10", "4420", 2, 3},
    });
    served["192.168.50.20:4420"] = make_discovery_log({});  // the referral's log: empty
  }
  // What the discovery service at 192.168.50.20 lists: one subsystem of its own.
  static std::vector<uint8_t> target3_log() {
    return make_discovery_log({{"nqn.2024-01.io.rnvme:target3", "192.168.50.20", "4420"}});
  }
  nlohmann::json results() { return nlohmann::json::parse(env.out.str())["results"]; }
  std::vector<std::string> statuses() {
    std::vector<std::string> s;
    for (const auto& i : results()) s.push_back(i["status"]);
    return s;
  }
  // The traddr:trsvcid of every discovery controller connected, in order.
  std::vector<std::string> discovery_connects() {
    std::vector<std::string> d;
    for (const auto& o : env.fabrics.written)
      if (option_value(o, "nqn") == kDiscoveryNqn)
        d.push_back(option_value(o, "traddr") + ":" + option_value(o, "trsvcid"));
    return d;
  }
  TestEnv env;
  int next = 0;
  std::map<std::string, std::vector<uint8_t>> served;  // discovery logs by traddr:trsvcid
  std::set<std::string> unreachable;                    // traddrs with no route
};

TEST_F(ConnectAllTest, FromDiscoveryConf) {
  env.json();
  env.fs.add("/etc/nvme/discovery.conf", "# lab\n--transport=rdma --traddr=192.168.50.10 --trsvcid=4420 -Q 32\n");
  ConnectAllArgs args;
  args.lock_file.clear();  // the lock has its own test (sys/lock_test.cc)
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  // the referral is followed to an empty log; the TCP entry is skipped
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "followed", "skipped"}));
  ASSERT_EQ(env.fabrics.written.size(), 4u);  // discovery + two subsystems + the referral's
  // Tunables of the discovery line carry over to every connection it yields.
  EXPECT_NE(env.fabrics.written[1].find("nqn=nqn.2024-01.io.rnvme:target1"), std::string::npos);
  EXPECT_NE(env.fabrics.written[1].find("queue_size=32"), std::string::npos);
  EXPECT_EQ(env.fs.writes[0].first, "/sys/class/nvme/nvme0/delete_controller");
}

// nvme-cli's -p (on a discovery.conf line, or connect-all's command line for every line): the
// discovery controller stays, with keep-alive 30 s (NVMF_DEF_DISC_TMO); the next run reads the one
// that is there instead of connecting another (lookup_discovery_ctrl), unless --force.
TEST_F(ConnectAllTest, PersistentDiscoveryControllerStaysAndIsReadAgain) {
  env.fs.add("/etc/nvme/discovery.conf", "-t rdma -a 192.168.50.10 -s 4420 -p\n");
  ConnectAllArgs args;
  args.lock_file.clear();
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.err.str();
  ASSERT_GE(env.fabrics.written.size(), 2u) << env.out.str();
  EXPECT_EQ(option_value(env.fabrics.written[0], "nqn"), kDiscoveryNqn);
  EXPECT_EQ(option_value(env.fabrics.written[0], "traddr"), "192.168.50.10");
  EXPECT_EQ(option_value(env.fabrics.written[0], "keep_alive_tmo"), "30");
  for (const auto& [path, data] : env.fs.writes)
    EXPECT_NE(path, "/sys/class/nvme/nvme0/delete_controller");
  // the subsystems it lists get no discovery keep-alive
  EXPECT_EQ(option_value(env.fabrics.written[1], "keep_alive_tmo"), "");

  // the next run: nvme5 is that persistent discovery controller
  TestEnv again;
  add_host_identity(again.fs);
  add_modules(again.fs);
  add_controller(again.fs, "nvme5", "nvme-subsys5", std::string(kDiscoveryNqn), "rdma",
                 "192.168.50.10", "4420");
  again.fs.add("/etc/nvme/discovery.conf", "-t rdma -a 192.168.50.10 -s 4420 -p\n");
  again.dlog.pages["nvme5"] = make_discovery_log({{kSubnqn, "192.168.50.10", "4420"}});
  again.fabrics.handler = [](const std::string&) -> Result<std::string> {
    return std::string("instance=6,cntlid=1\n");
  };
  ASSERT_TRUE(run_connect_all(again.ctx, args).ok()) << again.err.str();
  EXPECT_EQ(again.dlog.reads, std::vector<std::string>{"nvme5"});
  ASSERT_EQ(again.fabrics.written.size(), 1u);  // the subsystem only
  EXPECT_EQ(option_value(again.fabrics.written[0], "nqn"), kSubnqn);
  EXPECT_TRUE(again.fs.writes.empty());  // nothing deleted

  // --force: another discovery controller all the same (and it stays too)
  again.fabrics.written.clear();
  again.dlog.pages["nvme6"] = make_discovery_log({});
  ConnectAllArgs force = args;
  force.discovery.force = true;
  ASSERT_TRUE(run_connect_all(again.ctx, force).ok()) << again.err.str();
  ASSERT_EQ(again.fabrics.written.size(), 1u);
  EXPECT_EQ(option_value(again.fabrics.written[0], "nqn"), kDiscoveryNqn);
  EXPECT_TRUE(again.fs.writes.empty());
}

// connect-all's -p on the command line is every line's -p.
TEST_F(ConnectAllTest, PersistentOnTheCommandLine) {
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(setup_and_parse(args, {"-p", "--force"}));
  EXPECT_TRUE(args.discovery.persistent);
  EXPECT_TRUE(args.discovery.force);
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(option_value(env.fabrics.written[0], "keep_alive_tmo"), "30");
  for (const auto& [path, data] : env.fs.writes)
    EXPECT_NE(path, "/sys/class/nvme/nvme0/delete_controller");
}

// nvme-cli's connect-all -r FILE saves the log instead of connecting: refused, naming it.
TEST_F(ConnectAllTest, RawIsRefusedWithNvmeClisSpelling) {
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  args.raw = "/tmp/log.bin";
  auto st = run_connect_all(env.ctx, args);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  EXPECT_EQ(st.error().message, "-r/--raw /tmp/log.bin is not supported");
  EXPECT_NE(st.error().cause.find("nvme-cli"), std::string::npos);
  EXPECT_TRUE(env.fabrics.written.empty());
}

// An entry whose treq says SQ flow control may be disabled (bit 2, NVMF_TREQ_DISABLE_SQFLOW) is
// connected with disable_sqflow, as libnvme 1.3's nvmf_connect_disc_entry() does; the others not.
TEST_F(ConnectAllTest, EntryTreqDisableSqflowIsHonoured) {
  env.dlog.pages["nvme0"] = make_discovery_log({
      {kSubnqn, "192.168.50.10", "4420", kSubtypeNvme, kTrtypeRdma, 0, 2 | kTreqDisableSqflow},
      {"nqn.2024-01.io.rnvme:target2", "192.168.50.10", "4420"},
  });
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  ASSERT_EQ(env.fabrics.written.size(), 3u);
  EXPECT_EQ(env.fabrics.written[0].find("disable_sqflow"), std::string::npos);  // discovery
  EXPECT_NE(env.fabrics.written[1].find("nqn=" + std::string(kSubnqn)), std::string::npos);
  EXPECT_NE(env.fabrics.written[1].find(",disable_sqflow"), std::string::npos)
      << env.fabrics.written[1];
  EXPECT_EQ(env.fabrics.written[2].find("disable_sqflow"), std::string::npos)
      << env.fabrics.written[2];
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
  EXPECT_EQ(statuses(), (std::vector<std::string>{"skipped", "connected", "connected", "followed",
                                                  "skipped", "skipped", "skipped"}));
  const auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["results"][0]["detail"], "transport tcp is not rdma");
  EXPECT_NE(j["results"][5]["detail"].get<std::string>().find("--frobnicate"), std::string::npos);
  EXPECT_NE(j["results"][6]["detail"].get<std::string>().find("invalid --dhchap-secret"),
            std::string::npos);
  // the RDMA discovery controller, its two subsystems and its referral's discovery controller
  ASSERT_EQ(env.fabrics.written.size(), 4u);
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
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "followed", "skipped"}));
  // the two subsystems and the referral's discovery controller; none for nvme4's log
  ASSERT_EQ(env.fabrics.written.size(), 3u);
  EXPECT_NE(env.fabrics.written[0].find("host_traddr=192.168.50.1"), std::string::npos)
      << env.fabrics.written[0];
  // nvme4 is not deleted; the referral's discovery controller (nvme7) is
  EXPECT_EQ(deleted_paths(env.fs), std::vector<std::string>{"/sys/class/nvme/nvme7/delete_controller"});
  args.device = "nvme0";               // not a discovery controller
  add_sample_controllers(env.fs);
  EXPECT_EQ(run_connect_all(env.ctx, args).error().code, ErrorCode::kUsage);
}

// --device as nvme-cli takes it (nvme4 or /dev/nvme4); what is not a controller's name is a
// usage error before the topology is read (a namespace was "no controller nvme4n1").
TEST_F(ConnectAllTest, DeviceSpellings) {
  add_controller(env.fs, "nvme4", "nvme-subsys4", std::string(kDiscoveryNqn), "rdma", "192.168.50.10",
                 "4420");
  env.dlog.pages["nvme4"] = make_discovery_log({{kSubnqn, "192.168.50.10", "4420"}});
  next = 5;
  ConnectAllArgs args;
  args.lock_file.clear();
  args.device = "/dev/nvme4";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(env.dlog.reads, std::vector<std::string>{"nvme4"});
  for (const char* bad : {"nvme4n1", "/dev/nvme4n1", "../nvme4", "/dev//dev/nvme4"}) {
    args.device = bad;
    auto st = run_connect_all(env.ctx, args);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.error().code, ErrorCode::kUsage) << bad;
    EXPECT_EQ(st.error().message, fmt::format("'{}' is not a controller name", bad));
  }
  EXPECT_EQ(env.dlog.reads.size(), 1u);
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
  ASSERT_EQ(env.fabrics.written.size(), 4u);  // with the referral's discovery controller
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

// nvme-cli's connect-all follows referrals: the discovery service at the referred address is
// asked too, with the host identity, host address and tunables of the discovery line that led
// there, and the subsystems of its log are connected as the first log's are.
TEST_F(ConnectAllTest, ReferralIsFollowedAndItsSubsystemsConnected) {
  env.json();
  env.fs.add("/etc/nvme/discovery.conf",
             "--transport=rdma --traddr=192.168.50.10 --host-traddr=192.168.50.1 -Q 32\n");
  served["192.168.50.20:4420"] = make_discovery_log({
      {"nqn.2024-01.io.rnvme:target3", "192.168.50.20", "4420"},
      {"nqn.2024-01.io.rnvme:target4", "192.168.50.21", "4421"},
  });
  ConnectAllArgs args;
  args.lock_file.clear();
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "followed", "connected",
                                                  "connected", "skipped"}));
  EXPECT_EQ(discovery_connects(),
            (std::vector<std::string>{"192.168.50.10:4420", "192.168.50.20:4420"}));
  const auto r = results();
  EXPECT_EQ(r[2]["traddr"], "192.168.50.20");
  EXPECT_EQ(r[3]["nqn"], "nqn.2024-01.io.rnvme:target3");
  EXPECT_EQ(r[3]["device"], "nvme4");
  EXPECT_EQ(r[4]["traddr"], "192.168.50.21");
  EXPECT_EQ(r[4]["trsvcid"], "4421");
  ASSERT_EQ(env.fabrics.written.size(), 6u);
  const std::string& referred = env.fabrics.written[3];
  EXPECT_EQ(option_value(referred, "host_traddr"), "192.168.50.1") << referred;
  EXPECT_EQ(option_value(referred, "hostnqn"), kHostnqn);
  EXPECT_EQ(option_value(referred, "hostid"), kHostUuid);
  const std::string& target3 = env.fabrics.written[4];
  EXPECT_EQ(option_value(target3, "nqn"), "nqn.2024-01.io.rnvme:target3");
  EXPECT_EQ(option_value(target3, "host_traddr"), "192.168.50.1") << target3;
  EXPECT_EQ(option_value(target3, "queue_size"), "32");
  // each discovery controller is removed once its log is read
  EXPECT_EQ(deleted_paths(env.fs), (std::vector<std::string>{"/sys/class/nvme/nvme0/delete_controller",
                                                             "/sys/class/nvme/nvme3/delete_controller"}));
}

// Each entry says which discovery service listed it (`via`, traddr:trsvcid), so the referral
// chain can be read off the results, in JSON and in text; what no log listed has none.
TEST_F(ConnectAllTest, ResultsShowTheDiscoveryServiceEachEntryCameFrom) {
  env.json();
  env.fs.add("/etc/nvme/discovery.conf", "--transport=rdma --traddr=192.168.50.10\n");
  served["192.168.50.20:4420"] = target3_log();
  env.fs.add("/srv/c.json", R"([{"subsystems": [{"nqn": "nqn.2024-01.io.rnvme:target5", "ports": [{"transport": "rdma", "traddr": "192.168.50.30"}]}]}])");
  ConnectAllArgs args;
  args.lock_file.clear();
  args.config_json = "/srv/c.json";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  const auto r = results();
  ASSERT_EQ(r.size(), 6u) << env.out.str();
  EXPECT_EQ(r[0]["via"], "192.168.50.10:4420");  // target1, in the first log
  EXPECT_EQ(r[2]["status"], "followed");         // the referral, listed by the first log
  EXPECT_EQ(r[2]["via"], "192.168.50.10:4420");
  EXPECT_EQ(r[2]["source"], "discovery 192.168.50.10:4420");
  EXPECT_EQ(r[3]["nqn"], "nqn.2024-01.io.rnvme:target3");  // listed by the referred log
  EXPECT_EQ(r[3]["via"], "192.168.50.20:4420");
  EXPECT_EQ(r[3]["source"], "discovery 192.168.50.20:4420");
  EXPECT_EQ(r[4]["via"], "192.168.50.10:4420");  // the TCP entry of the first log, skipped
  ASSERT_TRUE(r[5].contains("via"));             // config.json's port: no discovery log
  EXPECT_TRUE(r[5]["via"].is_null());
  EXPECT_EQ(r[5]["nqn"], "nqn.2024-01.io.rnvme:target5");
  // text: the same model
  env.out.str("");
  env.printer.set_format(Format::kText);
  env.fabrics.written.clear();
  next = 0;
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  const std::string text = env.out.str();
  EXPECT_NE(text.find("followed          nqn.2014-08.org.nvmexpress.discovery 192.168.50.20:4420 "
                      "via 192.168.50.10:4420\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("nqn.2024-01.io.rnvme:target3 192.168.50.20:4420 -> nvme4 via 192.168.50.20:4420\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("nqn.2024-01.io.rnvme:target5 192.168.50.30:4420 -> nvme5\n"), std::string::npos)
      << text;
}

// A refers to B and B to A (and discovery.conf names B as well): each is read once; the
// referral back, and the line, are skipped with the reason.
TEST_F(ConnectAllTest, ReferralLoopReadsEachDiscoveryServiceOnce) {
  env.json();
  env.fs.add("/etc/nvme/discovery.conf",
             "--transport=rdma --traddr=192.168.50.10\n--transport=rdma --traddr=192.168.50.20\n");
  served["192.168.50.20:4420"] = make_discovery_log({
      {"nqn.2024-01.io.rnvme:target3", "192.168.50.20", "4420"},
      referral("192.168.50.10"),
  });
  ConnectAllArgs args;
  args.lock_file.clear();
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  EXPECT_EQ(discovery_connects(),
            (std::vector<std::string>{"192.168.50.10:4420", "192.168.50.20:4420"}));
  EXPECT_EQ(env.dlog.reads, (std::vector<std::string>{"nvme0", "nvme3"}));
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "connected", "followed", "connected",
                                                  "skipped", "skipped", "skipped"}));
  const auto r = results();
  EXPECT_EQ(r[4]["traddr"], "192.168.50.10");
  EXPECT_EQ(r[4]["via"], "192.168.50.20:4420");
  EXPECT_EQ(r[4]["detail"],
            "referral not followed: discovery service 192.168.50.10:4420 already read in this run");
  EXPECT_EQ(r[6]["source"], "/etc/nvme/discovery.conf:2");
  EXPECT_EQ(r[6]["detail"], "discovery service 192.168.50.20:4420 already read in this run");
}

// A chain of referrals is followed kMaxReferralDepth deep from the configured discovery
// controller; the next referral is skipped, saying so.
TEST_F(ConnectAllTest, ReferralChainIsFollowedToTheDepthLimit) {
  env.json();
  auto addr = [](int i) { return fmt::format("192.168.52.{}", i); };
  env.dlog.pages["nvme0"] = make_discovery_log({referral(addr(1))});
  for (int i = 1; i <= kMaxReferralDepth + 2; i++)
    served[addr(i) + ":4420"] =
        make_discovery_log({{fmt::format("nqn.2024-01.io.rnvme:t{}", i), addr(i), "4420"},
                            referral(addr(i + 1))});
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  std::vector<std::string> want = {"192.168.50.10:4420"};
  for (int i = 1; i <= kMaxReferralDepth; i++) want.push_back(addr(i) + ":4420");
  EXPECT_EQ(discovery_connects(), want);
  const auto r = results();
  ASSERT_EQ(r.size(), 2u * kMaxReferralDepth + 1) << env.out.str();  // followed + subsystem each
  EXPECT_EQ(r[r.size() - 2]["nqn"], fmt::format("nqn.2024-01.io.rnvme:t{}", kMaxReferralDepth));
  EXPECT_EQ(r[r.size() - 2]["status"], "connected");
  EXPECT_EQ(r.back()["status"], "skipped");
  EXPECT_EQ(r.back()["traddr"], addr(kMaxReferralDepth + 1));
  EXPECT_EQ(r.back()["detail"],
            fmt::format("referral not followed: depth limit of {} referrals reached", kMaxReferralDepth));
}

// However wide the referrals fan out, at most kMaxReferredDiscovery discovery controllers are
// connected through them in one run; the rest are skipped, saying so, and the run succeeds.
TEST_F(ConnectAllTest, ReferredDiscoveryControllersAreCappedPerRun) {
  env.json();
  std::vector<LogEntry> refs;
  for (size_t i = 1; i <= kMaxReferredDiscovery + 3; i++) {
    refs.push_back(referral(fmt::format("192.168.53.{}", i)));
    served[fmt::format("192.168.53.{}:4420", i)] = make_discovery_log({});
  }
  env.dlog.pages["nvme0"] = make_discovery_log(refs);
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  EXPECT_EQ(discovery_connects().size(), kMaxReferredDiscovery + 1);
  const auto s = statuses();
  ASSERT_EQ(s.size(), kMaxReferredDiscovery + 3);
  EXPECT_EQ(std::count(s.begin(), s.end(), "followed"), static_cast<long>(kMaxReferredDiscovery));
  const auto r = results();
  for (size_t i = kMaxReferredDiscovery; i < s.size(); i++) {
    EXPECT_EQ(r[i]["status"], "skipped");
    EXPECT_EQ(r[i]["detail"], fmt::format("referral not followed: limit of {} discovery controllers "
                                          "reached through referrals in one run",
                                          kMaxReferredDiscovery));
  }
}

// Referrals to another transport's discovery service are skipped, as its subsystems are; an
// RDMA referral beside it is followed.
TEST_F(ConnectAllTest, NonRdmaReferralIsSkipped) {
  env.json();
  env.dlog.pages["nvme0"] = make_discovery_log({
      {kSubnqn, "192.168.50.10", "4420"},
      referral("192.168.60.10", "8009", 3),  // tcp
      referral("192.168.50.20"),
  });
  served["192.168.50.20:4420"] = target3_log();
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "skipped", "followed", "connected"}));
  const auto r = results();
  EXPECT_EQ(r[1]["detail"], "transport tcp is not rdma");
  EXPECT_EQ(r[1]["trsvcid"], "8009");
  EXPECT_EQ(discovery_connects(),
            (std::vector<std::string>{"192.168.50.10:4420", "192.168.50.20:4420"}));
  for (const auto& o : env.fabrics.written) EXPECT_EQ(o.find("192.168.60.10"), std::string::npos) << o;
}

// A referral that cannot be reached is that entry's failure, with cause and fix; the other
// entries, and another referral, go on. The run exits as any partly failed connect-all does.
TEST_F(ConnectAllTest, UnreachableReferralFailsAloneAndTheRestConnect) {
  env.json();
  env.dlog.pages["nvme0"] = make_discovery_log({
      {kSubnqn, "192.168.50.10", "4420"},
      referral("192.168.50.99"),
      referral("192.168.50.20"),
      {"nqn.2024-01.io.rnvme:target2", "192.168.50.10", "4420"},
  });
  served["192.168.50.20:4420"] = target3_log();
  unreachable.insert("192.168.50.99");
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  auto st = run_connect_all(env.ctx, args);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConnect);
  EXPECT_EQ(st.error().message, "1 of 5 connections failed");
  EXPECT_EQ(statuses(),
            (std::vector<std::string>{"connected", "failed", "followed", "connected", "connected"}));
  const auto r = results();
  EXPECT_EQ(r[1]["traddr"], "192.168.50.99");
  EXPECT_EQ(r[1]["nqn"], kDiscoveryNqn);
  EXPECT_EQ(r[1]["via"], "192.168.50.10:4420");
  EXPECT_EQ(r[1]["failure_class"], "unreachable");
  const std::string detail = r[1]["detail"];
  EXPECT_NE(detail.find("no route to 192.168.50.99"), std::string::npos) << detail;
  EXPECT_NE(detail.find("; fix: "), std::string::npos) << detail;
  EXPECT_EQ(r[3]["nqn"], "nqn.2024-01.io.rnvme:target3");
}

// The udev path (--device nvmeN, a persistent discovery controller): its referrals are followed
// the same way, with that controller's host address and identity; it stays, the referred one
// goes once read.
TEST_F(ConnectAllTest, PersistentDiscoveryControllerFollowsReferrals) {
  env.json();
  add_controller(env.fs, "nvme4", "nvme-subsys4", std::string(kDiscoveryNqn), "rdma", "192.168.50.10",
                 "4420");
  env.fs.add("/sys/class/nvme/nvme4/address",
             "traddr=192.168.50.10,trsvcid=4420,host_traddr=192.168.50.1\n");
  env.dlog.pages["nvme4"] = make_discovery_log({referral("192.168.50.20")});
  served["192.168.50.20:4420"] = target3_log();
  next = 5;
  ConnectAllArgs args;
  args.lock_file.clear();
  args.device = "nvme4";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok()) << env.out.str();
  EXPECT_EQ(statuses(), (std::vector<std::string>{"followed", "connected"}));
  ASSERT_EQ(env.fabrics.written.size(), 2u);
  for (const auto& o : env.fabrics.written) {
    EXPECT_EQ(option_value(o, "host_traddr"), "192.168.50.1") << o;
    EXPECT_EQ(option_value(o, "hostnqn"), kHostnqn) << o;
  }
  EXPECT_EQ(discovery_connects(), std::vector<std::string>{"192.168.50.20:4420"});
  const auto r = results();
  EXPECT_EQ(r[0]["via"], "192.168.50.10:4420");
  EXPECT_EQ(r[1]["via"], "192.168.50.20:4420");
  EXPECT_EQ(r[1]["device"], "nvme6");
  EXPECT_EQ(deleted_paths(env.fs), std::vector<std::string>{"/sys/class/nvme/nvme5/delete_controller"});
}

// A referral flagged DUPRETINFO returns what the log listing it does: not followed (nvme-cli
// skips it too).
TEST_F(ConnectAllTest, ReferralReturningTheSameInformationIsNotFollowed) {
  env.json();
  env.dlog.pages["nvme0"] = make_discovery_log({
      {kSubnqn, "192.168.50.10", "4420"},
      {std::string(kDiscoveryNqn), "192.168.50.20", "4420", kSubtypeReferral, kTrtypeRdma,
       kEflagsDupRetInfo},
  });
  ConnectAllArgs args;
  args.lock_file.clear();
  args.opts.traddr = "192.168.50.10";
  ASSERT_TRUE(run_connect_all(env.ctx, args).ok());
  EXPECT_EQ(statuses(), (std::vector<std::string>{"connected", "skipped"}));
  EXPECT_NE(results()[1]["detail"].get<std::string>().find("DUPRETINFO"), std::string::npos);
  EXPECT_EQ(discovery_connects(), std::vector<std::string>{"192.168.50.10:4420"});
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
