// discover, list, rdma and hostnqn: the discovery log, the NVMe topology, the RDMA devices and
// the host identity.
#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

#include "core/printer/common.h"

namespace rnvme {

using namespace printer_detail;

json to_json(const DiscoveryLog& log) {
  json entries = json::array();
  for (const auto& e : log.entries) {
    json j = {{"trtype", trtype_name(e.trtype)},
              {"adrfam", adrfam_name(e.adrfam)},
              {"subtype", subtype_name(e.subtype)},
              {"treq", treq_name(e.treq)},
              {"portid", e.portid},
              {"trsvcid", e.trsvcid},
              {"subnqn", e.subnqn},
              {"traddr", e.traddr},
              {"cntlid", e.cntlid},
              {"asqsz", e.asqsz},
              {"eflags", e.eflags}};
    if (e.trtype == kTrtypeRdma)
      j["rdma"] = {{"qptype", rdma_qptype_name(e.rdma_qptype)},
                   {"prtype", rdma_prtype_name(e.rdma_prtype)},
                   {"cms", rdma_cms_name(e.rdma_cms)},
                   {"pkey", e.rdma_pkey}};
    entries.push_back(std::move(j));
  }
  return {{"genctr", log.genctr}, {"numrec", log.numrec}, {"recfmt", log.recfmt},
          {"entries", std::move(entries)}};
}

json to_json(const Topology& t) {
  json subs = json::array();
  for (const auto& s : t.subsystems) {
    json ctrls = json::array();
    for (const auto& c : s.controllers) {
      json paths = json::array();
      for (const auto& n : c.paths) paths.push_back(ns_json(n));
      json rnvme_state = c.rnvme.empty() ? json(nullptr) : json::object();
      for (const auto& [k, v] : c.rnvme) {
        auto n = parse_int(v);
        rnvme_state[k] = n ? json(*n) : json(v);
      }
      ctrls.push_back({{"name", c.name},
                       {"instance", c.instance},
                       {"transport", c.transport},
                       {"address", c.address},
                       {"traddr", str_or_null(c.traddr)},
                       {"trsvcid", str_or_null(c.trsvcid)},
                       {"host_traddr", str_or_null(c.host_traddr)},
                       {"state", c.state},
                       {"cntlid", opt(c.cntlid)},
                       {"queue_count", opt(c.queue_count)},
                       {"sqsize", opt(c.sqsize)},
                       {"ctrl_loss_tmo", opt(c.ctrl_loss_tmo)},
                       {"reconnect_delay", opt(c.reconnect_delay)},
                       {"fast_io_fail_tmo", opt(c.fast_io_fail_tmo)},
                       {"hostnqn", str_or_null(c.hostnqn)},
                       {"hostid", str_or_null(c.hostid)},
                       {"paths", std::move(paths)},
                       {"rnvme", std::move(rnvme_state)}});
    }
    json nss = json::array();
    for (const auto& n : s.namespaces) nss.push_back(ns_json(n));
    subs.push_back({{"name", s.name},
                    {"nqn", s.nqn},
                    {"controllers", std::move(ctrls)},
                    {"namespaces", std::move(nss)}});
  }
  return {{"subsystems", std::move(subs)}};
}

json to_json(const std::vector<RdmaDevice>& devs) {
  json out = json::array();
  for (const auto& d : devs) {
    json ports = json::array();
    for (const auto& p : d.ports) {
      json gids = json::array();
      for (const auto& g : p.gids)
        gids.push_back({{"index", g.index},
                        {"address", str_or_null(gid_address(g.gid).value_or(""))},
                        {"gid", g.gid},
                        {"type", str_or_null(gid_type_name(g.type, p.link_layer))},
                        {"ndev", str_or_null(g.ndev)}});
      ports.push_back({{"port", p.index},
                       {"state", p.state},
                       {"phys_state", str_or_null(p.phys_state)},
                       {"link_layer", str_or_null(p.link_layer)},
                       {"active_mtu", p.active_mtu ? json(p.active_mtu) : json(nullptr)},
                       {"netdev", str_or_null(p.netdev)},
                       {"netdev_mtu", p.netdev_mtu ? json(p.netdev_mtu) : json(nullptr)},
                       {"expected_active_mtu", p.netdev_mtu && p.link_layer == "Ethernet"
                                                   ? json(roce_mtu_for_netdev_mtu(p.netdev_mtu))
                                                   : json(nullptr)},
                       {"gids", std::move(gids)}});
    }
    out.push_back({{"dev_index", d.index}, {"name", d.name}, {"node_type", str_or_null(d.node_type)},
                   {"ports", std::move(ports)}});
  }
  return {{"devices", std::move(out)}};
}

json to_json(const HostCheck& hc) {
  json problems = json::array();
  for (const auto& p : hc.problems)
    problems.push_back({{"source", p.source}, {"problem", p.problem}, {"fix", p.fix},
                        {"fatal", p.fatal}});
  return {{"hostnqn", str_or_null(hc.hostnqn)},
          {"hostid", str_or_null(hc.hostid)},
          {"hostnqn_source", hc.hostnqn_source},
          {"hostid_source", hc.hostid_source},
          {"ok", hc.ok()},
          {"problems", std::move(problems)}};
}

void Printer::print(const DiscoveryLog& log) {
  if (format_ == Format::kJson) return json(to_json(log));
  fmt::print(out_, "Discovery Log Number of Records {}, Generation counter {}\n", log.numrec,
             log.genctr);
  for (size_t i = 0; i < log.entries.size(); i++) {
    const auto& e = log.entries[i];
    fmt::print(out_, "=====Discovery Log Entry {}======\n", i);
    fmt::print(out_, "trtype:  {}\nadrfam:  {}\nsubtype: {}\ntreq:    {}\nportid:  {}\n",
               trtype_name(e.trtype), adrfam_name(e.adrfam), subtype_name(e.subtype),
               treq_name(e.treq), e.portid);
    fmt::print(out_, "trsvcid: {}\nsubnqn:  {}\ntraddr:  {}\n", e.trsvcid, e.subnqn, e.traddr);
    if (e.trtype == kTrtypeRdma)
      fmt::print(out_, "rdma_prtype: {}\nrdma_qptype: {}\nrdma_cms:    {}\nrdma_pkey: {:#06x}\n",
                 rdma_prtype_name(e.rdma_prtype), rdma_qptype_name(e.rdma_qptype),
                 rdma_cms_name(e.rdma_cms), e.rdma_pkey);
  }
}

void Printer::print(const Topology& t) {
  if (format_ == Format::kJson) return json(to_json(t));
  if (t.subsystems.empty()) {
    fmt::print(out_, "no NVMe subsystems\n");
    return;
  }
  for (const auto& s : t.subsystems) {
    fmt::print(out_, "{} {}\n", s.name, s.nqn);
    for (const auto& c : s.controllers) {
      fmt::print(out_, "  {:<7} {} {} {}\n", c.name, c.transport, c.address, c.state);
      fmt::print(out_,
                 "          queues {}, sqsize {}, cntlid {}, ctrl_loss_tmo {}, reconnect_delay {}, "
                 "fast_io_fail_tmo {}\n",
                 opt_text(c.queue_count, "?"), opt_text(c.sqsize, "?"), opt_text(c.cntlid, "?"),
                 opt_text(c.ctrl_loss_tmo), opt_text(c.reconnect_delay), opt_text(c.fast_io_fail_tmo));
      if (!c.rnvme.empty()) {
        std::string line;
        for (const auto& [k, v] : c.rnvme) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", k, v);
        fmt::print(out_, "          rnvme: {}\n", line);
      }
      for (const auto& n : c.paths) ns_text(out_, n, "          ");
    }
    for (const auto& n : s.namespaces) ns_text(out_, n, "  ");
  }
}

void Printer::print(const std::vector<RdmaDevice>& devs) {
  if (format_ == Format::kJson) return json(to_json(devs));
  if (devs.empty()) {
    fmt::print(out_, "no RDMA devices\n");
    return;
  }
  for (const auto& d : devs) {
    for (const auto& p : d.ports) {
      fmt::print(out_, "{}/{}: state {} physical_state {} link_layer {} active_mtu {} netdev {}",
                 d.name, p.index, p.state, p.phys_state.empty() ? "?" : p.phys_state,
                 p.link_layer.empty() ? "?" : p.link_layer, p.active_mtu,
                 p.netdev.empty() ? "-" : p.netdev);
      if (p.netdev_mtu) fmt::print(out_, " (mtu {})", p.netdev_mtu);
      // A RoCE MTU below what the netdev allows costs throughput silently (users' pain #7).
      if (p.netdev_mtu && p.active_mtu && p.link_layer == "Ethernet" &&
          p.active_mtu != roce_mtu_for_netdev_mtu(p.netdev_mtu))
        fmt::print(out_, " [active_mtu {} but netdev mtu {} allows {}]", p.active_mtu,
                   p.netdev_mtu, roce_mtu_for_netdev_mtu(p.netdev_mtu));
      fmt::print(out_, "\n");
      // As show_gids lists them: the address a GID stands for, not its hex digits (those are
      // in the JSON).
      size_t width = 15;  // an IPv4 address
      for (const auto& g : p.gids) width = std::max(width, gid_address(g.gid).value_or(g.gid).size());
      for (const auto& g : p.gids) {
        const std::string type = gid_type_name(g.type, p.link_layer);
        fmt::print(out_, "    gid {:<3} {:<{}}  {:<7}  {}\n", g.index,
                   gid_address(g.gid).value_or(g.gid), width, type.empty() ? "?" : type,
                   g.ndev.empty() ? "-" : g.ndev);
      }
    }
  }
}

void Printer::print(const HostCheck& hc) {
  if (format_ == Format::kJson) return json(to_json(hc));
  fmt::print(out_, "hostnqn: {}  ({})\nhostid:  {}  ({})\n",
             hc.hostnqn.empty() ? "-" : hc.hostnqn, hc.hostnqn_source,
             hc.hostid.empty() ? "-" : hc.hostid, hc.hostid_source);
  for (const auto& p : hc.problems)
    fmt::print(out_, "{}: {}: {}\n  fix: {}\n", p.fatal ? "error" : "warning", p.source, p.problem,
               p.fix);
  if (hc.problems.empty()) fmt::print(out_, "ok: hostnqn and hostid are consistent\n");
}

}  // namespace rnvme
