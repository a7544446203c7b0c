// connect, disconnect, connect-all (and disconnect-all): their outcomes.
#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/printer/common.h"

namespace rnvme {

using namespace printer_detail;

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
          {"dry_run", d.dry_run}, {"nqn", str_or_null(d.nqn)}};
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
  if (!d.nqn.empty() && !d.dry_run)
    fmt::print(out_, "NQN:{} disconnected {} controller(s)\n", d.nqn, d.devices.size());
  else if (d.devices.empty() && d.failed.empty() && d.skipped.empty())
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

}  // namespace rnvme
