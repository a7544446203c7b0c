#include "sys/sysfs.h"

#include <gtest/gtest.h>

#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

TEST(Sysfs, ReadsControllerAttributes) {
  FakeFileSystem fs;
  add_controller(fs, "nvme2", "nvme-subsys1", kSubnqn, "rdma", "192.168.50.10", "4420");
  NvmeController c = read_controller(fs, "nvme2");
  EXPECT_EQ(c.instance, 2);
  EXPECT_EQ(c.transport, "rdma");
  EXPECT_EQ(c.traddr, "192.168.50.10");
  EXPECT_EQ(c.trsvcid, "4420");
  EXPECT_EQ(c.host_traddr, "192.168.50.1");
  EXPECT_EQ(c.state, "live");
  EXPECT_EQ(c.queue_count, 3);
  EXPECT_EQ(c.sqsize, 127);
  EXPECT_EQ(c.ctrl_loss_tmo, 600);
  EXPECT_EQ(c.fast_io_fail_tmo, std::nullopt);  // "off"
  EXPECT_EQ(c.hostnqn, kHostnqn);
  EXPECT_TRUE(c.rnvme.empty());
  fs.add("/sys/class/nvme/nvme2/rnvme/reconnects", "3\n");
  fs.add("/sys/class/nvme/nvme2/rnvme/rdma_device", "rxe0\n");
  fs.add("/sys/class/nvme/nvme2/rnvme/telemetry", std::string("\x01\x00\x00\xb3", 4));
  fs.add("/sys/class/nvme/nvme2/rnvme/telemetry_layout", "version 1\nwords 12\n");
  fs.add("/sys/class/nvme/nvme2/rnvme/odd", std::string("a\xb3", 2));
  c = read_controller(fs, "nvme2");
  EXPECT_EQ(c.rnvme, (std::map<std::string, std::string>{{"rdma_device", "rxe0"}, {"reconnects", "3"}}));
}

TEST(Sysfs, TopologyWithMultipathHeadAndPath) {
  FakeFileSystem fs;
  add_controller(fs, "nvme0", "nvme-subsys0", kSubnqn, "rdma", "192.168.50.10", "4420");
  add_controller(fs, "nvme1", "nvme-subsys0", kSubnqn, "rdma", "192.168.51.10", "4420");
  fs.add("/sys/class/nvme-subsystem/nvme-subsys0/nvme0n1/nsid", "1\n");
  fs.add("/sys/class/nvme-subsystem/nvme-subsys0/nvme0n1/size", "2097152\n");
  fs.add("/sys/class/nvme-subsystem/nvme-subsys0/nvme0n1/queue/logical_block_size", "4096\n");
  fs.add("/sys/class/nvme/nvme0/nvme0c0n1/nsid", "1\n");
  fs.add("/sys/class/nvme/nvme0/nvme0c0n1/size", "2097152\n");
  // A PCIe controller in its own subsystem.
  add_controller(fs, "nvme5", "nvme-subsys5", "nqn.2014.08.org.nvmexpress:8086", "pcie", "", "");
  Topology t = scan_topology(fs);
  ASSERT_EQ(t.subsystems.size(), 2u);
  const auto& s = t.subsystems[0];
  EXPECT_EQ(s.name, "nvme-subsys0");
  EXPECT_EQ(s.nqn, kSubnqn);
  ASSERT_EQ(s.controllers.size(), 2u);
  EXPECT_EQ(s.controllers[1].traddr, "192.168.51.10");
  ASSERT_EQ(s.namespaces.size(), 1u);
  EXPECT_EQ(s.namespaces[0].dev_path, "/dev/nvme0n1");
  EXPECT_EQ(s.namespaces[0].size_bytes, 2097152ull * 512);
  EXPECT_EQ(s.namespaces[0].block_size, 4096u);
  ASSERT_EQ(s.controllers[0].paths.size(), 1u);
  EXPECT_EQ(s.controllers[0].paths[0].dev_path, "");  // hidden path device
}

TEST(Sysfs, ControllerOutsideSubsystemDirectoryIsGroupedByNqn) {
  FakeFileSystem fs;
  add_controller(fs, "nvme0", "nvme-subsys0", kSubnqn, "rdma", "192.168.50.10", "4420");
  fs.add("/sys/class/nvme/nvme7/transport", "rdma\n");
  fs.add("/sys/class/nvme/nvme7/subsysnqn", "nqn.2014-08.org.nvmexpress.discovery\n");
  Topology t = scan_topology(fs);
  ASSERT_EQ(t.subsystems.size(), 2u);
  EXPECT_EQ(t.subsystems[1].nqn, "nqn.2014-08.org.nvmexpress.discovery");
  EXPECT_EQ(t.subsystems[1].controllers[0].name, "nvme7");
}

TEST(Sysfs, RdmaDetailsSkipEmptyGids) {
  TestEnv env;
  add_rxe(env, "192.168.50.1");
  auto devs = rdma_devices_from_sysfs(env.fs);
  ASSERT_EQ(devs.size(), 1u);
  ASSERT_EQ(devs[0].ports.size(), 1u);
  add_rdma_sysfs_details(env.fs, devs);
  const auto& p = devs[0].ports[0];
  EXPECT_EQ(devs[0].node_type, "CA");
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.link_layer, "Ethernet");
  EXPECT_EQ(p.active_mtu, 0);  // not in sysfs; cmd/ fills it from verbs
  EXPECT_EQ(p.netdev, "eth0");
  EXPECT_EQ(p.netdev_mtu, 1500);
  ASSERT_EQ(p.gids.size(), 2u);
  EXPECT_EQ(p.gids[1].type, "RoCE v2");
  EXPECT_EQ(p.gids[1].gid, "0000:0000:0000:0000:0000:ffff:c0a8:3201");
}

TEST(Sysfs, ModuleLoaded) {
  FakeFileSystem fs;
  add_modules(fs);
  EXPECT_TRUE(module_loaded(fs, "rnvme"));
  EXPECT_FALSE(module_loaded(fs, "nvme_rdma"));
}

}  // namespace
}  // namespace rnvme
