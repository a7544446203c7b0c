// `rnvme doctor`'s test host: the fakes of TestEnv plus a FakeFabricProbe, set up as a healthy
// Soft-RoCE host (cmd/doctor_test.cc, sys/doctor_facts_test.cc).
#pragma once

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "sys/fabric_probe.h"
#include "testing/test_env.h"

namespace rnvme::testing {

// A Soft-RoCE host in the fake sysfs: rxe0 on eth0 (192.168.50.1), target 192.168.50.10 on link,
// rnvme loaded with the packaged redirect, DKMS-built for the running kernel.
struct DoctorEnv : TestEnv {
  FakeFabricProbe probe;
  DoctorEnv() {
    add_rxe(*this, "192.168.50.1");
    add_host_identity(fs);
    add_modules(fs);
    fs.add("/sys/class/infiniband/rxe0/parent", "eth0\n");
    fs.add("/sys/class/net/eth0/operstate", "up\n");
    fs.add("/sys/class/net/eth0/ifindex", "2\n");
    fs.add("/sys/module/rnvme/parameters/transport_name", "rdma\n");
    fs.add("/etc/modprobe.d/rnvme.conf",
           "# comment\ninstall nvme-rdma [ -d /sys/module/rnvme ] || \\\n"
           "if /sbin/modprobe -q -n rnvme; then \\\n"
           "\t/sbin/modprobe --ignore-install rnvme $CMDLINE_OPTS; \\\nfi\n"
           "remove nvme-rdma /sbin/modprobe -r --ignore-remove rnvme\n");
    fs.add("/proc/sys/kernel/osrelease", "6.1.0-56-amd64\n");
    fs.add("/lib/modules/6.1.0-56-amd64/modules.order", "");
    fs.add_dir("/lib/modules/6.1.0-56-amd64/kernel");
    fs.add_dir("/lib/modules/6.1.0-56-amd64/build");
    fs.add("/lib/modules/6.1.0-56-amd64/updates/dkms/rnvme.ko", "");
    fs.add_dir("/lib/modules/6.12.9-amd64/build");  // headers only: not an installed kernel
    fs.add("/var/lib/dkms/rnvme/0.1/6.1.0-56-amd64/x86_64/module/rnvme.ko", "");
    fs.add("/sys/devices/system/cpu/online", "0-3,6\n");
    RouteFacts r;
    r.found = true;
    r.oif = "eth0";
    r.src = "192.168.50.1";
    r.table = 254;
    probe.routes["192.168.50.10"] = r;
    probe.neighbours["eth0 192.168.50.10"] = "REACHABLE";
  }
  nlohmann::json run(DoctorArgs args) {
    args.json = true;
    auto st = run_doctor(ctx, probe, args);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return nlohmann::json::parse(out.str());
  }
};

}  // namespace rnvme::testing
