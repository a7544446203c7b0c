// What the tests of the doctor's check families (core/doctor/*_test.cc), its snapshot JSON
// (core/doctor_snapshot_test.cc) and its printer (core/printer/doctor_test.cc) share: the
// recorded fixtures, a Soft-RoCE snapshot, and finding checks in a report.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/doctor.h"

namespace rnvme::doctor_test {

inline DoctorSnapshot fixture(const std::string& name) {
  std::ifstream in(std::string(RNVME_TESTDATA_DIR) + "/doctor/" + name);
  EXPECT_TRUE(in.good()) << name;
  auto j = nlohmann::json::parse(in);
  auto s = snapshot_from_json(j);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : DoctorSnapshot{};
}

inline std::vector<const DoctorCheck*> all(const DoctorReport& r, std::string_view id) {
  std::vector<const DoctorCheck*> out;
  for (const auto& c : r.checks)
    if (c.id == id) out.push_back(&c);
  return out;
}

// The one check `id` (about `subject` when given); fails the test when there is not exactly one.
inline const DoctorCheck& one(const DoctorReport& r, std::string_view id, std::string_view subject = {}) {
  static const DoctorCheck none{"<missing>", "", Severity::kFail, "", "", ""};
  std::vector<const DoctorCheck*> m;
  for (const auto* c : all(r, id))
    if (subject.empty() || c->subject == subject) m.push_back(c);
  EXPECT_EQ(m.size(), 1u) << id << " " << subject;
  return m.size() == 1 ? *m[0] : none;
}

inline std::string problems(const DoctorReport& r) {
  std::string s;
  for (const auto& c : r.checks)
    if (c.severity != Severity::kOk)
      s += std::string(severity_name(c.severity)) + " " + c.id + " " + c.subject + ": " + c.seen + "\n";
  return s;
}

inline bool has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

// Soft-RoCE as the VM suite builds it: rxe0 on veth0 (192.0.2.1), target 192.0.2.2 on the link.
inline DoctorSnapshot softroce() {
  DoctorSnapshot s;
  RdmaDevice d;
  d.index = 0;
  d.name = "rxe0";
  RdmaPort p;
  p.index = 1;
  p.state = "ACTIVE";
  p.phys_state = "LINK_UP";
  p.link_layer = "Ethernet";
  p.active_mtu = 1024;
  p.netdev = "veth0";
  p.netdev_mtu = 1500;
  p.gids.push_back({0, "fe80:0000:0000:0000:5c6e:4bff:fe2d:1a01", "RoCE v2", "veth0"});
  p.gids.push_back({1, *gid_for_address("192.0.2.1"), "RoCE v2", "veth0"});
  d.ports.push_back(p);
  s.devices.push_back(d);
  s.software_device["rxe0"] = true;
  NetdevFacts n;
  n.name = "veth0";
  n.mtu = 1500;
  n.operstate = "up";
  n.software = true;
  n.dcb.support = DcbState::kAbsent;
  s.netdevs["veth0"] = n;
  TargetFacts t;
  t.traddr = "192.0.2.2";
  t.route.found = true;
  t.route.oif = "veth0";
  t.route.src = "192.0.2.1";
  t.route.table = 100;
  t.route.neighbour = "PERMANENT";
  s.target = t;
  s.host.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d\n";
  s.host.hostid = "6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d\n";
  s.modules.rnvme_loaded = true;
  s.modules.nvme_fabrics_loaded = true;
  s.modules.block_file = "/etc/modprobe.d/rnvme-test-block-inbox.conf";
  s.modules.kernels.push_back({"6.1.0-56-amd64", true, true, "", false});
  s.queues.online_cpus = 2;
  return s;
}

// Every check that is not ok says why and how to fix it, in every fixture and fault below.
inline void expect_actionable(const DoctorReport& r) {
  for (const auto& c : r.checks)
    if (c.severity != Severity::kOk) {
      EXPECT_FALSE(c.why.empty()) << c.id;
      EXPECT_FALSE(c.fix.empty()) << c.id;
    }
}

}  // namespace rnvme::doctor_test
