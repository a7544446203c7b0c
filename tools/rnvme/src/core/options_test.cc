#include "core/options.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

ConnectOptions minimal() {
  ConnectOptions o;
  o.traddr = "192.168.50.10";
  o.nqn = "nqn.2024-01.io.rnvme:target1";
  return o;
}

TEST(Options, MinimalStringUsesDefaultPort) {
  auto s = build_option_string(minimal());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(*s, "transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=nqn.2024-01.io.rnvme:target1");
}

TEST(Options, FullStringFollowsGrammarOrder) {
  ConnectOptions o = minimal();
  o.trsvcid = "4421";
  o.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  o.hostid = "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  o.host_traddr = "192.168.50.1";
  o.queue_size = 64;
  o.nr_io_queues = 4;
  o.nr_write_queues = 2;
  o.nr_poll_queues = 1;
  o.reconnect_delay = 5;
  o.ctrl_loss_tmo = -1;
  o.fast_io_fail_tmo = 30;
  o.keep_alive_tmo = 10;
  o.tos = 106;
  o.duplicate_connect = true;
  o.disable_sqflow = true;
  auto s = build_option_string(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(*s,
            "transport=rdma,traddr=192.168.50.10,trsvcid=4421,nqn=nqn.2024-01.io.rnvme:target1,"
            "hostnqn=nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b,"
            "hostid=6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b,host_traddr=192.168.50.1,queue_size=64,"
            "nr_io_queues=4,nr_write_queues=2,nr_poll_queues=1,reconnect_delay=5,ctrl_loss_tmo=-1,"
            "fast_io_fail_tmo=30,keep_alive_tmo=10,tos=106,duplicate_connect,disable_sqflow");
}

// The kernel refuses nr_poll_queues=0 and nr_write_queues=0 ("Invalid nr_poll_queues 0"; 0 is
// its default): a profile or tune.conf with no poll queues must not write them
TEST(Options, ZeroPollAndWriteQueuesAreLeftOut) {
  ConnectOptions o = minimal();
  o.nr_io_queues = 2;
  o.nr_poll_queues = 0;
  o.nr_write_queues = 0;
  auto s = build_option_string(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(*s, "transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=nqn.2024-01.io.rnvme:target1,"
                "nr_io_queues=2");
}

TEST(Options, Ipv6TargetAccepted) {
  ConnectOptions o = minimal();
  o.traddr = "fd00::10";
  EXPECT_TRUE(validate(o).ok());
}

struct BadCase {
  const char* name;
  void (*mutate)(ConnectOptions&);
  const char* option;  // must appear in the message
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class OptionsRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(OptionsRejects, NamesTheOption) {
  ConnectOptions o = minimal();
  GetParam().mutate(o);
  auto st = validate(o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  EXPECT_NE(st.error().message.find(GetParam().option), std::string::npos) << st.error().message;
  EXPECT_FALSE(build_option_string(o).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Values, OptionsRejects,
    ::testing::Values(
        BadCase{"queue_small", [](ConnectOptions& o) { o.queue_size = 15; }, "queue-size"},
        BadCase{"queue_big", [](ConnectOptions& o) { o.queue_size = 1025; }, "queue-size"},
        BadCase{"io_queues_zero", [](ConnectOptions& o) { o.nr_io_queues = 0; }, "nr-io-queues"},
        BadCase{"write_neg", [](ConnectOptions& o) { o.nr_write_queues = -1; }, "nr-write-queues"},
        BadCase{"reconnect_zero", [](ConnectOptions& o) { o.reconnect_delay = 0; }, "reconnect-delay"},
        BadCase{"ctrl_loss", [](ConnectOptions& o) { o.ctrl_loss_tmo = -2; }, "ctrl-loss-tmo"},
        BadCase{"fast_io", [](ConnectOptions& o) { o.fast_io_fail_tmo = -5; }, "fast-io-fail-tmo"},
        BadCase{"kato", [](ConnectOptions& o) { o.keep_alive_tmo = -1; }, "keep-alive-tmo"},
        BadCase{"tos", [](ConnectOptions& o) { o.tos = 256; }, "tos"},
        BadCase{"transport", [](ConnectOptions& o) { o.transport = "tcp"; }, "transport"},
        BadCase{"traddr_name", [](ConnectOptions& o) { o.traddr = "target.example"; }, "traddr"},
        BadCase{"traddr_missing", [](ConnectOptions& o) { o.traddr.clear(); }, "traddr"},
        BadCase{"traddr_comma", [](ConnectOptions& o) { o.traddr = "10.0.0.1,nqn=x"; }, "traddr"},
        BadCase{"host_traddr", [](ConnectOptions& o) { o.host_traddr = "eth0"; }, "host-traddr"},
        BadCase{"port_text", [](ConnectOptions& o) { o.trsvcid = "nvme"; }, "trsvcid"},
        BadCase{"port_zero", [](ConnectOptions& o) { o.trsvcid = "0"; }, "trsvcid"},
        BadCase{"port_big", [](ConnectOptions& o) { o.trsvcid = "65536"; }, "trsvcid"},
        BadCase{"nqn_missing", [](ConnectOptions& o) { o.nqn.clear(); }, "nqn"},
        BadCase{"nqn_comma", [](ConnectOptions& o) { o.nqn = "nqn.2024-01.x:y,queue_size=9"; }, "nqn"},
        BadCase{"nqn_long", [](ConnectOptions& o) { o.nqn = "nqn." + std::string(220, 'a'); }, "nqn"},
        BadCase{"hostnqn", [](ConnectOptions& o) { o.hostnqn = "host,one"; }, "hostnqn"},
        BadCase{"hostnqn_long", [](ConnectOptions& o) { o.hostnqn = std::string(223, 'h'); }, "hostnqn"},
        BadCase{"hostnqn_newline", [](ConnectOptions& o) { o.hostnqn = "h\nqueue_size=9"; }, "hostnqn"},
        BadCase{"hostid", [](ConnectOptions& o) { o.hostid = "not-a-uuid"; }, "hostid"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(Options, RefusedNqnSaysWhichOptionAndWhy) {
  ConnectOptions o = minimal();
  o.nqn = "nqn.2024-01.io.rnvme:a,b";
  auto st = validate(o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "invalid value 'nqn.2024-01.io.rnvme:a,b' for --nqn");
  EXPECT_NE(st.error().cause.find("the kernel refuses this --nqn: it contains a comma"),
            std::string::npos)
      << st.error().cause;
  o = minimal();
  o.hostnqn = std::string(230, 'h');
  st = validate(o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("for --hostnqn"), std::string::npos);
  EXPECT_NE(st.error().cause.find("230 bytes long"), std::string::npos) << st.error().cause;
  // the longest NQN the kernel takes
  o = minimal();
  o.nqn = "nqn.2024-01.io.rnvme:" + std::string(222 - 21, 'n');
  ASSERT_EQ(o.nqn.size(), 222u);
  EXPECT_TRUE(validate(o).ok());
}

// The kernel takes any NQN without commas up to 222 bytes; off-form ones pass with a warning.
TEST(Options, OffFormNqnIsAcceptedWithAWarning) {
  ConnectOptions o;
  o.traddr = "192.168.50.10";
  o.nqn = "testnqn";
  o.hostnqn = "host one";
  ASSERT_TRUE(validate(o).ok());
  auto s = build_option_string(o);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->find(",nqn=testnqn"), std::string::npos);
  auto w = option_warnings(o);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].rfind("--nqn: 'testnqn' is not in the NVMe form", 0), 0u) << w[0];
  EXPECT_EQ(w[1].rfind("--hostnqn: 'host one'", 0), 0u) << w[1];
  o.nqn = "nqn.2024-01.io.rnvme:target1";
  o.hostnqn.clear();
  EXPECT_TRUE(option_warnings(o).empty());
}

TEST(Options, TransportNames) {
  EXPECT_TRUE(is_rdma_transport_name("rdma"));
  EXPECT_TRUE(is_rdma_transport_name("rnvme"));  // rnvme.ko transport_name=rnvme
  EXPECT_FALSE(is_rdma_transport_name("tcp"));
  EXPECT_FALSE(is_rdma_transport_name("loop"));
  EXPECT_FALSE(is_rdma_transport_name(""));
  EXPECT_FALSE(is_rdma_transport_name("rdma,nqn=x"));
  EXPECT_FALSE(is_rdma_transport_name("abcdefghijklmnopq"));  // 17 characters
  ConnectOptions o = minimal();
  o.transport = "rnvme";
  EXPECT_EQ(build_option_string(o)->substr(0, 16), "transport=rnvme,");
}

TEST(Options, RangeEdgesAccepted) {
  ConnectOptions o = minimal();
  o.queue_size = 16;
  o.tos = 0;
  o.ctrl_loss_tmo = -1;
  o.fast_io_fail_tmo = -1;
  EXPECT_TRUE(validate(o).ok());
  o.queue_size = 1024;
  o.tos = 255;
  EXPECT_TRUE(validate(o).ok());
}

TEST(Options, SetOptionParsesIntegersStrictly) {
  ConnectOptions o;
  const OptionSpec* q = find_option("queue-size");
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(set_option(o, *q, "64").ok());
  EXPECT_EQ(o.queue_size, 64);
  EXPECT_FALSE(set_option(o, *q, "64k").ok());
  EXPECT_FALSE(set_option(o, *q, "").ok());
  EXPECT_EQ(o.queue_size, 64);
}

// nvme-cli 2.4 passes 0 and -1 for these to libnvme 1.3, whose build_options() writes no token
// for a value that is not positive (tos: negative): the kernel's default holds.  So do they here:
// the option is left unset (a value given before is unset again), and nothing reaches the string.
TEST(Options, ZeroAndMinusOneMeanTheDefaultWhereNvmeCliTakesThem) {
  for (const char* name : {"k", "i", "c", "Q", "W", "P"})
    for (const char* v : {"0", "-1"}) {
      ConnectOptions o = minimal();
      const OptionSpec* spec = find_option(name);
      ASSERT_NE(spec, nullptr) << name;
      ASSERT_TRUE(set_option(o, *spec, "20").ok()) << name;
      auto st = set_option(o, *spec, v);
      ASSERT_TRUE(st.ok()) << name << " " << v;
      EXPECT_FALSE(spec->num(o)->has_value()) << name << " " << v;
      auto s = build_option_string(o);
      ASSERT_TRUE(s.ok()) << name << " " << v << ": " << s.error().message;
      EXPECT_EQ(*s, build_option_string(minimal()).value()) << name << " " << v;
    }
  ConnectOptions o = minimal();
  ASSERT_TRUE(set_option(o, *find_option("T"), "-1").ok());
  EXPECT_FALSE(o.tos.has_value());
  ASSERT_TRUE(set_option(o, *find_option("T"), "0").ok());  // a ToS, passed on
  EXPECT_EQ(o.tos, 0);
  // 0 and -1 keep their meanings where nvme-cli passes them on: ctrl_loss_tmo 0 (give up at
  // once) and -1 (never), fast_io_fail_tmo 0 (fail at once) and -1 (off)
  for (const char* name : {"l", "F"})
    for (int v : {0, -1}) {
      ASSERT_TRUE(set_option(o, *find_option(name), std::to_string(v)).ok());
      EXPECT_EQ(*find_option(name)->num(o), v) << name;
    }
  // other negative numbers stay out of range, named
  ASSERT_TRUE(set_option(o, *find_option("k"), "-2").ok());
  auto st = validate(o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("--keep-alive-tmo"), std::string::npos);
}

TEST(Options, FindOptionByShortLongAndUnderscore) {
  EXPECT_EQ(find_option("a")->long_name, "traddr");
  EXPECT_EQ(find_option("Q")->long_name, "queue-size");
  EXPECT_EQ(find_option("host_traddr")->long_name, "host-traddr");
  EXPECT_EQ(find_option("ctrl_loss_tmo")->long_name, "ctrl-loss-tmo");
  // nvme-cli's letters and spellings
  EXPECT_EQ(find_option("F")->long_name, "fast-io-fail-tmo");
  EXPECT_EQ(find_option("fast_io_fail_tmo")->long_name, "fast-io-fail-tmo");
  EXPECT_EQ(find_option("f")->long_name, "host-iface");
  EXPECT_EQ(find_option("hdr-digest")->kind, OptionKind::kNotRdmaFlag);
  EXPECT_EQ(find_option("S")->long_name, "dhchap-secret");
  EXPECT_EQ(find_option("C")->long_name, "dhchap-ctrl-secret");
  EXPECT_EQ(find_option("frobnicate"), nullptr);
}

TEST(Options, FlagValues) {
  ConnectOptions o;
  const OptionSpec* d = find_option("duplicate-connect");
  EXPECT_TRUE(set_option(o, *d, "").ok());
  EXPECT_TRUE(o.duplicate_connect);
  EXPECT_TRUE(set_option(o, *d, "false").ok());
  EXPECT_FALSE(o.duplicate_connect);
  EXPECT_FALSE(set_option(o, *d, "maybe").ok());
}

TEST(Options, ParseConnectReply) {
  auto r = parse_connect_reply("instance=3,cntlid=17\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->instance, 3);
  EXPECT_EQ(r->cntlid, 17);
  EXPECT_FALSE(parse_connect_reply("").ok());
  EXPECT_FALSE(parse_connect_reply("cntlid=1").ok());
  auto bad = parse_connect_reply("garbage");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("garbage"), std::string::npos);
}

}  // namespace
// nvme gen-dhchap-key's form: DHHC-1:<hmac>:<base64 of key + CRC-32 LE>:
constexpr const char* kKey32 = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
constexpr const char* kKey48 = "DHHC-1:02:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTvGwQfg==:";

TEST(Options, DhchapSecretsGoToTheKernelAndAreRedactedForTheEye) {
  ConnectOptions o = minimal();
  o.dhchap_secret = kKey32;
  o.dhchap_ctrl_secret = kKey48;
  auto s = build_option_string(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_NE(s->find(std::string(",dhchap_secret=") + kKey32), std::string::npos) << *s;
  EXPECT_NE(s->find(std::string(",dhchap_ctrl_secret=") + kKey48), std::string::npos) << *s;
  const std::string shown = redact_secrets(*s);
  EXPECT_EQ(shown.find("DHHC"), std::string::npos) << shown;
  EXPECT_NE(shown.find("dhchap_secret=(secret),dhchap_ctrl_secret=(secret)"), std::string::npos)
      << shown;
  EXPECT_EQ(redact_secrets("transport=rdma,traddr=10.0.0.1"), "transport=rdma,traddr=10.0.0.1");
}

TEST(Options, DhchapSecretFormatIsChecked) {
  EXPECT_FALSE(dhchap_secret_problem(kKey32));
  EXPECT_FALSE(dhchap_secret_problem(kKey48));
  EXPECT_TRUE(dhchap_secret_problem("secret"));
  EXPECT_TRUE(dhchap_secret_problem("DHHC-1:05:AAAA:"));                    // hmac 05
  EXPECT_TRUE(dhchap_secret_problem("DHHC-1:00:abcd:"));                    // 3 bytes
  EXPECT_TRUE(dhchap_secret_problem("DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+LfiaR:"));  // CRC
  EXPECT_TRUE(dhchap_secret_problem(std::string(kKey32).substr(0, 30)));   // truncated
  ConnectOptions o = minimal();
  o.dhchap_ctrl_secret = kKey32;  // without the host's
  auto s = build_option_string(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("without --dhchap-secret"), std::string::npos);
  o.dhchap_secret = "DHHC-1:00:abcd:";
  EXPECT_NE(build_option_string(o).error().message.find("invalid --dhchap-secret"),
            std::string::npos);
}

}  // namespace rnvme
