#include "sys/sysfs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "core/hostid.h"

namespace rnvme {
namespace {

std::string attr(const FileSystem& fs, const std::string& path) {
  auto r = fs.read(path);
  return r ? trim(*r) : std::string();
}

std::optional<int> int_attr(const FileSystem& fs, const std::string& path) {
  return parse_int(attr(fs, path));
}

NvmeNamespace read_namespace(const FileSystem& fs, const std::string& dir, const std::string& name,
                             bool visible) {
  NvmeNamespace n;
  n.name = name;
  if (visible) n.dev_path = "/dev/" + name;
  const std::string base = dir + "/" + name;
  n.nsid = static_cast<uint32_t>(int_attr(fs, base + "/nsid").value_or(0));
  n.block_size = static_cast<uint32_t>(int_attr(fs, base + "/queue/logical_block_size").value_or(512));
  // "size" counts 512-byte sectors whatever the logical block size.
  uint64_t sectors = 0;
  auto text = attr(fs, base + "/size");
  std::from_chars(text.data(), text.data() + text.size(), sectors);
  n.size_bytes = sectors * 512ULL;
  return n;
}

}  // namespace

NvmeController read_controller(const FileSystem& fs, const std::string& name) {
  const std::string dir = std::string(kNvmeClass) + "/" + name;
  NvmeController c;
  c.name = name;
  c.instance = controller_instance(name).value_or(-1);
  c.transport = attr(fs, dir + "/transport");
  c.address = attr(fs, dir + "/address");
  auto a = parse_address(c.address);
  c.traddr = a["traddr"];
  c.trsvcid = a["trsvcid"];
  c.host_traddr = a.count("src_addr") ? a["src_addr"] : a["host_traddr"];
  c.state = attr(fs, dir + "/state");
  c.subsysnqn = attr(fs, dir + "/subsysnqn");
  c.hostnqn = attr(fs, dir + "/hostnqn");
  c.hostid = attr(fs, dir + "/hostid");
  c.cntlid = int_attr(fs, dir + "/cntlid");
  c.queue_count = int_attr(fs, dir + "/queue_count");
  c.sqsize = int_attr(fs, dir + "/sqsize");
  c.ctrl_loss_tmo = int_attr(fs, dir + "/ctrl_loss_tmo");
  c.reconnect_delay = int_attr(fs, dir + "/reconnect_delay");
  c.fast_io_fail_tmo = int_attr(fs, dir + "/fast_io_fail_tmo");
  // Attribute names are read from the directory so that ones added to rnvme.ko later show up;
  // the telemetry files (binary records, their layout, the reset) are `rnvme stats`' business,
  // and any value that is not one line of printable text is left out rather than garbled.
  for (const auto& key : list_or_empty(fs, dir + "/rnvme")) {
    if (key.rfind("telemetry", 0) == 0) continue;
    std::string v = attr(fs, dir + "/rnvme/" + key);
    bool text = true;
    for (unsigned char ch : v) text = text && ch >= 0x20 && ch < 0x7f;
    if (text) c.rnvme[key] = std::move(v);
  }
  for (const auto& e : list_or_empty(fs, dir))
    if (is_namespace_name(e))
      // nvmeXcYnZ are multipath paths: hidden, no /dev node.
      c.paths.push_back(read_namespace(fs, dir, e, e.find('c') == std::string::npos));
  return c;
}

// Why this is not libnvme's nvme_scan_topology() (issue 32 item 9), checked against libnvme 1.3:
// - src/nvme/tree.c, nvme_ns_open(): the scan opens every namespace's block device and sends it
//   Identify Namespace and the NS ID descriptor list (nvme_ns_init); a namespace that cannot be
//   opened or does not answer is left out of the tree, and a scan needs root.  `rnvme list`
//   and the connect checks read sysfs only, and must work while controllers are reconnecting.
// - src/nvme/filters.c: the sysfs roots (nvme_ctrl_sysfs_dir, ...) are fixed strings, private
//   (src/nvme/private.h, not in libnvme.map): the scan cannot be pointed at RNVME_ROOT or at
//   the FakeFileSystem every command test builds its controllers in.
// - the tree has no ctrl_loss_tmo/reconnect_delay/fast_io_fail_tmo as the kernel has them
//   (nvme_ctrl_get_config() is libnvme's defaults), and rnvme.ko's own attributes would still
//   be read here.
Topology scan_topology(const FileSystem& fs) {
  Topology t;
  std::map<std::string, bool> placed;
  for (const auto& sname : list_or_empty(fs, kNvmeSubsysClass)) {
    const std::string sdir = std::string(kNvmeSubsysClass) + "/" + sname;
    NvmeSubsystem s;
    s.name = sname;
    s.nqn = attr(fs, sdir + "/subsysnqn");
    for (const auto& e : list_or_empty(fs, sdir)) {
      if (controller_instance(e)) {
        s.controllers.push_back(read_controller(fs, e));
        placed[e] = true;
      } else if (is_namespace_name(e)) {
        s.namespaces.push_back(read_namespace(fs, sdir, e, true));
      }
    }
    t.subsystems.push_back(std::move(s));
  }
  // Controllers outside any subsystem directory (older kernels, discovery controllers) are
  // grouped by their subsystem NQN.
  for (const auto& cname : list_or_empty(fs, kNvmeClass)) {
    if (placed.count(cname) || !controller_instance(cname)) continue;
    NvmeController c = read_controller(fs, cname);
    auto it = std::find_if(t.subsystems.begin(), t.subsystems.end(),
                           [&](const NvmeSubsystem& s) { return s.nqn == c.subsysnqn; });
    if (it == t.subsystems.end()) {
      NvmeSubsystem s;
      s.name = "-";
      s.nqn = c.subsysnqn;
      t.subsystems.push_back(std::move(s));
      it = std::prev(t.subsystems.end());
    }
    it->controllers.push_back(std::move(c));
  }
  return t;
}

std::vector<RdmaDevice> rdma_devices_from_sysfs(const FileSystem& fs) {
  std::vector<RdmaDevice> devs;
  for (const auto& name : list_or_empty(fs, kInfinibandClass)) {
    RdmaDevice d;
    d.name = name;
    for (const auto& p : list_or_empty(fs, std::string(kInfinibandClass) + "/" + name + "/ports")) {
      RdmaPort port;
      port.index = parse_int(p).value_or(0);
      d.ports.push_back(std::move(port));
    }
    devs.push_back(std::move(d));
  }
  return devs;
}

void add_rdma_sysfs_details(const FileSystem& fs, std::vector<RdmaDevice>& devs) {
  for (auto& d : devs) {
    const std::string ddir = std::string(kInfinibandClass) + "/" + d.name;
    if (d.node_type.empty()) d.node_type = strip_state_prefix(attr(fs, ddir + "/node_type"));
    for (auto& p : d.ports) {
      const std::string pdir = fmt::format("{}/ports/{}", ddir, p.index);
      if (p.state.empty()) p.state = strip_state_prefix(attr(fs, pdir + "/state"));
      if (p.phys_state.empty()) p.phys_state = strip_state_prefix(attr(fs, pdir + "/phys_state"));
      p.link_layer = attr(fs, pdir + "/link_layer");
      for (const auto& idx : list_or_empty(fs, pdir + "/gids")) {
        std::string gid = attr(fs, pdir + "/gids/" + idx);
        if (gid.empty() || is_zero_gid(gid)) continue;
        RdmaGid g;
        g.index = parse_int(idx).value_or(-1);
        g.gid = gid;
        g.type = attr(fs, pdir + "/gid_attrs/types/" + idx);
        g.ndev = attr(fs, pdir + "/gid_attrs/ndevs/" + idx);
        if (p.netdev.empty() && !g.ndev.empty()) p.netdev = g.ndev;
        p.gids.push_back(std::move(g));
      }
      std::sort(p.gids.begin(), p.gids.end(),
                [](const RdmaGid& a, const RdmaGid& b) { return a.index < b.index; });
      if (!p.netdev.empty()) p.netdev_mtu = int_attr(fs, "/sys/class/net/" + p.netdev + "/mtu").value_or(0);
    }
  }
}

bool module_loaded(const FileSystem& fs, const std::string& name) {
  return fs.exists("/sys/module/" + name);
}

std::optional<bool> kernel_has_host_auth(const FileSystem& fs) {
  if (fs.exists("/sys/module/nvme_auth/holders/nvme_core")) return true;
  auto release = fs.read("/proc/sys/kernel/osrelease");
  if (!release) return std::nullopt;
  auto config = fs.read("/boot/config-" + trim(*release));
  if (!config) return std::nullopt;
  const std::string text = "\n" + *config;
  if (text.find("\nCONFIG_NVME_HOST_AUTH=y") != std::string::npos) return true;
  if (text.find("CONFIG_NVME_HOST_AUTH") != std::string::npos) return false;
  return text.find("\nCONFIG_NVME_AUTH=y") != std::string::npos;
}

}  // namespace rnvme
