// `connect` end to end against fakes: what is written to /dev/nvme-fabrics, what is printed, and
// how each class of kernel refusal is explained.
#include <gtest/gtest.h>

#include <cerrno>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

constexpr const char* kHostIp = "192.168.50.1";
constexpr const char* kTargetIp = "192.168.50.10";

class ConnectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_host_identity(env.fs);
    add_modules(env.fs);
    add_rxe(env, kHostIp);
    env.net.routes[kTargetIp] = kHostIp;
    opts.traddr = kTargetIp;
    opts.nqn = kSubnqn;
  }

  // The kernel refuses the write with `err` after logging `lines`.
  void kernel_refuses(int err, std::vector<std::string> lines) {
    env.fabrics.handler = [this, err, lines](const std::string&) -> Result<std::string> {
      for (const auto& l : lines) env.kmsg.emit(l);
      Error e = make_error(ErrorCode::kConnect, "write to /dev/nvme-fabrics failed");
      e.sys_errno = err;
      return e;
    };
  }

  TestEnv env;
  ConnectOptions opts;
};

TEST_F(ConnectTest, WritesOptionStringWithHostIdentityAndPrintsDevice) {
  env.fabrics.handler = [](const std::string&) -> Result<std::string> {
    return std::string("instance=4,cntlid=2\n");
  };
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_EQ(env.fabrics.written[0],
            std::string("transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=") + kSubnqn +
                ",hostnqn=" + kHostnqn + ",hostid=" + kHostUuid);
  EXPECT_EQ(env.out.str(), "connected nvme4 (cntlid 2)\n");
}

// `rnvme tune apply` leaves its connect-time choices in /etc/rnvme/tune.conf; connect takes them
// for what the command line does not say.
TEST_F(ConnectTest, TuneDefaultsFillOptionsNotGiven) {
  env.fs.add("/etc/rnvme/tune.conf", "# rnvme tune\nnr_io_queues=8\nnr_poll_queues=4\nqueue_size=128\n");
  env.fabrics.handler = [](const std::string&) -> Result<std::string> {
    return std::string("instance=4,cntlid=2\n");
  };
  opts.nr_io_queues = 2;  // given: wins over the file
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find("nr_io_queues=2,"), std::string::npos) << env.fabrics.written[0];
  EXPECT_NE(env.fabrics.written[0].find("nr_poll_queues=4"), std::string::npos) << env.fabrics.written[0];
  EXPECT_NE(env.fabrics.written[0].find("queue_size=128"), std::string::npos) << env.fabrics.written[0];
  EXPECT_EQ(env.fabrics.written[0].find("nr_io_queues=8"), std::string::npos);
}

TEST_F(ConnectTest, NoTuneDefaultsNoQueueOptions) {
  env.fabrics.handler = [](const std::string&) -> Result<std::string> {
    return std::string("instance=4,cntlid=2\n");
  };
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_EQ(env.fabrics.written[0].find("queue"), std::string::npos) << env.fabrics.written[0];
}

TEST_F(ConnectTest, DryRunPrintsTheExactStringAndWritesNothing) {
  env.ctx.dry_run = true;
  opts.queue_size = 64;
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(env.out.str(), std::string("transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=") +
                               kSubnqn + ",hostnqn=" + kHostnqn + ",hostid=" + kHostUuid +
                               ",queue_size=64\n");
}

TEST_F(ConnectTest, JsonOutput) {
  env.json();
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["device"], "nvme0");
  EXPECT_EQ(j["cntlid"], 1);
  EXPECT_EQ(j["dry_run"], false);
  EXPECT_EQ(j["already_connected"], false);
  EXPECT_EQ(j["version"], 1);
}

// nvme-cli's behaviour: connecting an association that exists prints it and succeeds.
TEST_F(ConnectTest, ExistingAssociationIsPrintedAndNothingWritten) {
  add_sample_controllers(env.fs);  // nvme0: kSubnqn at 192.168.50.10:4420 for our host
  env.fs.add("/sys/class/nvme/nvme0/cntlid", "5\n");
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(env.out.str(), "already connected nvme0 (cntlid 5)\n");
  EXPECT_EQ(env.err.str(), "");
}

TEST_F(ConnectTest, ExistingAssociationAsJson) {
  add_sample_controllers(env.fs);
  opts.trsvcid = "4420";
  env.json();
  env.ctx.verbose = 1;
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["already_connected"], true);
  EXPECT_EQ(j["device"], "nvme0");
  EXPECT_EQ(j["instance"], 0);
  EXPECT_EQ(j["cntlid"], 1);
  EXPECT_NE(env.err.str().find("nvme0 already serves"), std::string::npos) << env.err.str();
}

TEST_F(ConnectTest, ExistingAssociationUnderDryRun) {
  add_sample_controllers(env.fs);
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_EQ(env.out.str(), "already connected nvme0 (cntlid 1)\n");
}

TEST_F(ConnectTest, DuplicateConnectMakesAnotherController) {
  add_sample_controllers(env.fs);
  opts.duplicate_connect = true;
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find(",duplicate_connect"), std::string::npos);
  EXPECT_EQ(env.out.str(), "connected nvme0 (cntlid 1)\n");  // the fake's reply
}

// Not the same association: another port, another host, a controller being deleted, a
// host_traddr the existing one was not created with.
TEST_F(ConnectTest, DifferentAssociationsConnect) {
  add_sample_controllers(env.fs);
  ConnectOptions port = opts;
  port.trsvcid = "4421";
  ConnectOptions host = opts;
  host.hostnqn = "nqn.2024-01.io.rnvme:host-b";
  host.hostid = "11111111-2222-4333-8444-555555555555";
  ConnectOptions src = opts;
  src.host_traddr = kHostIp;  // nvme0's address has no host_traddr=
  for (const auto* o : {&port, &host, &src}) {
    env.fabrics.written.clear();
    ASSERT_TRUE(run_connect(env.ctx, {*o}).ok()) << env.err.str();
    EXPECT_EQ(env.fabrics.written.size(), 1u);
  }
  env.fs.add("/sys/class/nvme/nvme0/state", "deleting\n");
  env.fabrics.written.clear();
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_EQ(env.fabrics.written.size(), 1u);
}

TEST_F(ConnectTest, ExistingAssociationWithTheSameHostTraddr) {
  add_controller(env.fs, "nvme7", "nvme-subsys7", kSubnqn, "rdma", kTargetIp, "4420", "connecting");
  env.fs.add("/sys/class/nvme/nvme7/address",
             std::string("traddr=") + kTargetIp + ",trsvcid=4420,host_traddr=" + kHostIp + "\n");
  opts.host_traddr = kHostIp;
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(env.out.str(), "already connected nvme7 (cntlid 1)\n");
}

// nvme-cli's -J: what the command line leaves unset comes from this controller's port in
// config.json (its host's key included); what it gives wins; another port gives nothing.
TEST_F(ConnectTest, ConfigJsonFillsWhatTheCommandLineLeavesUnset) {
  env.fs.add("/etc/nvme/config.json", std::string(R"([{"hostnqn": ")") + kHostnqn + R"(",
      "dhchap_key": "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
      "subsystems": [{"nqn": ")" + kSubnqn + R"(", "ports": [
        {"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4421", "nr_io_queues": 2},
        {"transport": "rdma", "traddr": "192.168.50.10", "queue_size": 32, "ctrl_loss_tmo": -1,
         "host_traddr": "192.168.50.1", "host_iface": "eth0"}]}]}])");
  opts.queue_size = 64;
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok()) << env.err.str();
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  const std::string& w = env.fabrics.written[0];
  EXPECT_NE(w.find(",host_traddr=192.168.50.1,"), std::string::npos) << w;
  EXPECT_NE(w.find(",dhchap_secret=DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"),
            std::string::npos) << w;
  EXPECT_NE(w.find(",queue_size=64,"), std::string::npos) << w;  // the command line wins
  EXPECT_NE(w.find(",ctrl_loss_tmo=-1"), std::string::npos) << w;
  EXPECT_EQ(w.find("nr_io_queues"), std::string::npos) << w;     // port 4421 is another controller
  EXPECT_NE(env.err.str().find("port 1: --host-iface does not apply to rdma"), std::string::npos)
      << env.err.str();
  // -J none, or another file, leaves it out
  for (std::string path : {"none", "/srv/other.json"}) {
    env.fabrics.written.clear();
    ASSERT_TRUE(run_connect(env.ctx, {.opts = opts, .config_json = path}).ok());
    EXPECT_EQ(env.fabrics.written[0].find("ctrl_loss_tmo"), std::string::npos) << path;
  }
}

TEST_F(ConnectTest, UnusableConfigJsonIsAConfigError) {
  env.fs.add("/srv/broken.json", "{not json");
  auto st = run_connect(env.ctx, {.opts = opts, .config_json = "/srv/broken.json"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_NE(st.error().fix.find("--config none"), std::string::npos) << st.error().fix;
  // this controller's port with a value rnvme cannot use: not connected without it
  env.fs.add("/etc/nvme/config.json", std::string(R"([{"subsystems": [{"nqn": ")") + kSubnqn +
                                          R"(", "ports": [{"traddr": "192.168.50.10", "dhchap_key": "DHHC-1:00:abcd:"}]}]}])");
  st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_NE(st.error().message.find("invalid --dhchap-secret"), std::string::npos) << st.error().message;
  EXPECT_TRUE(env.fabrics.written.empty());
  opts.trsvcid = "4421";  // not that port's controller: the file is nvme-cli's, one port costs itself
  EXPECT_TRUE(run_connect(env.ctx, {opts}).ok());
}

// nvme-cli 2.4 (fabrics.c, nvmf_connect): nvmf_hostnqn_from_file(), which is NULL alike for a
// missing and an empty file, else nvmf_hostnqn_generate() (the DMI product UUID).  So here, for a
// missing, an empty and a blank file (`rnvme hostnqn generate > /etc/nvme/hostnqn` leaves it
// empty): the generated host NQN, its UUID as the host ID, and one warning that says what was used
// and how to write the file.
TEST_F(ConnectTest, MissingOrBlankHostnqnFileUsesTheGeneratedOneAsNvmeCli) {
  const std::string gen_uuid = "00112233-4455-4677-8899-aabbccddeeff";  // TestEnv's generated
  for (std::optional<std::string> file : {std::optional<std::string>(), std::optional<std::string>(""),
                                          std::optional<std::string>(" \n\n")}) {
    TestEnv e;
    add_modules(e.fs);
    if (file) e.fs.add("/etc/nvme/hostnqn", *file);
    auto st = run_connect(e.ctx, {opts});
    ASSERT_TRUE(st.ok()) << (file ? "'" + *file + "'" : "missing") << ": " << st.error().message;
    ASSERT_EQ(e.fabrics.written.size(), 1u);
    EXPECT_NE(e.fabrics.written[0].find(",hostnqn=nqn.2014-08.org.nvmexpress:uuid:" + gen_uuid +
                                        ",hostid=" + gen_uuid),
              std::string::npos)
        << e.fabrics.written[0];
    const std::string err = e.err.str();
    EXPECT_EQ(err.rfind(std::string("warning: /etc/nvme/hostnqn: ") + (file ? "empty" : "missing") +
                            "; using nqn.2014-08.org.nvmexpress:uuid:" + gen_uuid,
                        0),
              0u)
        << err;
    EXPECT_NE(err.find("DMI product UUID"), std::string::npos) << err;
    EXPECT_NE(err.find("  fix: write the host NQN to the file"), std::string::npos) << err;
    EXPECT_NE(err.find("'rnvme hostnqn generate'"), std::string::npos) << err;
  }
}

// A hostid file beside the generated host NQN is kept (nvme-cli reads it alike).
TEST_F(ConnectTest, BlankHostnqnFileBesideAHostidKeepsTheHostid) {
  env.fs.add("/etc/nvme/hostnqn", "\n");
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok()) << env.err.str();
  EXPECT_NE(env.fabrics.written[0].find(std::string(",hostid=") + kHostUuid), std::string::npos)
      << env.fabrics.written[0];
}

// A generated host NQN rnvme will not use stands in for nothing: a placeholder UUID many machines
// share, or the random one libnvme makes up on every call without a DMI product UUID (nvme-cli
// takes it, and is another host to the target on every run).  A missing file leaves the host to
// the kernel's default, as before; an empty one is an error that says why.
TEST_F(ConnectTest, UnusableGeneratedHostnqnFallsBackToTheKernelOrFails) {
  struct Case {
    std::string nqn;
    bool stable;
    std::string why;
  };
  for (const Case& c :
       {Case{"nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000000", true,
             "placeholder"},
        Case{"nqn.2014-08.org.nvmexpress:uuid:00112233-4455-4677-8899-aabbccddeeff", false,
             "no DMI product UUID (nor a device-tree one), and libnvme makes up a random host "
             "NQN on every run"}}) {
    TestEnv e;
    e.generated_hostnqn = c.nqn;
    e.generated_stable = c.stable;
    ASSERT_TRUE(run_connect(e.ctx, {opts}).ok());
    EXPECT_EQ(e.fabrics.written[0].find("hostnqn="), std::string::npos) << c.why;
    e.fs.add("/etc/nvme/hostnqn", "\n");
    auto st = run_connect(e.ctx, {opts});
    ASSERT_FALSE(st.ok()) << c.why;
    EXPECT_EQ(st.error().code, ErrorCode::kConfig);
    EXPECT_NE(st.error().message.find("empty, and libnvme's generated host NQN cannot stand in"),
              std::string::npos)
        << st.error().message;
    EXPECT_NE(st.error().message.find(c.why), std::string::npos) << st.error().message;
  }
}

// Debian's nvme-cli package writes two unrelated UUIDs; the kernel has no rule against that.
TEST_F(ConnectTest, DebianDefaultHostnqnAndHostidPairConnects) {
  env.fs.add("/etc/nvme/hostid", "11111111-2222-4333-8444-555555555555\n");
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find("hostid=11111111-2222-4333-8444-555555555555"),
            std::string::npos);
  EXPECT_EQ(env.err.str().find("error"), std::string::npos) << env.err.str();
}

// Existing controllers that use the same unrelated pair are no conflict either.
TEST_F(ConnectTest, DebianPairBesideControllersUsingItConnects) {
  const std::string other = "11111111-2222-4333-8444-555555555555";
  env.fs.add("/etc/nvme/hostid", other + "\n");
  add_sample_controllers(env.fs);
  for (const char* c : {"nvme0", "nvme1", "nvme2"})
    env.fs.add(std::string("/sys/class/nvme/") + c + "/hostid", other + "\n");
  opts.nqn = "nqn.2024-01.io.rnvme:target9";
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok()) << env.err.str();
  EXPECT_EQ(env.fabrics.written.size(), 1u);
}

// nvme-cli's rule: without /etc/nvme/hostid the UUID in the host NQN is the host ID (Linux 6.12
// would otherwise pair the NQN with its default host's ID and refuse it).
TEST_F(ConnectTest, MissingHostidFileSendsTheHostnqnUuid) {
  env.fs.remove("/etc/nvme/hostid");
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_NE(env.fabrics.written[0].find(std::string(",hostid=") + kHostUuid), std::string::npos)
      << env.fabrics.written[0];
  EXPECT_EQ(env.err.str(), "");  // a note only with -v
}

TEST_F(ConnectTest, HostnqnWithoutAnyHostidConnectsWithAWarning) {
  env.fs.remove("/etc/nvme/hostid");
  env.fs.add("/etc/nvme/hostnqn", "nqn.2024-01.io.rnvme:host-1\n");
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_EQ(env.fabrics.written[0].find("hostid="), std::string::npos);
  EXPECT_NE(env.err.str().find("warning: /etc/nvme/hostid: missing, and host NQN "
                               "nqn.2024-01.io.rnvme:host-1 carries no UUID"),
            std::string::npos)
      << env.err.str();
  EXPECT_NE(env.err.str().find("  fix: "), std::string::npos);
}

TEST_F(ConnectTest, HostidOptionUnlikeTheHostnqnUuidConnects) {
  opts.hostid = "11111111-2222-4333-8444-555555555555";
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_EQ(env.fabrics.written.size(), 1u);
}

// The rule the kernel does have: a controller already uses this host NQN with another host ID.
TEST_F(ConnectTest, HostnqnInUseWithAnotherHostidIsRefusedBeforeWriting) {
  add_controller(env.fs, "nvme5", "nvme-subsys5", "nqn.2024-01.io.rnvme:other", "rdma",
                 "192.168.50.20", "4420");
  env.fs.add("/sys/class/nvme/nvme5/hostid", "11111111-2222-4333-8444-555555555555\n");
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_EQ(st.error().reason, "host_identity");
  EXPECT_NE(st.error().message.find("nvme5 already uses host NQN"), std::string::npos)
      << st.error().message;
  EXPECT_NE(st.error().fix.find("--hostid=11111111-2222-4333-8444-555555555555"), std::string::npos)
      << st.error().fix;
}

TEST_F(ConnectTest, HostidInUseWithAnotherHostnqnIsRefusedBeforeWriting) {
  add_controller(env.fs, "nvme6", "nvme-subsys6", "nqn.2024-01.io.rnvme:other", "rdma",
                 "192.168.50.20", "4420");
  env.fs.add("/sys/class/nvme/nvme6/hostnqn", "nqn.2024-01.io.rnvme:host-b\n");
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_NE(st.error().message.find(std::string("nvme6 already uses host ID ") + kHostUuid +
                                    " with host NQN nqn.2024-01.io.rnvme:host-b"),
            std::string::npos)
      << st.error().message;
  EXPECT_NE(st.error().fix.find("--hostnqn=nqn.2024-01.io.rnvme:host-b"), std::string::npos);
  // --duplicate-connect does not lift it: the kernel's rule is about hosts, not associations
  opts.duplicate_connect = true;
  EXPECT_FALSE(run_connect(env.ctx, {opts}).ok());
}

TEST_F(ConnectTest, TestnqnConnectsWithAWarning) {
  opts.nqn = "testnqn";
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find(",nqn=testnqn"), std::string::npos);
  EXPECT_NE(env.err.str().find("warning: --nqn: 'testnqn' is not in the NVMe form"),
            std::string::npos)
      << env.err.str();
}

// --quiet: no notes or warnings on stderr; the result is printed and errors are not silenced.
TEST_F(ConnectTest, QuietSuppressesNotesAndWarningsButNotErrors) {
  env.ctx.verbose = 1;
  opts.nqn = "testnqn";
  opts.ignored.push_back("--host-iface does not apply to rdma (TCP): ignored");
  ASSERT_TRUE(run_connect(env.ctx, {.opts = opts, .quiet = true}).ok());
  EXPECT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_EQ(env.err.str(), "");
  EXPECT_EQ(env.out.str(), "connected nvme0 (cntlid 1)\n");
  opts.queue_size = 4096;
  auto st = run_connect(env.ctx, {.opts = opts, .quiet = true});
  ASSERT_FALSE(st.ok());
  env.printer.print_error(st.error());
  EXPECT_NE(env.err.str().find("rnvme: invalid value '4096' for --queue-size"), std::string::npos)
      << env.err.str();
}

TEST_F(ConnectTest, OffFormHostnqnWarnsOnceWhetherOptionOrFile) {
  opts.hostnqn = "testhost";
  ASSERT_TRUE(run_connect(env.ctx, {opts}).ok());
  EXPECT_NE(env.fabrics.written[0].find(",hostnqn=testhost,"), std::string::npos);
  EXPECT_EQ(env.err.str(),
            "warning: --hostnqn: 'testhost' is not in the NVMe form nqn.yyyy-mm.<reverse "
            "domain>:<name> (or nqn.2014-08.org.nvmexpress:uuid:<uuid>); the kernel accepts it, "
            "some targets and tools may not\n");
  TestEnv file_env;
  add_host_identity(file_env.fs);
  file_env.fs.add("/etc/nvme/hostnqn", "testhost\n");
  opts.hostnqn.clear();
  ASSERT_TRUE(run_connect(file_env.ctx, {opts}).ok());
  EXPECT_NE(file_env.fabrics.written[0].find(",hostnqn=testhost,"), std::string::npos);
  EXPECT_EQ(file_env.err.str().rfind("warning: /etc/nvme/hostnqn: 'testhost' is not in the NVMe "
                                     "form", 0),
            0u)
      << file_env.err.str();
  EXPECT_EQ(file_env.err.str().find("warning", 1), std::string::npos) << file_env.err.str();
}

TEST_F(ConnectTest, RefusedNqnNamesTheOptionAndWritesNothing) {
  opts.nqn = "nqn.2024-01.io.rnvme:" + std::string(202, 'x');  // 223 bytes
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  EXPECT_NE(st.error().message.find("for --nqn"), std::string::npos);
  EXPECT_NE(st.error().cause.find("223 bytes long"), std::string::npos) << st.error().cause;
}

TEST_F(ConnectTest, BadOptionValueIsRefusedBeforeWriting) {
  opts.queue_size = 4096;
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  EXPECT_EQ(st.error().reason, "bad_option");
  EXPECT_NE(st.error().cause.find("16..1024"), std::string::npos);
}

TEST_F(ConnectTest, WrongNqnExplained) {
  opts.nqn = "nqn.2024-01.io.rnvme:nope";
  kernel_refuses(EIO, {"nvme nvme0: Connect Invalid Data Parameter, subsysnqn \"nqn.2024-01.io.rnvme:nope\"",
                       "nvme nvme0: failed to connect queue: 0 ret=386"});
  env.kmsg.emit("nvme nvme9: an older message that must not be blamed");
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  const Error& e = st.error();
  EXPECT_EQ(e.code, ErrorCode::kConnect);
  EXPECT_EQ(e.reason, "wrong_nqn");
  EXPECT_EQ(e.sys_errno, EIO);
  EXPECT_NE(e.cause.find("no subsystem 'nqn.2024-01.io.rnvme:nope'"), std::string::npos) << e.cause;
  for (const auto& l : e.evidence) EXPECT_EQ(l.find("older message"), std::string::npos);
}

TEST_F(ConnectTest, WrongPortExplained) {
  opts.trsvcid = "4999";
  kernel_refuses(ECONNRESET, {"nvme nvme0: Connect rejected: status 8 (invalid service ID).",
                              "nvme nvme0: rdma connection establishment failed (-104)"});
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "wrong_port");
  EXPECT_NE(st.error().message.find("192.168.50.10:4999"), std::string::npos);
}

TEST_F(ConnectTest, NoRdmaDeviceForSourceAddressExplained) {
  opts.host_traddr = "10.0.2.15";  // a local address on a netdev without an RDMA device
  env.net.local.insert("10.0.2.15");
  kernel_refuses(ENODEV, {"nvme nvme0: rdma_resolve_addr failed (-19)."});
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "no_rdma_device");
  EXPECT_EQ(st.error().code, ErrorCode::kEnvironment);
  EXPECT_NE(st.error().cause.find("10.0.2.15"), std::string::npos);
}

TEST_F(ConnectTest, NoRdmaDeviceWithoutKernelLines) {
  env.net.routes[kTargetIp] = "10.0.2.15";  // the route leaves through a non-RDMA netdev
  kernel_refuses(ECONNRESET, {});
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "no_rdma_device");
}

TEST_F(ConnectTest, BadOptionRejectedByKernelExplained) {
  kernel_refuses(EINVAL, {"nvme_fabrics: invalid parameter 'tos=%d'"});
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "bad_option");
  EXPECT_EQ(st.error().code, ErrorCode::kConnect);
}

TEST_F(ConnectTest, UnreachableTargetExplained) {
  env.net.routes.clear();
  kernel_refuses(ECONNRESET, {});
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "unreachable");
}

TEST_F(ConnectTest, MissingTransportModuleExplained) {
  env.fs.remove("/sys/module/rnvme");
  kernel_refuses(EINVAL, {"nvme_fabrics: no handler found for transport rdma."});
  auto st = run_connect(env.ctx, {opts});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().reason, "module_missing");
  EXPECT_NE(st.error().fix.find("modprobe"), std::string::npos);
}

TEST_F(ConnectTest, UnparsableReplyIsAnError) {
  env.fabrics.handler = [](const std::string&) -> Result<std::string> { return std::string("?"); };
  EXPECT_FALSE(run_connect(env.ctx, {opts}).ok());
}

}  // namespace
}  // namespace rnvme

namespace rnvme {
namespace {

using namespace rnvme::testing;

// rnvme.ko's attempt record decides, by its keys, even where its prose says nothing usable.
class RecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_host_identity(env.fs);
    add_modules(env.fs);
    add_rxe(env, "192.168.50.1");
    env.net.routes["192.168.50.10"] = "192.168.50.1";
    opts.traddr = "192.168.50.10";
    opts.nqn = kSubnqn;
    env.ctx.pid = 4242;
  }
  Error refused(int err, std::vector<std::string> lines) {
    env.fabrics.handler = [this, err, lines](const std::string&) -> Result<std::string> {
      for (const auto& l : lines) env.kmsg.emit(l);
      Error e = make_error(ErrorCode::kConnect, "write to /dev/nvme-fabrics failed");
      e.sys_errno = err;
      return e;
    };
    auto st = run_connect(env.ctx, {opts});
    EXPECT_FALSE(st.ok());
    return st.ok() ? Error{} : st.error();
  }
  static std::string rec(long pid, const std::string& tail) {
    return "rnvme: attempt v=1 id=3 kind=connect pid=" + std::to_string(pid) +
           " ctrl=nvme2 addr=192.168.50.10:4420 result=fail err=-5 " + tail;
  }
  TestEnv env;
  ConnectOptions opts;
};

TEST_F(RecordTest, EachStageAndCauseHasItsClass) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"stage=fabrics-connect cause=subsystem-not-found qid=0 nvme_status=0x4182", "wrong_nqn"},
      {"stage=fabrics-connect cause=host-not-allowed qid=0 nvme_status=0x4184", "host_not_allowed"},
      {"stage=cm cause=no-listener qid=0 cm_status=8", "wrong_port"},
      {"stage=cm cause=target-reject qid=1 cm_status=28 rej_status=0x4 rej=invalid-hsqsize",
       "target_rejected"},
      {"stage=address cause=no-neighbour qid=0 cm_status=-110", "unreachable"},
      {"stage=cm cause=unreachable qid=0 cm_status=-110", "unreachable"},
      {"stage=address cause=queue-resources qid=3", "host_resources"},
      {"stage=grant cause=no-io-queues qid=0", "target_rejected"},
  };
  for (const auto& [tail, cls] : cases) {
    env.kmsg.lines.clear();
    Error e = refused(EIO, {"rnvme: some prose that changes between versions", rec(4242, tail)});
    EXPECT_EQ(e.reason, cls) << tail;
    EXPECT_FALSE(e.record.empty()) << tail;
    EXPECT_EQ(e.record["result"], "fail");
  }
}

TEST_F(RecordTest, QueueSizeRejectSaysLowerQueueSize) {
  Error e = refused(ECONNRESET, {rec(4242, "stage=cm cause=target-reject qid=1 cm_status=28 "
                                           "rej_status=0x4 rej=invalid-hsqsize")});
  EXPECT_NE(e.cause.find("queue 1"), std::string::npos) << e.cause;
  EXPECT_NE(e.fix.find("--queue-size"), std::string::npos) << e.fix;
}

// Another process's attempt (a concurrent connect) is not this one's cause.
TEST_F(RecordTest, OtherWritersRecordIsIgnored) {
  Error e = refused(EIO, {rec(99, "stage=fabrics-connect cause=host-not-allowed qid=0")});
  EXPECT_NE(e.reason, "host_not_allowed");
  EXPECT_TRUE(e.record.empty());
}

// The kernel's duplicate check refused this write because a concurrent connect of the same
// association won: that controller is the answer, exit 0.
TEST_F(RecordTest, LostRaceIsSuccessWithTheWinner) {
  env.fabrics.handler = [this](const std::string&) -> Result<std::string> {
    add_controller(env.fs, "nvme5", "nvme-subsys5", kSubnqn, "rdma", "192.168.50.10", "4420",
                   "connecting");
    env.kmsg.emit(rec(4242, "stage=options cause=already-connected qid=-1"));
    Error e = make_error(ErrorCode::kConnect, "write to /dev/nvme-fabrics failed");
    e.sys_errno = EALREADY;
    return e;
  };
  auto st = run_connect(env.ctx, {opts});
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_NE(env.out.str().find("nvme5"), std::string::npos) << env.out.str();
}

}  // namespace
}  // namespace rnvme
