#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>

namespace rnvme {
namespace {

using nlohmann::json;

json opt(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }
json str_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
std::string opt_text(const std::optional<int>& v, std::string_view none = "off") {
  return v ? std::to_string(*v) : std::string(none);
}

json ns_json(const NvmeNamespace& n) {
  return {{"name", n.name},
          {"device", str_or_null(n.dev_path)},
          {"nsid", n.nsid},
          {"size_bytes", n.size_bytes},
          {"block_size", n.block_size}};
}

void ns_text(std::ostream& o, const NvmeNamespace& n, std::string_view indent) {
  fmt::print(o, "{}{:<12} nsid {:<4} {:>10}  ({} blocks of {} B){}\n", indent, n.name, n.nsid,
             human_size(n.size_bytes), n.block_size ? n.size_bytes / n.block_size : 0,
             n.block_size, n.dev_path.empty() ? "" : "  " + n.dev_path);
}

}  // namespace

std::string human_size(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    u++;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.2f} {}", v, units[u]);
}

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

json to_json(const ConnectOutcome& c) {
  return {{"device", str_or_null(c.device)},
          {"instance", c.instance >= 0 ? json(c.instance) : json(nullptr)},
          {"cntlid", c.cntlid >= 0 ? json(c.cntlid) : json(nullptr)},
          {"options", c.options},
          {"dry_run", c.dry_run},
          {"already_connected", c.already_connected}};
}

json to_json(const DisconnectOutcome& d) {
  auto pairs = [](const std::vector<std::pair<std::string, std::string>>& v) {
    json a = json::array();
    for (const auto& [dev, why] : v) a.push_back({{"device", dev}, {"detail", why}});
    return a;
  };
  return {{"devices", d.devices}, {"failed", pairs(d.failed)}, {"skipped", pairs(d.skipped)},
          {"dry_run", d.dry_run}};
}

json to_json(const ConnectAllOutcome& c) {
  json items = json::array();
  for (const auto& i : c.items)
    items.push_back({{"source", i.source},
                     {"nqn", i.nqn},
                     {"traddr", i.traddr},
                     {"trsvcid", i.trsvcid},
                     {"status", i.status},
                     {"device", str_or_null(i.device)},
                     {"options", str_or_null(i.options)},
                     {"detail", str_or_null(i.detail)},
                     {"failure_class", str_or_null(i.failure_class)},
                     {"via", str_or_null(i.via)}});
  return {{"results", std::move(items)}, {"note", str_or_null(c.note)}};
}

json to_json(const Error& e) {
  return {{"error",
           {{"message", e.message},
            {"reason", str_or_null(e.reason)},
            {"cause", str_or_null(e.cause)},
            {"fix", str_or_null(e.fix)},
            {"evidence", e.evidence},
            {"record", e.record.empty() ? json(nullptr) : json(e.record)},
            {"errno", e.sys_errno ? json(e.sys_errno) : json(nullptr)},
            {"exit_code", exit_code(e.code)}}}};
}

json to_json(const DoctorReport& r) {
  json checks = json::array();
  std::map<std::string, int> counts = {{"ok", 0}, {"warn", 0}, {"fail", 0}};
  for (const auto& c : r.checks) {
    const std::string sev(severity_name(c.severity));
    counts[sev]++;
    checks.push_back({{"id", c.id},
                      {"subject", str_or_null(c.subject)},
                      {"severity", sev},
                      {"seen", c.seen},
                      {"why", str_or_null(c.why)},
                      {"fix", str_or_null(c.fix)}});
  }
  return {{"checks", std::move(checks)},
          {"summary", counts},
          {"status", severity_name(r.worst())},
          {"exit_status", r.exit_status()}};
}

int exit_code(ErrorCode code) { return static_cast<int>(code); }

void Printer::emit(std::ostream& os, nlohmann::json j, int indent) {
  j["version"] = kJsonSchemaVersion;
  os << j.dump(indent) << '\n';
}

void Printer::json(const nlohmann::json& j) { emit(out_, j); }

void Printer::raw(std::string_view text) { out_ << text << std::flush; }

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

void Printer::print(const ConnectOutcome& c) {
  if (format_ == Format::kJson) return json(to_json(c));
  if (c.already_connected)
    fmt::print(out_, "already connected {} (cntlid {})\n", c.device,
               c.cntlid >= 0 ? std::to_string(c.cntlid) : std::string("?"));
  else if (c.dry_run)
    fmt::print(out_, "{}\n", c.options);
  else
    fmt::print(out_, "connected {} (cntlid {})\n", c.device, c.cntlid);
}

void Printer::print(const DisconnectOutcome& d) {
  if (format_ == Format::kJson) return json(to_json(d));
  for (const auto& dev : d.devices)
    fmt::print(out_, "{} {}\n", d.dry_run ? "would disconnect" : "disconnected", dev);
  for (const auto& [dev, why] : d.failed) fmt::print(out_, "failed {}: {}\n", dev, why);
  for (const auto& [dev, why] : d.skipped) fmt::print(out_, "skipped {}: {}\n", dev, why);
  if (d.devices.empty() && d.failed.empty() && d.skipped.empty())
    fmt::print(out_, "no matching controllers\n");
}

void Printer::print(const ConnectAllOutcome& c) {
  if (format_ == Format::kJson) return json(to_json(c));
  if (!c.note.empty()) fmt::print(out_, "{}\n", c.note);
  for (const auto& i : c.items) {
    fmt::print(out_, "{:<17} {} {}:{}", i.status, i.nqn, i.traddr, i.trsvcid);
    if (!i.device.empty()) fmt::print(out_, " -> {}", i.device);
    if (!i.via.empty()) fmt::print(out_, " via {}", i.via);
    if (i.status == "would_connect") fmt::print(out_, "\n  {}", i.options);
    if (!i.detail.empty()) fmt::print(out_, "\n  {}", i.detail);
    fmt::print(out_, "\n");
  }
}

void Printer::print(const DoctorReport& r) {
  if (format_ == Format::kJson) return json(to_json(r));
  size_t idw = 0, subw = 0;
  for (const auto& c : r.checks) {
    idw = std::max(idw, c.id.size());
    subw = std::max(subw, c.subject.size());
  }
  int n[3] = {0, 0, 0};
  for (const auto& c : r.checks) {
    n[static_cast<int>(c.severity)]++;
    fmt::print(out_, "{:<4}  {:<{}}  {:<{}}  {}\n", severity_name(c.severity), c.id, idw, c.subject, subw,
               c.seen);
    if (!c.why.empty()) fmt::print(out_, "      why: {}\n", c.why);
    if (!c.fix.empty()) fmt::print(out_, "      fix: {}\n", c.fix);
  }
  fmt::print(out_, "{} ok, {} warning{}, {} failure{}\n", n[0], n[1], n[1] == 1 ? "" : "s", n[2],
             n[2] == 1 ? "" : "s");
}

void Printer::print_error(const Error& e) {
  if (format_ == Format::kJson) {
    emit(err_, to_json(e));
    return;
  }
  fmt::print(err_, "rnvme: {}\n", e.message);
  if (!e.reason.empty()) fmt::print(err_, "  reason: {}\n", e.reason);
  if (!e.cause.empty()) fmt::print(err_, "  cause: {}\n", e.cause);
  if (!e.fix.empty()) fmt::print(err_, "  fix:   {}\n", e.fix);
  if (!e.record.empty()) {
    std::string kv;
    for (const auto& [k, v] : e.record) kv += fmt::format(" {}={}", k, v);
    fmt::print(err_, "  module record:{}\n", kv);
  }
  if (!e.evidence.empty()) {
    fmt::print(err_, "  evidence:\n");
    for (const auto& l : e.evidence) fmt::print(err_, "    {}\n", l);
  }
}

void Printer::note(std::string_view text) {
  if (!quiet_) fmt::print(err_, "{}\n", text);
}

namespace {

// "-", or a latency in the unit that keeps it short: 850ns 12.5us 3.2ms 1.50s
std::string short_ns(std::optional<uint64_t> ns) {
  if (!ns) return "-";
  if (*ns == UINT64_MAX) return ">68s";
  const double v = static_cast<double>(*ns);
  if (v < 1e3) return fmt::format("{}ns", *ns);
  if (v < 1e6) return fmt::format("{:.3g}us", v / 1e3);
  if (v < 1e9) return fmt::format("{:.3g}ms", v / 1e6);
  return fmt::format("{:.3g}s", v / 1e9);
}

// `label` and " name value" pairs, wrapped before column 80 (pairs stay whole)
void wrapped(std::ostream& os, const std::string& label, const std::string& items) {
  std::string line = label;
  size_t i = 0;
  while (i < items.size()) {
    // one " name value" pair: up to the space before the next name
    size_t j = items.find(' ', i + 1);
    j = j == std::string::npos ? items.size() : items.find(' ', j + 1);
    if (j == std::string::npos) j = items.size();
    const std::string pair = items.substr(i, j - i);
    if (line.size() + pair.size() > 79 && line.size() > label.size()) {
      fmt::print(os, "{}\n", line);
      line = "   ";
    }
    line += pair;
    i = j;
  }
  fmt::print(os, "{}\n", line);
}

nlohmann::json latency_json(const CtrlTelemetry& t, const std::vector<uint64_t>& h, uint64_t sum) {
  nlohmann::json j;
  uint64_t count = 0;
  for (auto n : h) count += n;
  j["count"] = count;
  j["sum_ns"] = sum;
  for (auto [key, p] : {std::pair{"p50_ns", 50.0}, {"p90_ns", 90.0}, {"p99_ns", 99.0}, {"p999_ns", 99.9}}) {
    auto v = percentile_ns(t.geometry, h, p);
    j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  }
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t b = 0; b < h.size(); b++) {
    if (!h[b]) continue;
    auto up = bucket_upper_ns(t.geometry, static_cast<int>(b));
    buckets.push_back({{"le_ns", up ? nlohmann::json(*up) : nlohmann::json(nullptr)}, {"count", h[b]}});
  }
  j["buckets"] = buckets;
  return j;
}

}  // namespace

nlohmann::json to_json(const StatsReport& s) {
  nlohmann::json ctrls = nlohmann::json::array();
  for (const auto& t : s.ctrls) {
    nlohmann::json c;
    c["device"] = t.device;
    c["rdma_device"] = t.rdma_device.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.rdma_device);
    c["telemetry_enabled"] = t.enabled;
    c["seconds_since_reset"] = static_cast<double>(t.ns_since_reset) / 1e9;
    nlohmann::json qs = nlohmann::json::array();
    for (const auto& q : t.queues) {
      nlohmann::json jq;
      jq["qid"] = q.qid;
      jq["type"] = q.qid == 0 ? "admin" : q.poll ? "poll" : "io";
      jq["live"] = q.live;
      nlohmann::json cnt;
      for (const auto& n : t.scalars)
        if (n != "qid" && n != "flags") cnt[n] = q.get(n);
      jq["counters"] = cnt;
      nlohmann::json lat;
      for (const auto& cls : t.classes) lat[cls] = latency_json(t, q.hist.at(cls), q.get("latency_sum_ns_" + cls));
      jq["latency"] = lat;
      qs.push_back(jq);
    }
    c["queues"] = qs;
    nlohmann::json io_lat;
    for (const auto& cls : t.classes) io_lat[cls] = latency_json(t, sum_hist(t, cls), sum_counter(t, "latency_sum_ns_" + cls, true));
    c["io_latency"] = io_lat;
    c["rdma_counters"] = t.rdma_counters;
    ctrls.push_back(c);
  }
  return {{"controllers", ctrls}};
}

void Printer::print(const StatsReport& s) {
  if (format_ == Format::kJson) return json(to_json(s));
  if (s.ctrls.empty()) {
    fmt::print(out_, "no rnvme controllers\n");
    return;
  }
  for (const auto& t : s.ctrls) {
    fmt::print(out_, "{}  {}  telemetry {}, {:.1f} s since reset\n", t.device,
               t.rdma_device.empty() ? "-" : t.rdma_device, t.enabled ? "on" : "off",
               static_cast<double>(t.ns_since_reset) / 1e9);
    if (!t.enabled)
      fmt::print(out_, "  counting is off: echo 1 > /sys/module/rnvme/parameters/telemetry\n");
    // 80 columns
    fmt::print(out_, "{:>5} {:<5} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7}\n", "queue",
               "type", "reads", "writes", "other", "rd p50", "rd p99", "wr p50", "wr p99", "MiB rd",
               "MiB wr");
    for (const auto& q : t.queues) {
      fmt::print(out_, "{:>5} {:<5} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7.1f} {:>7.1f}\n", q.qid,
                 q.qid == 0 ? "admin" : q.poll ? "poll" : "io", q.get("completed_read"),
                 q.get("completed_write"), q.get("completed_other"),
                 short_ns(percentile_ns(t.geometry, q.hist.at("read"), 50)),
                 short_ns(percentile_ns(t.geometry, q.hist.at("read"), 99)),
                 short_ns(percentile_ns(t.geometry, q.hist.at("write"), 50)),
                 short_ns(percentile_ns(t.geometry, q.hist.at("write"), 99)),
                 static_cast<double>(q.get("bytes_read")) / 1048576.0,
                 static_cast<double>(q.get("bytes_write")) / 1048576.0);
    }
    auto sum = [&](const char* n) { return sum_counter(t, n, false); };
    fmt::print(out_, "  data: {} in capsule, {} registered, {} global rkey, {} none\n", sum("data_inline"),
               sum("data_registered"), sum("data_global_rkey"), sum("data_none"));
    fmt::print(out_, "  ended by host {}, requeued {}, failovers {}, refused {}\n", sum("host_aborted"),
               sum("requeued"), sum("failovers"), sum("rejected"));
    std::string st, wc;
    for (const auto& n : t.scalars) {
      if (n.rfind("status_", 0) == 0 && n != "status_last" && sum(n.c_str()))
        st += fmt::format(" {} {}", n.substr(7), sum(n.c_str()));
      if (n.rfind("wc_", 0) == 0 && sum(n.c_str())) wc += fmt::format(" {} {}", n.substr(3), sum(n.c_str()));
    }
    wrapped(out_, "  nvme status:", st.empty() ? " -" : st);
    wrapped(out_, "  work completions:", wc.empty() ? " -" : wc);
    if (uint64_t n = sum("keep_alive_count")) {
      uint64_t mx = 0, last = 0;
      for (const auto& q : t.queues) {
        mx = std::max(mx, q.get("keep_alive_max_ns"));
        if (q.qid == 0) last = q.get("keep_alive_last_ns");
      }
      fmt::print(out_, "  keep-alive: {} answered, mean {}, last {}, max {}\n", n,
                 short_ns(sum("keep_alive_sum_ns") / n), short_ns(last), short_ns(mx));
    }
    if (!t.rdma_counters.empty()) {
      std::string items;
      for (const auto& [k, v] : t.rdma_counters) items += fmt::format(" {} {}", k, v);
      wrapped(out_, "  " + t.rdma_device + ":", items);
    }
  }
}

namespace {

// top's latency column: "-", or the bound in us, ms or s, three digits
std::string top_latency(std::optional<uint64_t> ns) {
  if (!ns) return "-";
  if (*ns == UINT64_MAX) return ">68s";
  const double v = static_cast<double>(*ns);
  if (v < 1e6) return fmt::format("{:.3g}us", v / 1e3);
  if (v < 1e9) return fmt::format("{:.3g}ms", v / 1e6);
  return fmt::format("{:.3g}s", v / 1e9);
}

nlohmann::json ns_or_null(std::optional<uint64_t> ns) {
  return ns ? nlohmann::json(*ns) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const TopFrame& f) {
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& q : f.queues)
    queues.push_back({{"device", q.device},
                      {"qid", q.qid},
                      {"type", q.type},
                      {"seconds", q.seconds},
                      {"iops", q.iops},
                      {"mib_per_s", q.mib_per_s},
                      {"p50_ns", ns_or_null(q.p50_ns)},
                      {"p99_ns", ns_or_null(q.p99_ns)},
                      {"errors", q.errors}});
  return {{"controllers", f.controllers},
          {"basis", f.since_reset ? "since_reset" : "interval"},
          {"interval_s", f.since_reset ? nlohmann::json(nullptr) : nlohmann::json(f.interval_s)},
          {"sort", f.sort},
          {"queues", std::move(queues)}};
}

void Printer::print(const TopFrame& f) {
  if (format_ == Format::kJson) {
    emit(out_, to_json(f), -1);
    out_.flush();
    return;
  }
  fmt::print(out_, "rnvme top: {} controller(s), {}, sorted by {}\n", f.controllers,
             f.since_reset ? std::string("averages since the reset")
                           : fmt::format("rates over {:.1f} s", f.interval_s),
             f.sort == "latency" ? "p99 latency" : "IOPS");
  fmt::print(out_, "{:<10} {:>5} {:>10} {:>9} {:>9} {:>9} {:>8}\n", "ctrl", "queue", "IOPS",
             "MiB/s", "p50", "p99", "errors");
  for (const auto& q : f.queues)
    fmt::print(out_, "{:<10} {:>5} {:>10.0f} {:>9.1f} {:>9} {:>9} {:>8}\n", q.device,
               q.qid == 0 ? std::string("admin") : std::to_string(q.qid), q.iops, q.mib_per_s,
               top_latency(q.p50_ns), top_latency(q.p99_ns), q.errors);
  out_.flush();
}

}  // namespace rnvme

namespace rnvme {

nlohmann::json to_json(const TuneReport& r) {
  nlohmann::json knobs = nlohmann::json::array();
  for (const auto& k : r.knobs) {
    nlohmann::json profiles = nlohmann::json::object();
    for (const auto& [p, v] : k.profiles) profiles[p] = v == "-" ? nlohmann::json(nullptr) : nlohmann::json(v);
    knobs.push_back({{"scope", k.scope},
                     {"knob", k.name},
                     {"path", str_or_null(k.path)},
                     {"current", k.current},
                     {"target", k.target ? nlohmann::json(*k.target) : nlohmann::json(nullptr)},
                     {"profiles", profiles},
                     {"status", str_or_null(k.status)},
                     {"why", k.why},
                     {"source", k.source}});
  }
  auto opt_int = [](const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json reconnects = nlohmann::json::array();
  for (const auto& c : r.reconnects)
    reconnects.push_back({{"ctrl", c.ctrl},
                          {"namespaces", c.namespaces},
                          {"order", c.order ? nlohmann::json(c.order) : nlohmann::json(nullptr)},
                          {"current", {{"io_queues", opt_int(c.io_queues)}, {"queue_size", opt_int(c.queue_size)}}},
                          {"target",
                           {{"io_queues", c.want_io_queues + c.want_poll_queues},
                            {"nr_io_queues", c.want_io_queues},
                            {"nr_poll_queues", c.want_poll_queues},
                            {"queue_size", c.want_queue_size}}},
                          {"status", c.status},
                          {"why", c.why},
                          {"options", str_or_null(c.options)},
                          {"restore_options", str_or_null(c.restore_options)},
                          {"new_ctrl", str_or_null(c.new_ctrl)},
                          {"after", {{"io_queues", opt_int(c.new_io_queues)}, {"queue_size", opt_int(c.new_queue_size)}}}});
  return {{"action", r.action},
          {"profile", str_or_null(r.profile)},
          {"dry_run", r.dry_run},
          {"notes", r.notes},
          {"knobs", knobs},
          {"reconnect", r.reconnect},
          {"reconnects", reconnects},
          {"summary", r.summary}};
}

void Printer::print(const TuneReport& r) {
  if (format_ == Format::kJson) return json(to_json(r));
  for (const auto& n : r.notes) fmt::print(out_, "{}\n", n);
  if (!r.notes.empty() && !r.knobs.empty()) fmt::print(out_, "\n");
  std::string scope;
  for (const auto& k : r.knobs) {
    if (k.scope != scope) {
      fmt::print(out_, "{}\n", k.scope);
      scope = k.scope;
    }
    std::string value = k.current;
    if (k.target && *k.target != k.current) value += " -> " + *k.target;
    fmt::print(out_, "  {:<26} {:<24} {}\n", k.name, value, k.status);
    if (!k.why.empty()) fmt::print(out_, "      {}\n", k.why);
    if (!k.source.empty() && r.action == "show") fmt::print(out_, "      [{}]\n", k.source);
  }
  if (r.reconnect) {
    fmt::print(out_, "reconnect (one controller at a time, each while its namespaces have another live path)\n");
    if (r.reconnects.empty()) fmt::print(out_, "  no controllers\n");
    for (const auto& c : r.reconnects) {
      const std::string name = c.new_ctrl.empty() ? c.ctrl : c.ctrl + " -> " + c.new_ctrl;
      fmt::print(out_, "  {:<2} {:<23} {}\n", c.order ? std::to_string(c.order) : std::string("-"), name,
                 c.status);
      if (!c.why.empty()) fmt::print(out_, "      {}\n", c.why);
      if (!c.options.empty() && (c.status == "would reconnect" || c.status == "reconnected" || c.status == "failed"))
        fmt::print(out_, "      connect: {}\n", c.options);
    }
  }
  if (!r.summary.empty()) fmt::print(out_, "{}\n", r.summary);
}

}  // namespace rnvme
