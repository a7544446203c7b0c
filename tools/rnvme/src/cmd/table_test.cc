// The command table and CLI11 bindings: command-line words reach the run functions intact.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

// Parses argv like main() does and runs the selected command against `env`.
Status run_cli(TestEnv& env, std::vector<std::string> args) {
  CLI::App app;
  app.require_subcommand(1, 1);
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& cmd : command_table()) {
    CLI::App* sub = app.add_subcommand(std::string(cmd.name), std::string(cmd.help));
    actions.emplace_back(sub, cmd.setup(*sub));
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form reversed
  app.parse(args);
  for (auto& [sub, action] : actions)
    if (sub->parsed()) return action(env.ctx);
  return make_error(ErrorCode::kUsage, "no command");
}

TEST(CommandTable, EveryCommandIsRegisteredOnce) {
  std::set<std::string_view> names;
  for (const auto& c : command_table()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.help.empty());
  }
  for (auto n : {"discover", "connect", "connect-all", "disconnect", "disconnect-all", "list", "rdma",
                 "hostnqn"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(CommandTable, ConnectShortAndLongOptionsReachTheOptionString) {
  TestEnv env;
  add_host_identity(env.fs);
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_cli(env, {"connect", "-a", "192.168.50.10", "-s", "4421", "-n", kSubnqn, "-Q", "64",
                            "--nr-io-queues=2", "-l", "-1", "--duplicate-connect", "-T", "0"})
                  .ok());
  EXPECT_EQ(env.out.str(), std::string("transport=rdma,traddr=192.168.50.10,trsvcid=4421,nqn=") +
                               kSubnqn + ",hostnqn=" + kHostnqn + ",hostid=" + kHostUuid +
                               ",queue_size=64,nr_io_queues=2,ctrl_loss_tmo=-1,tos=0,"
                               "duplicate_connect\n");
}

// nvme-cli's 0 and -1 for "the default" on the command line: no token for them, and the
// kernel's default holds (libnvme 1.3 leaves a count or timeout that is not positive out).
TEST(CommandTable, ConnectZeroAndMinusOneAreTheDefaults) {
  TestEnv env;
  add_host_identity(env.fs);
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_cli(env, {"connect", "-a", "192.168.50.10", "-n", kSubnqn, "-k", "0", "-i", "-1",
                            "-c", "0", "-Q", "-1", "-W", "-1", "-P", "0", "-T", "-1", "-l", "0"})
                  .ok());
  EXPECT_EQ(env.out.str(), std::string("transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=") +
                               kSubnqn + ",hostnqn=" + kHostnqn + ",hostid=" + kHostUuid +
                               ",ctrl_loss_tmo=0\n");
}

// nvme-cli's letters and spellings mean what they mean there: -F and --fast_io_fail_tmo are the
// fast-io-fail timeout, -f is --host-iface (TCP only: ignored, and said so), -g/-G the digests.
TEST(CommandTable, NvmeCliOptionLettersAndSpellings) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"connect", "-a", "192.168.50.10", "-n", kSubnqn, "-F", "5", "-f", "eth1", "-g", "-G"},
           {"connect", "-a", "192.168.50.10", "-n", kSubnqn, "--fast_io_fail_tmo=5", "--host-iface",
            "eth1", "--hdr-digest", "--data-digest"}}) {
    TestEnv env;
    add_host_identity(env.fs);
    env.ctx.dry_run = true;
    ASSERT_TRUE(run_cli(env, args).ok());
    EXPECT_NE(env.out.str().find(",fast_io_fail_tmo=5"), std::string::npos) << env.out.str();
    EXPECT_EQ(env.out.str().find("eth1"), std::string::npos);
    EXPECT_NE(env.err.str().find("--host-iface does not apply to rdma"), std::string::npos);
    EXPECT_NE(env.err.str().find("--hdr-digest does not apply to rdma"), std::string::npos);
    EXPECT_NE(env.err.str().find("--data-digest does not apply to rdma"), std::string::npos);
  }
}

// DH-HMAC-CHAP secrets by nvme-cli's names reach the kernel, and are not printed.
TEST(CommandTable, DhchapSecretsPassedThrough) {
  constexpr const char* kKey = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  TestEnv env;
  add_host_identity(env.fs);
  add_modules(env.fs);
  ASSERT_TRUE(run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "-S", kKey,
                            "--dhchap-ctrl-secret=DHHC-1:02:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:"}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find(std::string("dhchap_secret=") + kKey), std::string::npos);
  EXPECT_NE(env.fabrics.written[0].find("dhchap_ctrl_secret=DHHC-1:02:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:"), std::string::npos);
  EXPECT_EQ(env.out.str().find("DHHC"), std::string::npos) << env.out.str();
  // a key nvme-core would refuse is refused here, before anything is written
  try {
    (void)run_cli(env, {"connect", "-a", "10.0.0.2", "-n", kSubnqn, "-S", "DHHC-1:00:abcd:"});
    ADD_FAILURE() << "a malformed key was taken";
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid --dhchap-secret"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("abcd"), std::string::npos) << "the secret is echoed";
  }
  EXPECT_EQ(env.fabrics.written.size(), 1u);
}

// A kernel without in-band authentication would take the secret and connect unauthenticated.
TEST(CommandTable, DhchapSecretRefusedWhenTheKernelCannotAuthenticate) {
  TestEnv env;
  add_host_identity(env.fs);
  add_modules(env.fs);
  env.fs.add("/proc/sys/kernel/osrelease", "6.1.0-56-amd64\n");
  env.fs.add("/boot/config-6.1.0-56-amd64", "CONFIG_NVME_CORE=m\n# CONFIG_NVME_AUTH is not set\n");
  Status st = run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "-S", "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "authentication");
  EXPECT_NE(st.error().message.find("built without it"), std::string::npos) << st.error().message;
  EXPECT_TRUE(env.fabrics.written.empty());
  // 6.12's: nvme_core holds nvme_auth
  env.fs.add("/sys/module/nvme_auth/holders/nvme_core", "");
  EXPECT_TRUE(run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "-S", "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"}).ok());
  EXPECT_EQ(env.fabrics.written.size(), 1u);
}

// nvme-cli's --quiet on connect, discover and connect-all: the note about an option that does not
// apply to RDMA (and every other note or warning) stays off stderr.
TEST(CommandTable, QuietOnConnectDiscoverAndConnectAll) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"connect", "-a", "192.168.50.10", "-n", "testnqn", "-f", "eth1", "--quiet"},
           {"discover", "-a", "192.168.50.10", "-f", "eth1", "--quiet"},
           {"connect-all", "-a", "192.168.50.10", "-f", "eth1", "--quiet"}}) {
    TestEnv env;
    add_host_identity(env.fs);
    env.ctx.dry_run = true;
    env.ctx.verbose = 1;
    ASSERT_TRUE(run_cli(env, args).ok()) << args[0];
    EXPECT_EQ(env.err.str(), "") << args[0];
    EXPECT_NE(env.out.str().find("192.168.50.10"), std::string::npos) << env.out.str();
  }
}

// nvme-cli's -J/--config on connect and discover (connect-all has had it).
TEST(CommandTable, ConnectAndDiscoverConfigOption) {
  for (std::string nqn : {std::string(kSubnqn), std::string(kDiscoveryNqn)}) {
    const std::string cmd = nqn == kSubnqn ? "connect" : "discover";
    TestEnv env;
    add_host_identity(env.fs);
    env.ctx.dry_run = true;
    env.fs.add("/srv/x.json", R"([{"subsystems": [{"nqn": ")" + nqn +
                                  R"(", "ports": [{"transport": "rdma", "traddr": "10.0.0.1", "nr_io_queues": 3}]}]}])");
    ASSERT_TRUE(run_cli(env, {cmd, "-a", "10.0.0.1", "-n", nqn, "-J", "/srv/x.json"}).ok());
    EXPECT_NE(env.out.str().find(",nr_io_queues=3"), std::string::npos) << env.out.str();
    ASSERT_TRUE(run_cli(env, {cmd, "-a", "10.0.0.1", "-n", nqn, "--config", "none"}).ok());
    EXPECT_EQ(env.out.str().find(",nr_io_queues=3", env.out.str().find('\n')), std::string::npos)
        << env.out.str();
  }
}

// nvme-cli's letter for disconnect-all's transport is -r; rnvme's -t stays as an alias.
TEST(CommandTable, DisconnectAllTransportLetters) {
  for (std::string letter : {"-r", "-t", "--transport"}) {
    TestEnv env;
    add_sample_controllers(env.fs);
    add_controller(env.fs, "nvme4", "nvme-subsys4", "nqn.2024-01.io.rnvme:tcp", "tcp",
                   "192.168.60.10", "4420");
    ASSERT_TRUE(run_cli(env, {"disconnect-all", letter, "tcp"}).ok()) << letter;
    EXPECT_EQ(deleted_paths(env.fs), std::vector<std::string>{"/sys/class/nvme/nvme4/delete_controller"})
        << letter;
  }
}

TEST(CommandTable, NonNumericValueIsAParseError) {
  TestEnv env;
  EXPECT_THROW((void)run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "--queue-size", "lots"}),
               CLI::ValidationError);
}

TEST(CommandTable, RdmaWordsAndHostnqnAction) {
  TestEnv env;
  ASSERT_TRUE(run_cli(env, {"rdma", "link", "add", "rxe1", "type", "rxe", "netdev", "eth1"}).ok());
  EXPECT_EQ(env.netlink.calls, std::vector<std::string>{"add rxe1 rxe eth1"});
  EXPECT_THROW((void)run_cli(env, {"hostnqn", "frob"}), CLI::ValidationError);
}

TEST(CommandTable, ConnectAllConfigOption) {
  TestEnv env;
  env.ctx.dry_run = true;
  env.fs.add("/srv/x.json", std::string(R"([{"subsystems": [{"nqn": ")") + kSubnqn +
                                R"(", "ports": [{"transport": "rdma", "traddr": "10.0.0.1"}]}]}])");
  ASSERT_TRUE(run_cli(env, {"connect-all", "--config", "/srv/x.json", "--discovery-conf", "/none"}).ok());
  EXPECT_NE(env.out.str().find("would_connect"), std::string::npos);
}

TEST(CommandTable, ConnectAllDumpConfig) {
  for (std::string flag : {"--dump-config", "-O"}) {
    TestEnv env;
    env.fs.add("/srv/x.json", std::string(R"([{"subsystems": [{"nqn": ")") + kSubnqn +
                                  R"(", "ports": [{"transport": "rdma", "traddr": "10.0.0.1"}]}]}])");
    ASSERT_TRUE(run_cli(env, {"connect-all", "-J", "/srv/x.json", "--discovery-conf", "/none", flag}).ok());
    const auto j = nlohmann::json::parse(env.out.str());
    EXPECT_EQ(j[0]["subsystems"][0]["ports"][0]["traddr"], "10.0.0.1") << env.out.str();
    EXPECT_TRUE(env.fabrics.written.empty());
  }
}

// `rnvme version` (main runs it for --version too): the project version CMake gave the
// generated header, and the libnvme version pkg-config reported at build time.
TEST(CommandTable, VersionPrintsTheProjectVersion) {
  TestEnv env;
  ASSERT_TRUE(run_cli(env, {"version"}).ok());
  const std::string out = env.out.str();
  EXPECT_EQ(out.rfind(std::string("rnvme version ") + RNVME_TEST_PROJECT_VERSION + "\n", 0), 0u)
      << out;
  EXPECT_NE(out.find("libnvme version "), std::string::npos) << out;
  EXPECT_EQ(build_version_info("").libnvme_built, RNVME_TEST_LIBNVME_VERSION);
  EXPECT_TRUE(env.err.str().empty());
}

}  // namespace
}  // namespace rnvme
