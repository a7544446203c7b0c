// stats and top: controller telemetry and the per-queue refreshes.
#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

#include "core/printer/common.h"

namespace rnvme {

using namespace printer_detail;

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

// the failover hold in two lines: the hold and CQT, then what it held; "-" for a value the module
// does not report, one line when it reports none
void print_hold(std::ostream& os, const FailoverHold& h) {
  if (!h.any()) {
    fmt::print(os, "  failover hold: not available (this rnvme.ko has none)\n");
    return;
  }
  auto n = [](const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  auto ms = [&](const std::optional<uint64_t>& v) { return v ? n(v) + " ms" : std::string("-"); };
  const std::string hold = h.failover_hold_ms && *h.failover_hold_ms == 0 ? std::string("off")
                                                                         : ms(h.failover_hold_ms);
  fmt::print(os, "  failover hold: {}, CQT {}\n", hold, ms(h.cqt_ms));
  fmt::print(os, "  held: {} now, {} in all, last hold {}\n", n(h.held_now), n(h.held_commands),
             ms(h.last_hold_ms));
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
    nlohmann::json hold;
    for (const auto& f : failover_hold_fields()) {
      const auto& v = t.hold.*f.value;
      hold[f.file] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    }
    c["failover_hold"] = hold;
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
    print_hold(out_, t.hold);
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
