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

// A secret rnvme cannot honour is refused, never dropped.
TEST(CommandTable, DhchapSecretRefused) {
  TestEnv env;
  add_host_identity(env.fs);
  env.ctx.dry_run = true;
  EXPECT_THROW(run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "-S", "DHHC-1:00:abcd:"}),
               CLI::ValidationError);
  EXPECT_THROW(run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "--dhchap-ctrl-secret",
                             "DHHC-1:00:abcd:"}),
               CLI::ValidationError);
}

TEST(CommandTable, NonNumericValueIsAParseError) {
  TestEnv env;
  EXPECT_THROW(run_cli(env, {"connect", "-a", "10.0.0.1", "-n", kSubnqn, "--queue-size", "lots"}),
               CLI::ValidationError);
}

TEST(CommandTable, RdmaWordsAndHostnqnAction) {
  TestEnv env;
  ASSERT_TRUE(run_cli(env, {"rdma", "link", "add", "rxe1", "type", "rxe", "netdev", "eth1"}).ok());
  EXPECT_EQ(env.netlink.calls, std::vector<std::string>{"add rxe1 rxe eth1"});
  EXPECT_THROW(run_cli(env, {"hostnqn", "frob"}), CLI::ValidationError);
}

TEST(CommandTable, ConnectAllConfigOption) {
  TestEnv env;
  env.ctx.dry_run = true;
  env.fs.add("/srv/x.json", std::string(R"([{"subsystems": [{"nqn": ")") + kSubnqn +
                                R"(", "ports": [{"transport": "rdma", "traddr": "10.0.0.1"}]}]}])");
  ASSERT_TRUE(run_cli(env, {"connect-all", "--config", "/srv/x.json", "--discovery-conf", "/none"}).ok());
  EXPECT_NE(env.out.str().find("would_connect"), std::string::npos);
}

}  // namespace
}  // namespace rnvme
