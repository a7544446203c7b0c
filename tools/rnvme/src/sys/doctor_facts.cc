// What `rnvme doctor` reads from this host (sys/doctor_facts.h).
#include "sys/doctor_facts.h"

#include <fmt/format.h>

#include <sstream>
#include <utility>

#include "core/hostid.h"
#include "core/number.h"
#include "sys/host_identity.h"
#include "sys/sysfs.h"

namespace rnvme {
namespace {

// One logical line per entry: modprobe.d continues lines ending in a backslash.
std::vector<std::string> config_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line, acc;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\\') {
      acc += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    acc += line;
    out.push_back(acc);
    acc.clear();
  }
  if (!acc.empty()) out.push_back(acc);
  return out;
}

void read_modprobe_d(const FileSystem& fs, ModuleFacts& m) {
  // modprobe.d(5): /etc overrides /run overrides /lib and /usr/lib, by file name.
  for (const char* dir : {"/etc/modprobe.d", "/run/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d"}) {
    for (const auto& f : list_or_empty(fs, dir)) {
      if (f.size() < 6 || f.substr(f.size() - 5) != ".conf") continue;
      const std::string path = fmt::format("{}/{}", dir, f);
      auto text = fs.read(path);
      if (!text) continue;
      for (const auto& l : config_lines(*text)) {
        std::istringstream words(l);
        std::string cmd, mod;
        words >> cmd >> mod;
        if (cmd != "install" || (mod != "nvme-rdma" && mod != "nvme_rdma")) continue;
        std::string rest;
        std::getline(words, rest);
        rest = trim(rest);
        if (rest.find("rnvme") != std::string::npos) {
          if (m.redirect_file.empty()) m.redirect_file = path;
        } else if (rest == "/bin/true" || rest == "/bin/false" || rest == "true" || rest == "false" ||
                   rest == "/usr/bin/true" || rest == "/usr/bin/false") {
          if (m.block_file.empty()) m.block_file = path;
        }
      }
    }
  }
}

}  // namespace

int count_cpu_list(std::string_view s) {
  int n = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    std::string_view part = s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos);
    size_t dash = part.find('-');
    auto a = parse_int(part.substr(0, dash));
    auto b = dash == std::string_view::npos ? a : parse_int(part.substr(dash + 1));
    if (a && b && *b >= *a) n += *b - *a + 1;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return n;
}

NetdevFacts read_netdev_facts(const FileSystem& fs, FabricProbe& probe, const std::string& name) {
  NetdevFacts n;
  n.name = name;
  const std::string dir = "/sys/class/net/" + name;
  n.mtu = parse_int(read_trim(fs, dir + "/mtu")).value_or(0);
  n.ifindex = parse_int(read_trim(fs, dir + "/ifindex")).value_or(0);
  n.operstate = read_trim(fs, dir + "/operstate");
  n.software = !fs.exists(dir + "/device");
  n.dcb = probe.dcb(name);
  VlanFacts v = probe.vlan(name);
  if (v.is_vlan) {
    n.vlan_of = v.lower;
    n.vlan_id = v.id;
    n.egress_qos = v.egress_qos;
  }
  // mlx5 (MLNX_OFED) exposes RoCE ECN per priority: ecn/roce_np/enable/<prio>, ecn/roce_rp/...
  for (auto [sub, map] : {std::pair{"roce_np", &n.ecn_np}, std::pair{"roce_rp", &n.ecn_rp}}) {
    const std::string edir = fmt::format("{}/ecn/{}/enable", dir, sub);
    for (const auto& p : list_or_empty(fs, edir))
      if (auto prio = parse_int(p)) (*map)[*prio] = read_trim(fs, edir + "/" + p) == "1";
  }
  return n;
}

ModuleFacts read_module_facts(const FileSystem& fs) {
  ModuleFacts m;
  m.rnvme_loaded = module_loaded(fs, "rnvme");
  m.nvme_rdma_loaded = module_loaded(fs, "nvme_rdma");
  m.nvme_fabrics_loaded = module_loaded(fs, "nvme_fabrics");
  if (m.rnvme_loaded) {
    std::string name = read_trim(fs, "/sys/module/rnvme/parameters/transport_name");
    if (!name.empty()) m.rnvme_transport_name = name;
    // a bool parameter reads Y or N
    const std::string hold = read_trim(fs, "/sys/module/rnvme/parameters/failover_hold");
    if (hold == "Y" || hold == "y" || hold == "1") m.rnvme_failover_hold = true;
    if (hold == "N" || hold == "n" || hold == "0") m.rnvme_failover_hold = false;
  }
  read_modprobe_d(fs, m);
  const std::string dkms = "/var/lib/dkms/rnvme";
  m.dkms_registered = fs.exists(dkms);
  for (const auto& v : list_or_empty(fs, dkms))
    if (v != "original_module" && v != "source" && v != "kernel") m.dkms_versions.push_back(v);
  const std::string running = read_trim(fs, "/proc/sys/kernel/osrelease");
  for (const auto& v : list_or_empty(fs, "/lib/modules")) {
    const std::string dir = "/lib/modules/" + v;
    // A directory with only "build" belongs to a headers package, not an installed kernel.
    if (!fs.exists(dir + "/kernel") && !fs.exists(dir + "/modules.order")) continue;
    KernelFacts k;
    k.version = v;
    k.running = v == running;
    k.headers = fs.exists(dir + "/build");
    for (const char* sub : {"updates/dkms", "updates", "extra"})
      for (const char* ext : {".ko", ".ko.xz", ".ko.zst"}) {
        const std::string p = fmt::format("{}/{}/rnvme{}", dir, sub, ext);
        if (k.rnvme_module.empty() && fs.exists(p)) k.rnvme_module = p;
      }
    for (const auto& ver : m.dkms_versions)
      for (const auto& arch : list_or_empty(fs, fmt::format("{}/{}/{}", dkms, ver, v)))
        if (fs.exists(fmt::format("{}/{}/{}/{}/module/rnvme.ko", dkms, ver, v, arch)) ||
            fs.exists(fmt::format("{}/{}/{}/{}/module/rnvme.ko.xz", dkms, ver, v, arch)))
          k.dkms_built = true;
    m.kernels.push_back(k);
  }
  return m;
}

DoctorSnapshot read_doctor_snapshot(const FileSystem& fs, FabricProbe& probe,
                                    Result<std::vector<RdmaDevice>> devices, const DoctorQuery& q) {
  DoctorSnapshot s;
  s.source = "live host";
  if (devices) {
    s.devices = std::move(*devices);
  } else {
    s.devices_known = false;
    s.devices_error = devices.error().message;
  }
  for (const auto& d : s.devices) {
    const std::string dir = std::string(kInfinibandClass) + "/" + d.name;
    // Soft-RoCE and siw have no parent device; rxe shows its netdev in "parent".
    s.software_device[d.name] = fs.exists(dir + "/parent") || !fs.exists(dir + "/device");
    for (const auto& p : d.ports) {
      if (!p.netdev.empty() && !s.netdevs.count(p.netdev))
        s.netdevs[p.netdev] = read_netdev_facts(fs, probe, p.netdev);
      const std::string tos =
          fmt::format("/sys/kernel/config/rdma_cm/{}/ports/{}/default_roce_tos", d.name, p.index);
      if (auto v = parse_int(read_trim(fs, tos))) s.default_roce_tos[fmt::format("{}/{}", d.name, p.index)] = *v;
      const std::string mode =
          read_trim(fs, fmt::format("/sys/kernel/config/rdma_cm/{}/ports/{}/default_roce_mode", d.name, p.index));
      if (!mode.empty()) s.default_roce_mode[fmt::format("{}/{}", d.name, p.index)] = mode;
    }
    s.queues.limits[d.name] = probe.device_limits(d);
  }
  if (!q.traddr.empty()) {
    TargetFacts t;
    t.traddr = q.traddr;
    if (!q.trsvcid.empty()) t.trsvcid = q.trsvcid;
    t.route = probe.route_to(q.traddr);  // the source address included
    if (t.route.found && !t.route.oif.empty()) {
      t.route.neighbour = probe.neighbour_state(
          t.route.oif, t.route.gateway.empty() ? q.traddr : t.route.gateway);
      if (!s.netdevs.count(t.route.oif) && t.route.oif != "lo")
        s.netdevs[t.route.oif] = read_netdev_facts(fs, probe, t.route.oif);
    }
    s.target = t;
  }
  // A VLAN's real device carries the DCB that applies to it.
  std::vector<std::string> lowers;
  for (const auto& [name, n] : s.netdevs)
    if (!n.vlan_of.empty() && !s.netdevs.count(n.vlan_of)) lowers.push_back(n.vlan_of);
  for (const auto& l : lowers) s.netdevs[l] = read_netdev_facts(fs, probe, l);
  s.tos = q.tos;
  s.host = read_host_identity(fs);
  const Topology topo = scan_topology(fs);
  for (const auto& sub : topo.subsystems) {
    RnvmeSubsystem rs{sub.name, sub.nqn, {}};
    for (const auto& c : sub.controllers) {
      if (c.rnvme.empty()) continue;  // not rnvme's
      auto num = [&](const char* key) -> std::optional<int64_t> {
        auto it = c.rnvme.find(key);
        return it == c.rnvme.end() ? std::nullopt : parse_number<int64_t>(it->second);
      };
      rs.controllers.push_back({c.name, num("cqt_ms"), num("failover_hold_ms"), num("ccr_offered")});
    }
    if (!rs.controllers.empty()) s.subsystems.push_back(std::move(rs));
  }
  for (const auto& sub : topo.subsystems)
    for (const auto& c : sub.controllers) {
      if (c.transport == "pcie") continue;
      s.host_in_use.push_back({c.name, c.hostnqn, c.hostid});
      if (c.transport == "rdma")
        s.queues.controllers.push_back(
            {c.name, c.traddr, c.trsvcid, c.queue_count.value_or(0), c.sqsize.value_or(0)});
    }
  s.modules = read_module_facts(fs);
  s.queues.online_cpus = count_cpu_list(read_trim(fs, "/sys/devices/system/cpu/online"));
  return s;
}

}  // namespace rnvme
