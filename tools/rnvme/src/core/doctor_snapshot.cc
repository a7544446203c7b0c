// DoctorSnapshot <-> JSON.  `rnvme doctor --dump-snapshot` writes what it read; the unit tests'
// fixtures (testdata/doctor/*.json) are such files, recorded or written from public
// documentation.  Keys left out take their defaults, so a fixture names only what it is about.
#include <fmt/format.h>

#include "core/doctor.h"
#include "core/topology.h"

namespace rnvme {
namespace {

using nlohmann::json;

template <typename T>
void get(const json& j, const char* key, T& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

json gid_json(const RdmaGid& g) {
  return {{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"ndev", g.ndev}};
}

json dcb_json(const DcbState& d) {
  const char* support = d.support == DcbState::kPresent  ? "present"
                        : d.support == DcbState::kAbsent ? "absent"
                                                         : "unknown";
  json apps = json::array();
  for (const auto& a : d.apps)
    apps.push_back({{"selector", a.selector}, {"priority", a.priority}, {"protocol", a.protocol}});
  json j = {{"support", support}, {"error", d.error}, {"apps", apps}, {"dcbx", d.dcbx}, {"trust", d.trust}};
  if (d.has_pfc) j["pfc"] = {{"cap", d.pfc_cap}, {"enabled", d.pfc_en}};
  if (d.has_ets) j["ets"] = {{"prio_tc", d.prio_tc}, {"tc_tsa", d.tc_tsa}, {"tc_bw", d.tc_bw}};
  return j;
}

DcbState dcb_from(const json& j) {
  DcbState d;
  std::string support = "unknown";
  get(j, "support", support);
  d.support = support == "present" ? DcbState::kPresent
              : support == "absent" ? DcbState::kAbsent
                                    : DcbState::kUnknown;
  get(j, "error", d.error);
  get(j, "dcbx", d.dcbx);
  get(j, "trust", d.trust);
  if (auto it = j.find("pfc"); it != j.end()) {
    d.has_pfc = true;
    get(*it, "cap", d.pfc_cap);
    int en = 0;
    get(*it, "enabled", en);
    d.pfc_en = static_cast<uint8_t>(en);
  }
  if (auto it = j.find("ets"); it != j.end()) {
    d.has_ets = true;
    get(*it, "prio_tc", d.prio_tc);
    get(*it, "tc_tsa", d.tc_tsa);
    get(*it, "tc_bw", d.tc_bw);
  }
  if (auto it = j.find("apps"); it != j.end())
    for (const auto& a : *it) {
      DcbApp app;
      get(a, "selector", app.selector);
      get(a, "priority", app.priority);
      get(a, "protocol", app.protocol);
      d.apps.push_back(app);
    }
  return d;
}

json prio_map_json(const std::map<int, bool>& m) {
  json j = json::object();
  for (const auto& [p, on] : m) j[std::to_string(p)] = on;
  return j;
}

json int_map_json(const std::map<int, int>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[std::to_string(k)] = v;
  return j;
}

// a key of a priority map: an integer, or the snapshot is bad (a json error,
// reported as one by the reader)
int map_key(const std::string& k) {
  if (auto v = parse_int(k)) return *v;
  throw json::other_error::create(501, fmt::format("map key '{}' is not an integer", k), nullptr);
}

std::map<int, int> int_map_from(const json& j) {
  std::map<int, int> m;
  for (const auto& [k, v] : j.items()) m[map_key(k)] = v.get<int>();
  return m;
}

std::map<int, bool> prio_map_from(const json& j) {
  std::map<int, bool> m;
  for (const auto& [k, v] : j.items()) m[map_key(k)] = v.get<bool>();
  return m;
}

json opt_str(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }
json opt_int(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

template <typename T>
void get_opt(const json& j, const char* key, std::optional<T>& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

}  // namespace

json snapshot_to_json(const DoctorSnapshot& s) {
  json devs = json::array();
  for (const auto& d : s.devices) {
    json ports = json::array();
    for (const auto& p : d.ports) {
      json gids = json::array();
      for (const auto& g : p.gids) gids.push_back(gid_json(g));
      ports.push_back({{"index", p.index}, {"state", p.state}, {"phys_state", p.phys_state},
                       {"link_layer", p.link_layer}, {"active_mtu", p.active_mtu}, {"netdev", p.netdev},
                       {"netdev_mtu", p.netdev_mtu}, {"gids", gids}});
    }
    auto sw = s.software_device.find(d.name);
    devs.push_back({{"index", d.index}, {"name", d.name}, {"node_type", d.node_type},
                    {"software", sw != s.software_device.end() && sw->second}, {"ports", ports}});
  }
  json nds = json::object();
  for (const auto& [name, n] : s.netdevs)
    nds[name] = {{"ifindex", n.ifindex}, {"mtu", n.mtu}, {"operstate", n.operstate},
                 {"software", n.software}, {"dcb", dcb_json(n.dcb)},
                 {"ecn_np", prio_map_json(n.ecn_np)}, {"ecn_rp", prio_map_json(n.ecn_rp)},
                 {"vlan_of", n.vlan_of}, {"vlan_id", n.vlan_id}, {"egress_qos", int_map_json(n.egress_qos)}};
  json target = nullptr;
  if (s.target) {
    const auto& r = s.target->route;
    target = {{"traddr", s.target->traddr},
              {"trsvcid", s.target->trsvcid},
              {"route", {{"found", r.found}, {"errno", r.err}, {"error", r.error}, {"oif", r.oif},
                         {"src", r.src}, {"gateway", r.gateway}, {"mtu", r.mtu}, {"table", r.table},
                         {"neighbour", r.neighbour}, {"local", r.local}}}};
  }
  json in_use = json::array();
  for (const auto& h : s.host_in_use)
    in_use.push_back({{"controller", h.controller}, {"hostnqn", h.hostnqn}, {"hostid", h.hostid}});
  json kernels = json::array();
  for (const auto& k : s.modules.kernels)
    kernels.push_back({{"version", k.version}, {"running", k.running}, {"headers", k.headers},
                       {"rnvme_module", k.rnvme_module}, {"dkms_built", k.dkms_built}});
  const auto& m = s.modules;
  json limits = json::object();
  for (const auto& [d, l] : s.queues.limits)
    limits[d] = {{"max_qp", l.max_qp}, {"max_cq", l.max_cq}, {"max_mr", l.max_mr},
                 {"used_qp", l.used_qp}, {"used_cq", l.used_cq}, {"used_mr", l.used_mr}};
  json ctrls = json::array();
  for (const auto& c : s.queues.controllers)
    ctrls.push_back({{"name", c.name}, {"traddr", c.traddr}, {"trsvcid", c.trsvcid}, {"queue_count", c.queue_count},
                     {"sqsize", c.sqsize}});
  json subsystems = json::array();
  for (const auto& sub : s.subsystems) {
    json paths = json::array();
    for (const auto& c : sub.controllers)
      paths.push_back({{"name", c.name}, {"cqt_ms", opt_int(c.cqt_ms)},
                       {"failover_hold_ms", opt_int(c.failover_hold_ms)},
                       {"ccr_offered", opt_int(c.ccr_offered)}});
    subsystems.push_back({{"name", sub.name}, {"nqn", sub.nqn}, {"controllers", paths}});
  }
  json roce_tos = json::object();
  for (const auto& [k, v] : s.default_roce_tos) roce_tos[k] = v;
  json roce_mode = json::object();
  for (const auto& [k, v] : s.default_roce_mode) roce_mode[k] = v;
  return {{"source", s.source},
          {"devices_known", s.devices_known},
          {"devices_error", s.devices_error},
          {"devices", devs},
          {"netdevs", nds},
          {"target", target},
          {"tos", s.tos ? json(*s.tos) : json(nullptr)},
          {"default_roce_tos", roce_tos},
          {"default_roce_mode", roce_mode},
          {"host", {{"hostnqn", opt_str(s.host.hostnqn)}, {"hostid", opt_str(s.host.hostid)},
                    {"hostnqn_source", s.host.hostnqn_source}, {"hostid_source", s.host.hostid_source},
                    {"in_use", in_use}}},
          {"modules", {{"rnvme_loaded", m.rnvme_loaded}, {"nvme_rdma_loaded", m.nvme_rdma_loaded},
                       {"nvme_fabrics_loaded", m.nvme_fabrics_loaded},
                       {"rnvme_transport_name", m.rnvme_transport_name},
                       {"rnvme_failover_hold",
                        m.rnvme_failover_hold ? json(*m.rnvme_failover_hold) : json(nullptr)},
                       {"redirect_file", m.redirect_file}, {"block_file", m.block_file},
                       {"dkms_registered", m.dkms_registered}, {"dkms_versions", m.dkms_versions},
                       {"kernels", kernels}}},
          {"queues", {{"online_cpus", s.queues.online_cpus}, {"limits", limits}, {"controllers", ctrls}}},
          {"subsystems", subsystems}};
}

Result<DoctorSnapshot> snapshot_from_json(const json& j) {
  DoctorSnapshot s;
  try {
    if (!j.is_object()) return make_error(ErrorCode::kUsage, "a doctor snapshot is a JSON object");
    get(j, "source", s.source);
    get(j, "devices_known", s.devices_known);
    get(j, "devices_error", s.devices_error);
    if (auto it = j.find("devices"); it != j.end())
      for (const auto& dj : *it) {
        RdmaDevice d;
        get(dj, "index", d.index);
        get(dj, "name", d.name);
        get(dj, "node_type", d.node_type);
        bool sw = false;
        get(dj, "software", sw);
        s.software_device[d.name] = sw;
        if (auto pit = dj.find("ports"); pit != dj.end())
          for (const auto& pj : *pit) {
            RdmaPort p;
            get(pj, "index", p.index);
            get(pj, "state", p.state);
            get(pj, "phys_state", p.phys_state);
            get(pj, "link_layer", p.link_layer);
            get(pj, "active_mtu", p.active_mtu);
            get(pj, "netdev", p.netdev);
            get(pj, "netdev_mtu", p.netdev_mtu);
            if (auto git = pj.find("gids"); git != pj.end())
              for (const auto& gj : *git) {
                RdmaGid g;
                get(gj, "index", g.index);
                get(gj, "gid", g.gid);
                get(gj, "type", g.type);
                get(gj, "ndev", g.ndev);
                p.gids.push_back(g);
              }
            d.ports.push_back(p);
          }
        s.devices.push_back(d);
      }
    if (auto it = j.find("netdevs"); it != j.end())
      for (const auto& [name, nj] : it->items()) {
        NetdevFacts n;
        n.name = name;
        get(nj, "ifindex", n.ifindex);
        get(nj, "mtu", n.mtu);
        get(nj, "operstate", n.operstate);
        get(nj, "software", n.software);
        if (auto d = nj.find("dcb"); d != nj.end()) n.dcb = dcb_from(*d);
        if (auto e = nj.find("ecn_np"); e != nj.end()) n.ecn_np = prio_map_from(*e);
        if (auto e = nj.find("ecn_rp"); e != nj.end()) n.ecn_rp = prio_map_from(*e);
        get(nj, "vlan_of", n.vlan_of);
        get(nj, "vlan_id", n.vlan_id);
        if (auto e = nj.find("egress_qos"); e != nj.end()) n.egress_qos = int_map_from(*e);
        s.netdevs[name] = n;
      }
    if (auto it = j.find("target"); it != j.end() && !it->is_null()) {
      TargetFacts t;
      get(*it, "traddr", t.traddr);
      get(*it, "trsvcid", t.trsvcid);
      if (auto r = it->find("route"); r != it->end()) {
        get(*r, "found", t.route.found);
        get(*r, "errno", t.route.err);
        get(*r, "error", t.route.error);
        get(*r, "oif", t.route.oif);
        get(*r, "src", t.route.src);
        get(*r, "gateway", t.route.gateway);
        get(*r, "mtu", t.route.mtu);
        get(*r, "table", t.route.table);
        get(*r, "neighbour", t.route.neighbour);
        get(*r, "local", t.route.local);
      }
      s.target = t;
    }
    if (auto it = j.find("tos"); it != j.end() && !it->is_null()) s.tos = it->get<int>();
    if (auto it = j.find("default_roce_tos"); it != j.end())
      for (const auto& [k, v] : it->items()) s.default_roce_tos[k] = v.get<int>();
    if (auto it = j.find("default_roce_mode"); it != j.end())
      for (const auto& [k, v] : it->items()) s.default_roce_mode[k] = v.get<std::string>();
    if (auto h = j.find("host"); h != j.end()) {
      if (auto v = h->find("hostnqn"); v != h->end() && !v->is_null()) s.host.hostnqn = v->get<std::string>();
      if (auto v = h->find("hostid"); v != h->end() && !v->is_null()) s.host.hostid = v->get<std::string>();
      get(*h, "hostnqn_source", s.host.hostnqn_source);
      get(*h, "hostid_source", s.host.hostid_source);
      if (auto u = h->find("in_use"); u != h->end())
        for (const auto& c : *u) {
          HostInUse x;
          get(c, "controller", x.controller);
          get(c, "hostnqn", x.hostnqn);
          get(c, "hostid", x.hostid);
          s.host_in_use.push_back(x);
        }
    }
    if (auto mj = j.find("modules"); mj != j.end()) {
      auto& m = s.modules;
      get(*mj, "rnvme_loaded", m.rnvme_loaded);
      get(*mj, "nvme_rdma_loaded", m.nvme_rdma_loaded);
      get(*mj, "nvme_fabrics_loaded", m.nvme_fabrics_loaded);
      get(*mj, "rnvme_transport_name", m.rnvme_transport_name);
      get_opt(*mj, "rnvme_failover_hold", m.rnvme_failover_hold);
      get(*mj, "redirect_file", m.redirect_file);
      get(*mj, "block_file", m.block_file);
      get(*mj, "dkms_registered", m.dkms_registered);
      get(*mj, "dkms_versions", m.dkms_versions);
      if (auto k = mj->find("kernels"); k != mj->end())
        for (const auto& kj : *k) {
          KernelFacts kf;
          get(kj, "version", kf.version);
          get(kj, "running", kf.running);
          get(kj, "headers", kf.headers);
          get(kj, "rnvme_module", kf.rnvme_module);
          get(kj, "dkms_built", kf.dkms_built);
          m.kernels.push_back(kf);
        }
    }
    if (auto qj = j.find("queues"); qj != j.end()) {
      get(*qj, "online_cpus", s.queues.online_cpus);
      if (auto l = qj->find("limits"); l != qj->end())
        for (const auto& [d, lj] : l->items()) {
          DeviceLimits lim;
          get(lj, "max_qp", lim.max_qp);
          get(lj, "max_cq", lim.max_cq);
          get(lj, "max_mr", lim.max_mr);
          get(lj, "used_qp", lim.used_qp);
          get(lj, "used_cq", lim.used_cq);
          get(lj, "used_mr", lim.used_mr);
          s.queues.limits[d] = lim;
        }
      if (auto c = qj->find("controllers"); c != qj->end())
        for (const auto& cj : *c) {
          ControllerQueues cq;
          get(cj, "name", cq.name);
          get(cj, "traddr", cq.traddr);
          get(cj, "trsvcid", cq.trsvcid);
          get(cj, "queue_count", cq.queue_count);
          get(cj, "sqsize", cq.sqsize);
          s.queues.controllers.push_back(cq);
        }
    }
    if (auto sj = j.find("subsystems"); sj != j.end())
      for (const auto& subj : *sj) {
        RnvmeSubsystem sub;
        get(subj, "name", sub.name);
        get(subj, "nqn", sub.nqn);
        if (auto c = subj.find("controllers"); c != subj.end())
          for (const auto& cj : *c) {
            RnvmePath p;
            get(cj, "name", p.name);
            get_opt(cj, "cqt_ms", p.cqt_ms);
            get_opt(cj, "failover_hold_ms", p.failover_hold_ms);
            get_opt(cj, "ccr_offered", p.ccr_offered);
            sub.controllers.push_back(p);
          }
        s.subsystems.push_back(sub);
      }
  } catch (const json::exception& e) {
    return make_error(ErrorCode::kUsage, fmt::format("bad doctor snapshot: {}", e.what()));
  }
  return s;
}

}  // namespace rnvme
