#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "cmd/commands.h"

namespace rnvme {
namespace {

uint64_t errors_of(const CtrlTelemetry& t, const QueueTelemetry& q) {
  uint64_t e = q.get("host_aborted") + q.get("requeued") + q.get("failovers");
  for (const auto& n : t.scalars)
    if (n.rfind("wc_", 0) == 0 && n != "wc_success") e += q.get(n);
  return e;
}

// A row per queue of `cur` over the interval since `prev` (or, without it, since the reset).
std::vector<TopQueue> queues(const StatsReport* prev, const StatsReport& cur, double secs) {
  std::vector<TopQueue> out;
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
      TopQueue r;
      r.device = t.device;
      r.qid = q.qid;
      r.type = q.qid == 0 ? "admin" : q.poll ? "poll" : "io";
      r.seconds = span;
      const uint64_t n = d("completed_read") + d("completed_write") + d("completed_other");
      const uint64_t bytes = d("bytes_read") + d("bytes_write") + d("bytes_other");
      r.iops = span > 0 ? static_cast<double>(n) / span : 0;
      r.mib_per_s = span > 0 ? static_cast<double>(bytes) / span / 1048576.0 : 0;
      r.p50_ns = percentile_ns(t.geometry, h, 50);
      r.p99_ns = percentile_ns(t.geometry, h, 99);
      const uint64_t e = errors_of(t, q), pe = pq ? errors_of(*pt, *pq) : 0;
      r.errors = e >= pe ? e - pe : e;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

TopFrame top_frame(const StatsReport* prev, const StatsReport& cur, double secs,
                   const std::string& sort) {
  TopFrame f;
  f.controllers = cur.ctrls.size();
  f.since_reset = prev == nullptr;
  f.interval_s = prev ? secs : 0;
  f.sort = sort;
  f.queues = queues(prev, cur, secs);
  std::stable_sort(f.queues.begin(), f.queues.end(), [&](const TopQueue& a, const TopQueue& b) {
    if (sort == "latency") return a.p99_ns.value_or(0) > b.p99_ns.value_or(0);
    return a.iops > b.iops;
  });
  return f;
}

std::string render_top(const StatsReport* prev, const StatsReport& cur, double secs,
                       const std::string& sort) {
  std::ostringstream out;
  Printer(Format::kText, out, out).print(top_frame(prev, cur, secs, sort));
  return out.str();
}

Status run_top(Context& ctx, const TopArgs& args) {
  if (args.sort != "iops" && args.sort != "latency")
    return make_error(ErrorCode::kUsage, fmt::format("cannot sort by '{}'", args.sort), {},
                      "--sort iops or --sort latency");
  if (!(args.interval >= 0.1 && args.interval <= 3600))
    return make_error(ErrorCode::kUsage, fmt::format("bad interval {}", args.interval), {},
                      "--interval takes seconds between 0.1 and 3600");
  if (args.iterations < 0) return make_error(ErrorCode::kUsage, "--iterations must be >= 0");
  // text and JSON from one model: a frame per refresh (JSON: a document per line)
  const bool text = ctx.out.format() == Format::kText;
  const bool tty = text && isatty(STDOUT_FILENO);
  std::optional<StatsReport> prev;
  auto t_prev = std::chrono::steady_clock::now();
  for (int i = 0; args.iterations == 0 || i < args.iterations; i++) {
    if (i) std::this_thread::sleep_for(std::chrono::duration<double>(args.interval));
    auto cur = collect_stats(ctx, args.ctrl);
    if (!cur) return cur.error();
    auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - t_prev).count();
    if (text) ctx.out.raw(tty ? "\x1b[H\x1b[2J" : (i ? "\n" : ""));
    ctx.out.print(top_frame(prev ? &*prev : nullptr, *cur, secs, args.sort));
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
