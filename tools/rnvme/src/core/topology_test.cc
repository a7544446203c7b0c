// find_association: which existing controller a connect would duplicate.
#include "core/topology.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

constexpr const char* kHost = "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
constexpr const char* kHostId = "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
constexpr const char* kNqn = "nqn.2024-01.io.rnvme:target1";

NvmeController ctrl(const std::string& name, const std::string& address) {
  NvmeController c;
  c.name = name;
  c.transport = "rdma";
  c.address = address;
  auto a = parse_address(address);
  c.traddr = a["traddr"];
  c.trsvcid = a["trsvcid"];
  c.state = "live";
  c.subsysnqn = kNqn;
  c.hostnqn = kHost;
  c.hostid = kHostId;
  return c;
}

Topology one(NvmeController c) {
  Topology t;
  NvmeSubsystem s;
  s.name = "nvme-subsys0";
  s.nqn = kNqn;
  s.controllers.push_back(std::move(c));
  t.subsystems.push_back(std::move(s));
  return t;
}

ConnectOptions opts() {
  ConnectOptions o;
  o.traddr = "192.168.50.10";
  o.nqn = kNqn;
  o.hostnqn = kHost;
  o.hostid = kHostId;
  return o;
}

const char* found(const Topology& t, const ConnectOptions& o) {
  const NvmeController* c = find_association(t, o);
  return c ? c->name.c_str() : "none";
}

TEST(Association, SameTupleIsFoundWithTheDefaultPort) {
  Topology t = one(ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420"));
  EXPECT_STREQ(found(t, opts()), "nvme4");
  ConnectOptions o = opts();
  o.trsvcid = "4420";
  EXPECT_STREQ(found(t, o), "nvme4");
}

TEST(Association, EachFieldOfTheTupleCounts) {
  Topology t = one(ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420"));
  std::vector<std::pair<const char*, void (*)(ConnectOptions&)>> changes = {
      {"trsvcid", [](ConnectOptions& o) { o.trsvcid = "4421"; }},
      {"traddr", [](ConnectOptions& o) { o.traddr = "192.168.50.11"; }},
      {"transport", [](ConnectOptions& o) { o.transport = "rnvme"; }},
      {"nqn", [](ConnectOptions& o) { o.nqn = "nqn.2024-01.io.rnvme:target2"; }},
      {"hostnqn", [](ConnectOptions& o) { o.hostnqn = "nqn.2024-01.io.rnvme:host-b"; }},
      {"hostid", [](ConnectOptions& o) { o.hostid = "11111111-2222-4333-8444-555555555555"; }},
      {"host unknown", [](ConnectOptions& o) { o.hostnqn.clear(); }},
      // the kernel compares the strings as written: another spelling is another association
      {"traddr spelling", [](ConnectOptions& o) { o.traddr = "192.168.050.10"; }},
  };
  for (const auto& [what, change] : changes) {
    ConnectOptions o = opts();
    change(o);
    EXPECT_STREQ(found(t, o), "none") << what;
  }
}

TEST(Association, HostIdComparesOnlyWhenBothAreKnownAndIgnoresCase) {
  NvmeController c = ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420");
  c.hostid = "6B3A2F4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B";
  EXPECT_STREQ(found(one(c), opts()), "nvme4");
  ConnectOptions o = opts();
  o.hostid.clear();
  EXPECT_STREQ(found(one(c), o), "nvme4");
  c.hostid.clear();
  EXPECT_STREQ(found(one(c), opts()), "nvme4");
}

TEST(Association, ControllersOnTheirWayOutDoNotCount) {
  for (const char* state : {"deleting", "deleting (no IO)", "dead"}) {
    NvmeController c = ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420");
    c.state = state;
    EXPECT_STREQ(found(one(c), opts()), "none") << state;
  }
  // the kernel still counts a controller that is reconnecting
  for (const char* state : {"connecting", "resetting", "new"}) {
    NvmeController c = ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420");
    c.state = state;
    EXPECT_STREQ(found(one(c), opts()), "nvme4") << state;
  }
}

TEST(Association, HostTraddrCountsWhenGiven) {
  Topology with = one(ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420,host_traddr=192.168.50.1"));
  ConnectOptions o = opts();
  EXPECT_STREQ(found(with, o), "nvme4");  // not given: any source (nvme-cli's leniency)
  o.host_traddr = "192.168.50.1";
  EXPECT_STREQ(found(with, o), "nvme4");
  o.host_traddr = "192.168.51.1";
  EXPECT_STREQ(found(with, o), "none");
  // a controller created without one, even if TCP-style src_addr shows the same source
  o.host_traddr = "192.168.50.1";
  EXPECT_STREQ(found(one(ctrl("nvme5", "traddr=192.168.50.10,trsvcid=4420,src_addr=192.168.50.1")), o),
               "none");
}

TEST(Association, SubsystemNqnFromTheSubsystemWhenTheControllerHasNone) {
  NvmeController c = ctrl("nvme4", "traddr=192.168.50.10,trsvcid=4420");
  c.subsysnqn.clear();
  EXPECT_STREQ(found(one(c), opts()), "nvme4");
}

TEST(Association, FirstMatchAcrossSubsystems) {
  Topology t = one(ctrl("nvme1", "traddr=192.168.51.10,trsvcid=4420"));
  NvmeSubsystem s2;
  s2.nqn = kNqn;
  s2.controllers.push_back(ctrl("nvme7", "traddr=192.168.50.10,trsvcid=4420"));
  t.subsystems.push_back(s2);
  EXPECT_STREQ(found(t, opts()), "nvme7");
}

}  // namespace
}  // namespace rnvme
