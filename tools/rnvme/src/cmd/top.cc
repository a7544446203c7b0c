#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "cmd/commands.h"

namespace rnvme {
namespace {

struct Row {
  std::string ctrl;
  int qid = 0;
  double iops = 0, mibs = 0;
  std::optional<uint64_t> p50, p99;
  uint64_t errors = 0;
};

std::string lat(std::optional<uint64_t> ns) {
  if (!ns) return "-";
  if (*ns == UINT64_MAX) return ">68s";
  const double v = static_cast<double>(*ns);
  if (v < 1e6) return fmt::format("{:.3g}us", v / 1e3);
  if (v < 1e9) return fmt::format("{:.3g}ms", v / 1e6);
  return fmt::format("{:.3g}s", v / 1e9);
}

uint64_t errors_of(const CtrlTelemetry& t, const QueueTelemetry& q) {
  uint64_t e = q.get("host_aborted") + q.get("requeued") + q.get("failovers");
  for (const auto& n : t.scalars)
    if (n.rfind("wc_", 0) == 0 && n != "wc_success") e += q.get(n);
  return e;
}

// Rows of `cur` over the interval since `prev` (or, without it, since the reset).
std::vector<Row> rows(const StatsReport* prev, const StatsReport& cur, double secs) {
  std::vector<Row> out;
  for (const auto& t : cur.ctrls) {
    const CtrlTelemetry* pt = nullptr;
    if (prev)
      for (const auto& p : prev->ctrls)
        if (p.device == t.device) pt = &p;
    const double span = pt ? secs : static_cast<double>(t.ns_since_reset) / 1e9;
    for (const auto& q : t.queues) {
      const QueueTelemetry* pq = nullptr;
      if (pt)
        for (const auto& p : pt->queues)
          if (p.qid == q.qid) pq = &p;
      auto d = [&](const std::string& n) {
        uint64_t a = q.get(n), b = pq ? pq->get(n) : 0;
        return a >= b ? a - b : a;  // a reset in between: count from it
      };
      std::vector<uint64_t> h(static_cast<size_t>(t.geometry.buckets), 0);
      for (const auto& cls : t.classes) {
        const auto& c = q.hist.at(cls);
        for (size_t b = 0; b < h.size() && b < c.size(); b++) {
          uint64_t was = pq ? pq->hist.at(cls)[b] : 0;
          h[b] += c[b] >= was ? c[b] - was : c[b];
        }
      }
      Row r;
      r.ctrl = t.device;
      r.qid = q.qid;
      const uint64_t n = d("completed_read") + d("completed_write") + d("completed_other");
      const uint64_t bytes = d("bytes_read") + d("bytes_write") + d("bytes_other");
      r.iops = span > 0 ? static_cast<double>(n) / span : 0;
      r.mibs = span > 0 ? static_cast<double>(bytes) / span / 1048576.0 : 0;
      r.p50 = percentile_ns(t.geometry, h, 50);
      r.p99 = percentile_ns(t.geometry, h, 99);
      const uint64_t e = errors_of(t, q), pe = pq ? errors_of(*pt, *pq) : 0;
      r.errors = e >= pe ? e - pe : e;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

// One frame: 80 columns.
std::string render_top(const StatsReport* prev, const StatsReport& cur, double secs,
                       const std::string& sort) {
  auto r = rows(prev, cur, secs);
  std::stable_sort(r.begin(), r.end(), [&](const Row& a, const Row& b) {
    if (sort == "latency") return a.p99.value_or(0) > b.p99.value_or(0);
    return a.iops > b.iops;
  });
  std::string o = fmt::format("rnvme top: {} controller(s), {}, sorted by {}\n", cur.ctrls.size(),
                              prev ? fmt::format("rates over {:.1f} s", secs) : "averages since the reset",
                              sort == "latency" ? "p99 latency" : "IOPS");
  o += fmt::format("{:<10} {:>5} {:>10} {:>9} {:>9} {:>9} {:>8}\n", "ctrl", "queue", "IOPS", "MiB/s",
                   "p50", "p99", "errors");
  for (const auto& x : r)
    o += fmt::format("{:<10} {:>5} {:>10.0f} {:>9.1f} {:>9} {:>9} {:>8}\n", x.ctrl,
                     x.qid == 0 ? std::string("admin") : std::to_string(x.qid), x.iops, x.mibs,
                     lat(x.p50), lat(x.p99), x.errors);
  return o;
}

Status run_top(Context& ctx, const TopArgs& args) {
  if (args.sort != "iops" && args.sort != "latency")
    return make_error(ErrorCode::kUsage, fmt::format("cannot sort by '{}'", args.sort), {},
                      "--sort iops or --sort latency");
  if (!(args.interval >= 0.1 && args.interval <= 3600))
    return make_error(ErrorCode::kUsage, fmt::format("bad interval {}", args.interval), {},
                      "--interval takes seconds between 0.1 and 3600");
  if (args.iterations < 0) return make_error(ErrorCode::kUsage, "--iterations must be >= 0");
  const bool tty = isatty(STDOUT_FILENO) && ctx.out.format() == Format::kText;
  std::optional<StatsReport> prev;
  auto t_prev = std::chrono::steady_clock::now();
  for (int i = 0; args.iterations == 0 || i < args.iterations; i++) {
    if (i) std::this_thread::sleep_for(std::chrono::duration<double>(args.interval));
    auto cur = collect_stats(ctx, args.ctrl);
    if (!cur) return cur.error();
    auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - t_prev).count();
    std::string frame = render_top(prev ? &*prev : nullptr, *cur, secs, args.sort);
    ctx.out.raw((tty ? "\x1b[H\x1b[2J" : (i ? "\n" : "")) + frame);
    prev = std::move(*cur);
    t_prev = now;
  }
  return Ok{};
}

Action setup_top(CLI::App& sub) {
  auto args = std::make_shared<TopArgs>();
  sub.add_option("ctrl", args->ctrl, "controller (nvme0); default: every rnvme controller");
  sub.add_option("-i,--interval", args->interval, "seconds between refreshes")->capture_default_str();
  sub.add_option("-s,--sort", args->sort, "iops or latency (p99)")->capture_default_str();
  sub.add_option("-n,--iterations", args->iterations, "frames to show, then exit (0: until ^C)")
      ->capture_default_str();
  return [args](Context& ctx) { return run_top(ctx, *args); };
}

}  // namespace rnvme
