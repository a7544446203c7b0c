// DoctorReport and the order in which `rnvme doctor` runs its check families.
#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kOk: return "ok";
    case Severity::kWarn: return "warn";
    case Severity::kFail: return "fail";
  }
  return "fail";
}

Severity DoctorReport::worst() const {
  Severity w = Severity::kOk;
  for (const auto& c : checks) w = std::max(w, c.severity);
  return w;
}

DoctorReport run_doctor_checks(const DoctorSnapshot& s) {
  DoctorReport r;
  check_rdma(s, r.checks);
  check_target(s, r.checks);
  check_lossless(s, r.checks);
  check_host(s, r.checks);
  check_modules(s, r.checks);
  check_queues(s, r.checks);
  check_multipath(s, r.checks);
  return r;
}

}  // namespace rnvme
