// Test helpers: a Context wired to fakes, sysfs tree builders, and golden-file comparison.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cmd/context.h"

namespace rnvme::testing {

inline constexpr const char* kHostUuid = "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
inline constexpr const char* kHostnqn = "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
inline constexpr const char* kSubnqn = "nqn.2024-01.io.rnvme:target1";

struct TestEnv {
  FakeFileSystem fs;
  FakeFabricsDevice fabrics;
  FakeKernelLog kmsg;
  FakeDiscoveryLogSource dlog;
  FakeRdmaNetlink netlink;
  FakeNetProbe net;
  FakePortQuery ports;
  std::ostringstream out, err;
  Printer printer{Format::kText, out, err};
  Context ctx{fs, fabrics, kmsg, dlog, netlink, net, ports, printer,
              [this]() -> Result<GeneratedHostnqn> {
                generate_calls++;
                if (!generated_hostnqn) return generated_hostnqn.error();
                return GeneratedHostnqn{*generated_hostnqn, generated_stable};
              }};
  // what libnvme's nvmf_hostnqn_generate() gives in the test
  Result<std::string> generated_hostnqn =
      std::string("nqn.2014-08.org.nvmexpress:uuid:00112233-4455-4677-8899-aabbccddeeff");
  bool generated_stable = true;  // false: a random one each time (no DMI product UUID)
  int generate_calls = 0;

  void json() { printer.set_format(Format::kJson); }
};

// A consistent host identity in /etc/nvme.
inline void add_host_identity(FakeFileSystem& fs) {
  fs.add("/etc/nvme/hostnqn", std::string(kHostnqn) + "\n");
  fs.add("/etc/nvme/hostid", std::string(kHostUuid) + "\n");
}

// One Soft-RoCE device on eth0 with a RoCE v1 and a v2 GID for `ip`, in netlink and sysfs.
void add_rxe(TestEnv& env, const std::string& ip, const std::string& state = "ACTIVE");
// /sys/module entries for nvme_fabrics and rnvme.
void add_modules(FakeFileSystem& fs);
// A controller in sysfs (and its subsystem directory).
void add_controller(FakeFileSystem& fs, const std::string& name, const std::string& subsys,
                    const std::string& nqn, const std::string& transport, const std::string& traddr,
                    const std::string& trsvcid, const std::string& state = "live");

// nvme0 and nvme1 (two paths to kSubnqn), nvme2 (another RDMA subsystem), nvme3 (PCIe).
void add_sample_controllers(FakeFileSystem& fs);
// Paths written so far, each checked to have received "1" (delete_controller writes).
std::vector<std::string> deleted_paths(const FakeFileSystem& fs);

// Compares with testdata/golden/<name>; RNVME_UPDATE_GOLDEN=1 rewrites the file instead.
void expect_golden(const std::string& name, const std::string& actual);

// Builds a discovery log page with the given (subnqn, traddr, trsvcid, subtype, trtype, eflags)
// entries.
struct LogEntry {
  std::string subnqn, traddr, trsvcid;
  uint8_t subtype = 2;
  uint8_t trtype = 1;
  uint16_t eflags = 0;
  uint8_t treq = 2;  // secure channel not required
};
std::vector<uint8_t> make_discovery_log(const std::vector<LogEntry>& entries, uint64_t genctr = 7);

// rnvme.ko's telemetry (version 1) as its sysfs files hold it: telemetry_layout's text (a copy of
// the kernel's names, checked against the real module by tool VM suite 06-stats) and the blob.
struct TeleQueue {
  int qid = 0;
  uint64_t flags = 2;                                    // live
  std::map<std::string, uint64_t> counters;              // by name; others 0
  std::map<std::string, std::map<int, uint64_t>> hist;   // class -> bucket -> count
};
std::string telemetry_layout_v1();
std::string telemetry_blob_v1(const std::vector<TeleQueue>& queues, uint64_t ns_since_reset = 10000000000ULL,
                              bool enabled = true);
// Both files, and rdma_device, under /sys/class/nvme/CTRL/rnvme/.
void add_telemetry(FakeFileSystem& fs, const std::string& ctrl, const std::vector<TeleQueue>& queues,
                   const std::string& rdma_device = "rxe0");

}  // namespace rnvme::testing
