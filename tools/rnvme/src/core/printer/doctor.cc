// doctor: the report of its checks.
#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>

#include "core/printer/common.h"

namespace rnvme {

using namespace printer_detail;

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

}  // namespace rnvme
