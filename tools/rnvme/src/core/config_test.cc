#include "core/config.h"
#include "core/connect_cli.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rnvme {
namespace {

TEST(DiscoveryConf, ParsesLongShortAndQuotedForms) {
  const char* text =
      "# lab targets\n"
      "\n"
      "--transport=rdma --traddr=192.168.50.10 --trsvcid=4420 --host-traddr=192.168.50.1\n"
      "  -t rdma -a fd00::10 -s 4421 -q \"nqn.2024-01.io.rnvme:host 2\" -Q 64 -D\r\n";
  auto r = parse_discovery_conf(text, "discovery.conf");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  const auto& a = (*r)[0];
  EXPECT_EQ(a.source, "discovery.conf:3");
  EXPECT_EQ(a.opts.traddr, "192.168.50.10");
  EXPECT_EQ(a.opts.host_traddr, "192.168.50.1");
  EXPECT_TRUE(a.opts.is_discovery());
  const auto& b = (*r)[1];
  EXPECT_EQ(b.source, "discovery.conf:4");
  EXPECT_EQ(b.opts.traddr, "fd00::10");
  EXPECT_EQ(b.opts.trsvcid, "4421");
  EXPECT_EQ(b.opts.hostnqn, "nqn.2024-01.io.rnvme:host 2");  // quoted; validation rejects it later
  EXPECT_EQ(b.opts.queue_size, 64);
  EXPECT_TRUE(b.opts.duplicate_connect);
}

// The file is nvme-cli's too: a line rnvme cannot use is skipped with why, the others stand.
TEST(DiscoveryConf, BadLineSkippedWithItsNumber) {
  auto r = parse_discovery_conf("-t rdma -a 10.0.0.1\n--queue-size=big\n", "discovery.conf");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].skip.empty());
  EXPECT_EQ((*r)[1].source, "discovery.conf:2");
  EXPECT_NE((*r)[1].skip.find("--queue-size"), std::string::npos) << (*r)[1].skip;
}

TEST(DiscoveryConf, UnknownOptionMissingValueAndOtherTransportsOptions) {
  for (auto line : {"-a\n", "10.0.0.1\n", "-a 10.0.0.1 --frobnicate\n", "-a 10.0.0.1 -S DHHC-1:00:x:\n"}) {
    auto r = parse_discovery_conf(line, "d");
    ASSERT_TRUE(r.ok()) << line;
    ASSERT_EQ(r->size(), 1u);
    EXPECT_FALSE((*r)[0].skip.empty()) << line;
  }
  // nvme-cli's options for TCP are accepted and named as ignored
  auto r = parse_discovery_conf("-a 10.0.0.1 --hdr-digest -G --host-iface eth0 -F 3\n", "d");
  ASSERT_TRUE(r.ok());
  const auto& e = (*r)[0];
  EXPECT_TRUE(e.skip.empty()) << e.skip;
  EXPECT_EQ(e.opts.ignored.size(), 3u);
  EXPECT_EQ(e.opts.fast_io_fail_tmo, 3);
  EXPECT_EQ(e.opts.traddr, "10.0.0.1");
}

// nvme-cli parses a discovery.conf line with discover's options (fabrics.c,
// discover_from_conf_file): -p/--persistent and --force are the line's; -o, -v and --quiet change
// nothing connect-all does; -r/--raw (the log to a file instead of connecting) is refused with
// nvme-cli's spelling.
TEST(DiscoveryConf, NvmeCliDiscoverFlagsOnALine) {
  auto r = parse_discovery_conf(
      "-t rdma -a 10.0.0.1 -p --force\n"
      "--transport=rdma --traddr=10.0.0.2 --persistent -o json -v -v --quiet\n"
      "-t rdma -a 10.0.0.3 --output-format=normal --verbose\n"
      "-t rdma -a 10.0.0.4 -r /tmp/log.bin\n"
      "-t rdma -a 10.0.0.5 --raw=/tmp/log.bin\n",
      "d");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 5u);
  for (size_t i = 0; i < 3; i++) {
    EXPECT_TRUE((*r)[i].skip.empty()) << i << ": " << (*r)[i].skip;
    EXPECT_TRUE((*r)[i].opts.ignored.empty()) << i;
  }
  EXPECT_TRUE((*r)[0].discovery.persistent);
  EXPECT_TRUE((*r)[0].discovery.force);
  EXPECT_TRUE((*r)[1].discovery.persistent);
  EXPECT_FALSE((*r)[1].discovery.force);
  EXPECT_FALSE((*r)[2].discovery.persistent);
  EXPECT_EQ((*r)[1].opts.traddr, "10.0.0.2");
  for (size_t i : {3u, 4u}) {
    EXPECT_EQ((*r)[i].skip.rfind("-r/--raw /tmp/log.bin is not supported (nvme-cli saves the "
                                 "discovery log to that file instead of connecting",
                                 0),
              0u)
        << (*r)[i].skip;
    EXPECT_NE((*r)[i].skip.find("remove -r from the line"), std::string::npos);
  }
  // not on the command line of connect: those are discovery.conf's (and connect-all's) words
  ConnectOptions o;
  EXPECT_FALSE(parse_argument_line("-a 10.0.0.1 -p", o).ok());
}

// discovery.conf lines and the command line are one grammar: the line goes through a CLI11
// parser built by add_connect_options(), so every spelling means the same in both.
TEST(DiscoveryConf, SameGrammarAsTheCommandLine) {
  const std::string line =
      "-t rdma -a 10.0.0.1 -s4421 --nr-io-queues 4 --ctrl-loss-tmo=30 -D --hdr-digest "
      "--hostnqn 'nqn.2024-01.io.rnvme:h 1' -Q 64";
  ConnectOptions from_file;
  ASSERT_TRUE(parse_argument_line(line, from_file).ok());
  ConnectOptions from_cli;
  CLI::App app;
  add_connect_options(app, from_cli);
  ASSERT_NO_THROW(app.parse(line, /*program_name_included=*/false));
  for (const ConnectOptions* o : {&from_file, &from_cli}) {
    EXPECT_EQ(o->traddr, "10.0.0.1");
    EXPECT_EQ(o->trsvcid, "4421");
    EXPECT_EQ(o->nr_io_queues, 4);
    EXPECT_EQ(o->ctrl_loss_tmo, 30);
    EXPECT_EQ(o->queue_size, 64);
    EXPECT_TRUE(o->duplicate_connect);
    EXPECT_EQ(o->hostnqn, "nqn.2024-01.io.rnvme:h 1");
    EXPECT_EQ(o->ignored.size(), 1u);  // --hdr-digest: TCP's
  }
}

// What the parser cannot take is said in rnvme's words, with the offending word.
TEST(DiscoveryConf, SkipReasonsNameTheWord) {
  auto r = parse_discovery_conf(
      "-a 10.0.0.1 --frobnicate\n-a 10.0.0.1 stray\n-a 10.0.0.1 --queue-size=big\n", "d");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].skip, "unknown option '--frobnicate' (see rnvme(8) for the accepted options)");
  EXPECT_EQ((*r)[1].skip.rfind("unexpected word 'stray'", 0), 0u) << (*r)[1].skip;
  EXPECT_NE((*r)[2].skip.find("--queue-size"), std::string::npos) << (*r)[2].skip;
  EXPECT_EQ((*r)[2].skip.find("ValidationError"), std::string::npos) << (*r)[2].skip;
}

// The command line's rules hold for a line too: an option given twice, or without its value,
// skips the line (nvme-cli's getopt took the last one), naming the option.
TEST(DiscoveryConf, RepeatedOrValuelessOptionSkipsTheLine) {
  auto r = parse_discovery_conf("-a 10.0.0.1 -a 10.0.0.5\n-t rdma -a\n", "d");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  for (const auto& e : *r) EXPECT_NE(e.skip.find("--traddr"), std::string::npos) << e.skip;
  CLI::App app;
  ConnectOptions o;
  add_connect_options(app, o);
  EXPECT_THROW(app.parse(std::string("-a 10.0.0.1 -a 10.0.0.5"), false), CLI::ParseError);
}

TEST(ConfigJson, NvmeCliLayout) {
  const char* text = R"([
    {"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
     "hostid": "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
     "subsystems": [
       {"nqn": "nqn.2024-01.io.rnvme:target1",
        "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420",
                   "host_traddr": "192.168.50.1", "queue_size": 32, "ctrl_loss_tmo": -1,
                   "duplicate_connect": true, "host_iface": "eth0"},
                  {"transport": "tcp", "traddr": "192.168.60.10", "trsvcid": "4420"}]},
       {"nqn": "nqn.2014-08.org.nvmexpress.discovery",
        "ports": [{"transport": "rdma", "traddr": "192.168.50.10"}]}]}])";
  auto r = parse_config_json(text, "config.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  const auto& a = (*r)[0].opts;
  EXPECT_EQ(a.nqn, "nqn.2024-01.io.rnvme:target1");
  EXPECT_EQ(a.hostid, "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
  EXPECT_EQ(a.host_traddr, "192.168.50.1");
  EXPECT_EQ(a.queue_size, 32);
  EXPECT_EQ(a.ctrl_loss_tmo, -1);
  EXPECT_TRUE(a.duplicate_connect);
  EXPECT_EQ((*r)[1].opts.transport, "tcp");
  EXPECT_TRUE((*r)[2].opts.is_discovery());
  EXPECT_EQ((*r)[0].source, "config.json host 0 subsystem 0 port 0");
}

TEST(ConfigJson, HostsObjectAccepted) {
  auto r = parse_config_json(
      R"({"hosts": [{"subsystems": [{"nqn": "nqn.2024-01.io.rnvme:t", "ports": [{"traddr": "10.0.0.1"}]}]}]})",
      "c");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].opts.transport, "rdma");
}

TEST(ConfigJson, Errors) {
  EXPECT_FALSE(parse_config_json("{", "c").ok());
  EXPECT_FALSE(parse_config_json("42", "c").ok());
  EXPECT_FALSE(parse_config_json(R"([{"subsystems": [{"ports": []}]}])", "c").ok());
  // a bad value costs its port, not the file (nvme-cli reads it too)
  auto bad = parse_config_json(
      R"([{"subsystems": [{"nqn": "nqn.x:y", "ports": [{"traddr": "10.0.0.1", "queue_size": "lots"}]}]}])",
      "c");
  ASSERT_TRUE(bad.ok());
  EXPECT_NE((*bad)[0].skip.find("queue-size"), std::string::npos) << (*bad)[0].skip;
  EXPECT_FALSE(parse_config_json(R"([{"subsystems": [{"nqn": "n", "ports": [{"traddr": 1.5}]}]}])", "c").ok());
  // a host identity of another type is the file's error, not an exception ("internal error")
  for (const char* text : {R"([{"hostnqn": 5, "subsystems": []}])", R"([{"hostid": ["x"]}])"}) {
    Result<std::vector<ConfigEntry>> r = std::vector<ConfigEntry>{};
    EXPECT_NO_THROW(r = parse_config_json(text, "c")) << text;
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kConfig);
    EXPECT_NE(r.error().message.find("is not a string"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace rnvme

namespace rnvme {
namespace {

// connect's and discover's -J: the port that is the controller named, as nvme-cli looks it up.
TEST(ConfigJson, FindThePortOfAController) {
  auto r = parse_config_json(R"([
    {"hostnqn": "nqn.2024-01.io.rnvme:host-a", "subsystems": [{"nqn": "nqn.2024-01.io.rnvme:t1", "ports": [
      {"transport": "tcp", "traddr": "192.168.50.10", "trsvcid": "4420", "queue_size": 16},
      {"transport": "rdma", "traddr": "192.168.50.10", "queue_size": 32},
      {"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4421", "queue_size": 48},
      {"transport": "rdma", "traddr": "fd00::0:10", "host_traddr": "fd00::1", "queue_size": 64}]}]},
    {"hostnqn": "nqn.2024-01.io.rnvme:host-b", "subsystems": [{"nqn": "nqn.2024-01.io.rnvme:t1", "ports": [
      {"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420", "queue_size": 128}]}]}])",
                             "c.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ConnectOptions o;
  o.nqn = "nqn.2024-01.io.rnvme:t1";
  o.traddr = "192.168.50.10";
  auto queue_size = [&](std::string_view hostnqn) -> std::optional<int> {
    const ConfigEntry* e = find_config_port(*r, o, hostnqn);
    return e ? e->opts.queue_size : std::nullopt;
  };
  EXPECT_EQ(queue_size("nqn.2024-01.io.rnvme:host-a"), 32);  // not the tcp port; 4420 either way
  EXPECT_EQ(queue_size("nqn.2024-01.io.rnvme:host-b"), 128);
  EXPECT_EQ(queue_size(""), 32);  // no host NQN known: the first port of that controller
  EXPECT_EQ(queue_size("nqn.2024-01.io.rnvme:host-c"), std::nullopt);
  o.trsvcid = "4421";
  EXPECT_EQ(queue_size("nqn.2024-01.io.rnvme:host-a"), 48);
  o.trsvcid.clear();
  o.nqn = "nqn.2024-01.io.rnvme:t2";
  EXPECT_EQ(queue_size(""), std::nullopt);
  o.nqn = "nqn.2024-01.io.rnvme:t1";
  o.traddr = "fd00::10";  // another spelling of the address
  EXPECT_EQ(queue_size(""), 64);
  o.host_traddr = "fd00:0::1";
  EXPECT_EQ(queue_size(""), 64);
  o.host_traddr = "fd00::2";  // another source address is another controller
  EXPECT_EQ(queue_size(""), std::nullopt);
}

TEST(ConfigJson, FillUnsetKeepsWhatIsSet) {
  ConnectOptions into, from;
  into.traddr = "10.0.0.1";
  into.queue_size = 64;
  into.hostnqn = "nqn.2024-01.io.rnvme:given";
  from.traddr = "10.0.0.2";
  from.trsvcid = "4421";
  from.queue_size = 32;
  from.ctrl_loss_tmo = -1;
  from.hostnqn = "nqn.2024-01.io.rnvme:file";
  from.hostid = "11111111-2222-4333-8444-555555555555";
  from.dhchap_secret = "DHHC-1:00:x:";
  from.disable_sqflow = true;
  fill_unset(into, from);
  EXPECT_EQ(into.traddr, "10.0.0.1");
  EXPECT_EQ(into.trsvcid, "");
  EXPECT_EQ(into.queue_size, 64);
  EXPECT_EQ(into.ctrl_loss_tmo, -1);
  EXPECT_EQ(into.hostnqn, "nqn.2024-01.io.rnvme:given");
  EXPECT_EQ(into.hostid, "11111111-2222-4333-8444-555555555555");
  EXPECT_EQ(into.dhchap_secret, "DHHC-1:00:x:");
  EXPECT_TRUE(into.disable_sqflow);
  EXPECT_FALSE(into.duplicate_connect);
}

// connect-all --dump-config: nvme-cli's layout, grouped by host and subsystem, keys hidden, and
// read back by the same parser.
TEST(ConfigJson, RenderedInNvmeCliLayoutAndReadBack) {
  ConnectOptions a;
  a.hostnqn = "nqn.2024-01.io.rnvme:host-a";
  a.hostid = "11111111-2222-4333-8444-555555555555";
  a.nqn = "nqn.2024-01.io.rnvme:t1";
  a.traddr = "192.168.50.10";
  a.trsvcid = "4420";
  a.queue_size = 32;
  a.ctrl_loss_tmo = -1;
  a.duplicate_connect = true;
  a.ignored = {"--host-iface does not apply to rdma (TCP): ignored"};
  ConnectOptions b = a;
  b.traddr = "192.168.50.11";
  b.queue_size.reset();
  b.duplicate_connect = false;
  ConnectOptions d;
  d.hostnqn = a.hostnqn;
  d.hostid = a.hostid;
  d.nqn = std::string(kDiscoveryNqn);
  d.traddr = "192.168.50.10";
  d.dhchap_secret = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  ConnectOptions other = a;
  other.hostnqn = "nqn.2024-01.io.rnvme:host-b";
  other.hostid.clear();
  const std::string text = render_config_json({a, d, b, other});
  EXPECT_EQ(text.find("DHHC"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(text);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["hostnqn"], "nqn.2024-01.io.rnvme:host-a");
  EXPECT_EQ(j[0]["hostid"], "11111111-2222-4333-8444-555555555555");
  ASSERT_EQ(j[0]["subsystems"].size(), 2u);
  EXPECT_EQ(j[0]["subsystems"][0]["nqn"], "nqn.2024-01.io.rnvme:t1");
  EXPECT_EQ(j[0]["subsystems"][0]["ports"].size(), 2u);
  EXPECT_EQ(j[0]["subsystems"][0]["ports"][0],
            nlohmann::json::parse(R"({"transport": "rdma", "traddr": "192.168.50.10", "trsvcid": "4420",
                                      "queue_size": 32, "ctrl_loss_tmo": -1, "duplicate_connect": true})"));
  EXPECT_EQ(j[0]["subsystems"][1]["ports"][0]["dhchap_key"], "(secret)");
  EXPECT_FALSE(j[1].contains("hostid"));
  // the parser reads it back: the same controllers with the same options
  auto r = parse_config_json(text, "dump");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 4u);
  const auto& back = (*r)[0].opts;  // host a, subsystem t1, first port
  EXPECT_EQ(back.nqn, a.nqn);
  EXPECT_EQ(back.hostnqn, a.hostnqn);
  EXPECT_EQ(back.hostid, a.hostid);
  EXPECT_EQ(back.traddr, a.traddr);
  EXPECT_EQ(back.queue_size, 32);
  EXPECT_EQ(back.ctrl_loss_tmo, -1);
  EXPECT_TRUE(back.duplicate_connect);
  EXPECT_EQ((*r)[1].opts.traddr, "192.168.50.11");
  EXPECT_TRUE((*r)[2].opts.is_discovery());
  EXPECT_FALSE((*r)[2].skip.empty());  // "(secret)" is not a key: that port would not connect
  EXPECT_EQ((*r)[3].opts.hostnqn, "nqn.2024-01.io.rnvme:host-b");
  EXPECT_EQ(render_config_json({}), "[]\n");
}

// --dump-config writes NQNs a discovery log gave: bytes that are not UTF-8 are U+FFFD in valid
// JSON, not a type_error 316 out of the command.
TEST(ConfigJson, RenderedWithAnNqnThatIsNotUtf8) {
  ConnectOptions a;
  a.nqn = "nqn.\xff\xfe";
  a.traddr = "192.168.50.10";
  std::string text;
  ASSERT_NO_THROW(text = render_config_json({a}));
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j[0]["subsystems"][0]["nqn"], "nqn.\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(text.back(), '\n');
}

TEST(EventInstance, TraddrAndPortOfTheDiscoveryController) {
  auto e = parse_event_instance("192.0.2.2_4420");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->opts.traddr, "192.0.2.2");
  EXPECT_EQ(e->opts.trsvcid, "4420");
  EXPECT_TRUE(e->opts.is_discovery());
  auto v6 = parse_event_instance("fd00::2_8009");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->opts.traddr, "fd00::2");
  EXPECT_EQ(v6->opts.trsvcid, "8009");
}

TEST(EventInstance, MalformedIsAUsageError) {
  for (const char* bad : {"", "192.0.2.2", "_4420", "192.0.2.2_", "192.0.2.2_port"}) {
    auto e = parse_event_instance(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().code, ErrorCode::kUsage) << bad;
  }
}

}  // namespace
}  // namespace rnvme
