#include "core/telemetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace rnvme {
namespace {

constexpr uint64_t kMagic = 0x314c4554454d564eULL;  // "NVMETEL1"
constexpr int kVersion = 1;

Error bad(std::string what) {
  return make_error(ErrorCode::kFailure, "cannot decode rnvme telemetry: " + std::move(what),
                    "the module and the tool disagree on the telemetry layout",
                    "use the tool built with the loaded rnvme.ko");
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

int layout_version(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() ? v : 0;
}

std::string esc(std::string_view s) {  // a Prometheus label value
  std::string o;
  for (char c : s) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string seconds(uint64_t ns) {
  // shortest text that reads back to the same double
  return fmt::format("{}", static_cast<double>(ns) / 1e9);
}

constexpr FailoverHoldField kHoldFields[] = {
    {"held_commands", &FailoverHold::held_commands, "rnvme_ctrl_held_commands_total", true, false,
     "commands the failover hold kept since the controller was created"},
    {"held_now", &FailoverHold::held_now, "rnvme_ctrl_held_now", false, false,
     "commands the failover hold keeps right now"},
    {"last_hold_ms", &FailoverHold::last_hold_ms, "rnvme_ctrl_last_hold_seconds", false, true,
     "how long the latest failover hold lasted"},
    {"failover_hold_ms", &FailoverHold::failover_hold_ms, "rnvme_ctrl_failover_hold_seconds", false, true,
     "the current association's failover hold (2 or 3 x keep-alive timeout + CQT; 0: failover_hold off)"},
    {"cqt_ms", &FailoverHold::cqt_ms, "rnvme_ctrl_cqt_seconds", false, true,
     "the Command Quiesce Time the controller reported (0: none)"},
};

}  // namespace

std::span<const FailoverHoldField> failover_hold_fields() { return kHoldFields; }

std::optional<uint64_t> bucket_upper_ns(const HistGeometry& g, int b) {
  if (b <= 0) return uint64_t{1} << g.min_shift;
  if (b >= g.buckets - 1) return std::nullopt;
  const int per = 1 << g.sub_bits;
  const int e = g.min_shift + (b - 1) / per;
  const int s = (b - 1) % per;
  return static_cast<uint64_t>(per + s + 1) << (e - g.sub_bits);
}

std::optional<uint64_t> percentile_ns(const HistGeometry& g, const std::vector<uint64_t>& hist,
                                      double p) {
  uint64_t total = 0;
  for (uint64_t n : hist) total += n;
  if (!total) return std::nullopt;
  // the smallest bucket whose cumulative count reaches ceil(p% of total) (at least 1)
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(total)));
  if (rank < 1) rank = 1;
  uint64_t acc = 0;
  for (size_t b = 0; b < hist.size(); b++) {
    acc += hist[b];
    if (acc >= rank) {
      auto up = bucket_upper_ns(g, static_cast<int>(b));
      return up ? *up : std::numeric_limits<uint64_t>::max();
    }
  }
  return std::numeric_limits<uint64_t>::max();
}

Result<CtrlTelemetry> decode_telemetry(std::string_view layout, std::string_view blob) {
  CtrlTelemetry t;
  std::vector<std::string> header;
  std::istringstream in{std::string(layout)};
  for (std::string line; std::getline(in, line);) {
    auto w = words(line);
    if (w.empty()) continue;
    std::string key = w[0];
    w.erase(w.begin());
    // the version as the kernel wrote it: a number that is not one, or does not fit an int, is
    // no version this tool reads (std::atoi wrapped 4294967297 round to 1)
    if (key == "version" && w.size() == 1) t.version = layout_version(w[0]);
    else if (key == "header") header = w;
    else if (key == "scalars") t.scalars = w;
    else if (key == "gauges") t.gauges = w;
    else if (key == "histograms") t.classes = w;
  }
  if (t.version != kVersion) return bad(fmt::format("layout version {}, expected {}", t.version, kVersion));
  if (header.empty() || t.scalars.empty() || t.classes.empty()) return bad("incomplete layout");
  // stats and top read these two classes by name
  for (const char* cls : {"read", "write"})
    if (std::find(t.classes.begin(), t.classes.end(), cls) == t.classes.end())
      return bad(fmt::format("no {} histogram in the layout", cls));
  if (blob.size() % 8) return bad(fmt::format("{} bytes is not a whole number of words", blob.size()));
  std::vector<uint64_t> w(blob.size() / 8);
  if (!w.empty()) std::memcpy(w.data(), blob.data(), blob.size());
  if (w.size() < header.size()) return bad("shorter than its header");
  std::map<std::string, uint64_t> h;
  for (size_t i = 0; i < header.size(); i++) h[header[i]] = w[i];
  if (h["magic"] != kMagic) return bad("wrong magic");
  if (h["version"] != static_cast<uint64_t>(kVersion)) return bad(fmt::format("version {}", h["version"]));
  const uint64_t hw = h["header_words"], nq = h["nr_queues"], rw = h["record_words"];
  const uint64_t ns = h["scalars"], nc = h["hist_classes"], nb = h["hist_buckets"];
  if (hw != header.size() || ns != t.scalars.size() || nc != t.classes.size())
    return bad("header and layout disagree");
  if (nb < 2 || nb > 4096 || h["hist_min_shift"] > 40 || h["hist_sub_bits"] > 8 || rw != ns + nc * nb)
    return bad("implausible histogram geometry");
  if (nq > 65536 || w.size() != hw + nq * rw)
    return bad(fmt::format("{} words, header says {} + {} x {}", w.size(), hw, nq, rw));
  t.geometry = {static_cast<int>(nb), static_cast<int>(h["hist_min_shift"]),
                static_cast<int>(h["hist_sub_bits"])};
  if (t.geometry.buckets != 2 + ((t.geometry.buckets - 2) >> t.geometry.sub_bits << t.geometry.sub_bits))
    return bad("bucket count does not fit the geometry");
  t.enabled = h["enabled"] != 0;
  t.ns_since_reset = h["ns_since_reset"];
  for (uint64_t q = 0; q < nq; q++) {
    const uint64_t* r = w.data() + hw + q * rw;
    QueueTelemetry qt;
    for (uint64_t i = 0; i < ns; i++) qt.counters[t.scalars[i]] = r[i];
    qt.qid = static_cast<int>(qt.get("qid"));
    qt.poll = qt.get("flags") & 1;
    qt.live = qt.get("flags") & 2;
    for (uint64_t c = 0; c < nc; c++)
      qt.hist[t.classes[c]] = std::vector<uint64_t>(r + ns + c * nb, r + ns + (c + 1) * nb);
    t.queues.push_back(std::move(qt));
  }
  return t;
}

uint64_t sum_counter(const CtrlTelemetry& t, const std::string& name, bool io_only) {
  uint64_t s = 0;
  for (const auto& q : t.queues)
    if (!io_only || q.qid >= 1) s += q.get(name);
  return s;
}

std::vector<uint64_t> sum_hist(const CtrlTelemetry& t, const std::string& cls) {
  std::vector<uint64_t> s(static_cast<size_t>(t.geometry.buckets), 0);
  for (const auto& q : t.queues) {
    if (q.qid < 1) continue;
    auto it = q.hist.find(cls);
    if (it == q.hist.end()) continue;
    for (size_t b = 0; b < s.size() && b < it->second.size(); b++) s[b] += it->second[b];
  }
  return s;
}

std::string counter_help(const std::string& n) {
  static const std::map<std::string, std::string> help = {
      {"qid", "queue index (0: admin queue)"},
      {"flags", "bit 0: poll queue, bit 1: connected"},
      {"submitted_read", "read commands posted"},
      {"submitted_write", "write commands posted"},
      {"submitted_other", "other commands posted (flush, discard, admin, passthrough)"},
      {"bytes_read", "bytes of the read commands posted"},
      {"bytes_write", "bytes of the write commands posted"},
      {"bytes_other", "data bytes of the other commands posted"},
      {"data_none", "commands posted without data"},
      {"data_inline", "commands whose data went in the command capsule"},
      {"data_registered", "commands whose data went through a fast-registration MR"},
      {"data_global_rkey", "commands whose data went through the global rkey (register_always=0)"},
      {"requeued", "commands dispatched again after an earlier attempt (nvme-core retry, resource requeue)"},
      {"completed_read", "read commands answered by the target"},
      {"completed_write", "write commands answered by the target"},
      {"completed_other", "other commands answered by the target"},
      {"latency_sum_ns_read", "sum of the read latencies, ns"},
      {"latency_sum_ns_write", "sum of the write latencies, ns"},
      {"latency_sum_ns_other", "sum of the other commands' latencies, ns"},
      {"status_success", "responses with NVMe status 0"},
      {"status_generic", "responses with a generic command status error"},
      {"status_command_specific", "responses with a command specific status"},
      {"status_media", "responses with a media and data integrity error"},
      {"status_path", "responses with a path related status"},
      {"status_vendor", "responses with a vendor specific status"},
      {"status_reserved", "responses with a reserved status code type"},
      {"status_dnr", "error responses with Do Not Retry set"},
      {"status_last", "the latest non-zero NVMe status field"},
      {"host_aborted", "posted commands the host ended without a response (recovery, teardown, timeout)"},
      {"failovers", "commands ended with a path status on a multipath controller (handed to another path)"},
      {"rejected", "commands refused at dispatch because the queue was not ready"},
      {"keep_alive_count", "keep-alive commands answered"},
      {"keep_alive_sum_ns", "sum of their round trips, ns"},
      {"keep_alive_last_ns", "round trip of the latest keep-alive, ns"},
      {"keep_alive_max_ns", "longest keep-alive round trip since the reset, ns"},
      {"wr_posted", "work requests posted in the current association"},
      {"sends", "SENDs posted in the current association"},
      {"sends_signaled", "signaled SENDs posted in the current association"},
  };
  if (auto it = help.find(n); it != help.end()) return it->second;
  if (n.rfind("wc_", 0) == 0)
    return fmt::format("work completions with status {}", n.substr(3));
  return "rnvme telemetry counter " + n;
}

std::string render_prometheus(const std::vector<CtrlTelemetry>& ctrls) {
  std::string o;
  if (ctrls.empty()) return o;
  const CtrlTelemetry& first = ctrls.front();
  auto is_gauge = [](const CtrlTelemetry& t, const std::string& n) {
    for (const auto& g : t.gauges)
      if (g == n) return true;
    return false;
  };
  auto labels = [](const CtrlTelemetry& t, const QueueTelemetry& q) {
    return fmt::format("ctrl=\"{}\",queue=\"{}\"", esc(t.device), q.qid);
  };
  // one family per scalar (latency sums are in the histogram's _sum)
  for (const auto& n : first.scalars) {
    if (n == "qid" || n.rfind("latency_sum_ns_", 0) == 0) continue;
    const bool gauge = is_gauge(first, n);
    const std::string name = fmt::format("rnvme_queue_{}{}", n, gauge ? "" : "_total");
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, counter_help(n), name,
                     gauge ? "gauge" : "counter");
    for (const auto& t : ctrls)
      for (const auto& q : t.queues) o += fmt::format("{}{{{}}} {}\n", name, labels(t, q), q.get(n));
  }
  const std::string h = "rnvme_queue_latency_seconds";
  o += fmt::format("# HELP {} command latency, posting to completion, by class\n# TYPE {} histogram\n",
                   h, h);
  for (const auto& t : ctrls)
    for (const auto& q : t.queues)
      for (const auto& cls : t.classes) {
        const auto& b = q.hist.at(cls);
        const std::string l = fmt::format("{},class=\"{}\"", labels(t, q), cls);
        uint64_t acc = 0;
        for (size_t i = 0; i < b.size(); i++) {
          acc += b[i];
          auto up = bucket_upper_ns(t.geometry, static_cast<int>(i));
          o += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", h, l, up ? seconds(*up) : "+Inf", acc);
        }
        o += fmt::format("{}_sum{{{}}} {}\n", h, l, seconds(q.get("latency_sum_ns_" + cls)));
        o += fmt::format("{}_count{{{}}} {}\n", h, l, acc);
      }
  // one family per failover-hold value, of the controllers that report it (none: no family)
  for (const auto& f : failover_hold_fields()) {
    std::string samples;
    for (const auto& t : ctrls)
      if (const auto& v = t.hold.*f.value)
        samples += fmt::format("{}{{ctrl=\"{}\"}} {}\n", f.metric, esc(t.device),
                               f.ms ? fmt::format("{}", static_cast<double>(*v) / 1e3) : std::to_string(*v));
    if (!samples.empty())
      o += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", f.metric, f.help, f.metric,
                       f.counter ? "counter" : "gauge", samples);
  }
  const std::string rc = "rnvme_rdma_port_counter_total";
  bool any = false;
  for (const auto& t : ctrls) any |= !t.rdma_counters.empty();
  if (any) {
    o += fmt::format("# HELP {} the RDMA port's own counters (rdma statistic), by name\n# TYPE {} counter\n",
                     rc, rc);
    for (const auto& t : ctrls)
      for (const auto& [k, v] : t.rdma_counters)
        o += fmt::format("{}{{ctrl=\"{}\",rdma_device=\"{}\",counter=\"{}\"}} {}\n", rc, esc(t.device),
                         esc(t.rdma_device), esc(k), v);
  }
  return o;
}

}  // namespace rnvme
