// Check family queues.*: the queue budget of a default connect against the device limits.
#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

// ------------------------------------------------------------------ queue budget

void check_queues(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const QueueFacts& q = s.queues;
  if (q.online_cpus <= 0) return;
  // Devices that matter: the one the source GID is on, else every device.
  std::vector<std::string> devs;
  if (s.target && s.target->route.found)
    if (auto m = find_gid(s.devices, s.target->route.src)) devs.push_back(m->device->name);
  if (devs.empty())
    for (const auto& d : s.devices) devs.push_back(d.name);

  // What a connect with default options asks for: nr_io_queues = online CPUs, queue_size 128,
  // plus the admin queue (32 entries).  Each queue: one QP, one CQ (shared from the CQ pool for
  // interrupt-driven queues), one MR per queue entry.
  int granted = 0;
  if (s.target)
    for (const auto& c : q.controllers)
      if (c.traddr == s.target->traddr && (c.trsvcid.empty() || c.trsvcid == s.target->trsvcid) &&
          c.queue_count > 1)
        granted = c.queue_count - 1;
  const int io = granted ? std::min(granted, q.online_cpus) : q.online_cpus;
  const int qps = io + 1, cqs = io + 1, mrs = io * 128 + 32;
  const std::string ask =
      fmt::format("{} CPUs online: a default connect asks for {} I/O queues{}; it takes {} QPs, up to {} CQs "
                  "and {} MRs",
                  q.online_cpus, q.online_cpus,
                  granted ? fmt::format(" ({} granted {})", s.target->traddr, granted) : std::string(),
                  qps, cqs, mrs);
  for (const auto& d : devs) {
    auto it = q.limits.find(d);
    if (it == q.limits.end() || !it->second.max_qp) {
      out.push_back(ok("queues.budget", d, ask + "; device limits unknown (no verbs access)"));
      continue;
    }
    const DeviceLimits& l = it->second;
    auto left = [](int max, int used) { return used >= 0 ? max - used : max; };
    std::vector<std::string> short_of;
    if (qps > left(l.max_qp, l.used_qp)) short_of.push_back(fmt::format("QPs ({} left)", left(l.max_qp, l.used_qp)));
    if (l.max_cq && cqs > left(l.max_cq, l.used_cq))
      short_of.push_back(fmt::format("CQs ({} left)", left(l.max_cq, l.used_cq)));
    if (l.max_mr && mrs > left(l.max_mr, l.used_mr))
      short_of.push_back(fmt::format("MRs ({} left)", left(l.max_mr, l.used_mr)));
    const std::string lim = fmt::format("; {} allows {} QPs, {} CQs, {} MRs{}", d, l.max_qp, l.max_cq, l.max_mr,
                                        l.used_qp >= 0 ? fmt::format(" ({} QPs, {} CQs, {} MRs in use)", l.used_qp,
                                                                     l.used_cq, l.used_mr)
                                                       : std::string());
    if (!short_of.empty())
      out.push_back(bad(Severity::kFail, "queues.budget", d, ask + lim,
                        fmt::format("the device runs out of {}: the connect (or its reconnect) fails "
                                    "while creating queues",
                                    join(short_of)),
                        fmt::format("connect with fewer or smaller queues: --nr-io-queues {} --queue-size 32",
                                    std::max(1, std::min(io, left(l.max_qp, l.used_qp) - 1)))));
    else
      out.push_back(ok("queues.budget", d, ask + lim));
  }
}

}  // namespace rnvme
