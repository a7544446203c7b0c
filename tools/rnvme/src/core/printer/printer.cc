// The Printer itself: every JSON document's envelope, errors, notes; human_size().
#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/json_text.h"
#include "core/printer/common.h"

namespace rnvme {

using namespace printer_detail;

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

json to_json(const VersionInfo& v) {
  return {{"rnvme", v.tool},
          {"libnvme", str_or_null(v.libnvme_runtime)},
          {"libnvme_built", str_or_null(v.libnvme_built)}};
}

void Printer::print(const VersionInfo& v) {
  if (format_ == Format::kJson) return json(to_json(v));
  // nvme-cli's first words ("nvme version 2.3 (git 2.3)", "libnvme version 1.3 (git 1.3)")
  fmt::print(out_, "rnvme version {}\n", v.tool);
  if (v.libnvme_runtime.empty())
    fmt::print(out_, "libnvme version unknown (built against {})\n", v.libnvme_built);
  else if (v.libnvme_runtime != v.libnvme_built)
    fmt::print(out_, "libnvme version {} (built against {})\n", v.libnvme_runtime, v.libnvme_built);
  else
    fmt::print(out_, "libnvme version {}\n", v.libnvme_runtime);
}

int exit_code(ErrorCode code) { return static_cast<int>(code); }

void Printer::emit(std::ostream& os, nlohmann::json j, int indent) {
  j["version"] = kJsonSchemaVersion;
  os << dump_json(j, indent) << '\n';
}

void Printer::json(const nlohmann::json& j) { emit(out_, j); }

void Printer::raw(std::string_view text) { out_ << text << std::flush; }

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

}  // namespace rnvme
