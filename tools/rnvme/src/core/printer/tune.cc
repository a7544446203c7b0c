// tune: the knobs, their profiles and the controllers a profile reconnects.
#include "core/printer.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/printer/common.h"

namespace rnvme {

using namespace printer_detail;

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
