// rnvme doctor: reads a DoctorSnapshot of this host (sys/doctor_facts.h, with the RDMA inventory
// of cmd/context.h), or loads a recorded one, runs the checks of core/doctor.h and prints them.
// Exit 0 all ok, 1 a warning, 2 a failure.
#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/doctor.h"
#include "core/ip.h"
#include "core/topology.h"
#include "sys/doctor_facts.h"
#include "sys/fabric_probe.h"

namespace rnvme {

DoctorSnapshot gather_doctor_snapshot(Context& ctx, FabricProbe& probe, const DoctorArgs& args) {
  return read_doctor_snapshot(ctx.fs, probe, rdma_inventory(ctx),
                              {args.traddr, args.trsvcid, args.tos});
}

Status run_doctor(Context& ctx, FabricProbe& probe, const DoctorArgs& args) {
  if (args.json) ctx.out.set_format(Format::kJson);
  if (!args.traddr.empty() && !is_ip_address(args.traddr))
    return make_error(ErrorCode::kUsage, fmt::format("--traddr {}: not an IPv4 or IPv6 address", args.traddr),
                      {}, "give the target's IP address (the RDMA CM resolves addresses, not names)");
  if (!args.trsvcid.empty()) {
    auto port = parse_int(args.trsvcid);
    if (!port || *port < 1 || *port > 65535 || std::to_string(*port) != args.trsvcid)
      return make_error(ErrorCode::kUsage, fmt::format("--trsvcid {}: not a port number (1-65535)", args.trsvcid));
    if (args.traddr.empty()) return make_error(ErrorCode::kUsage, "--trsvcid needs --traddr");
  }
  if (args.tos && (*args.tos < 0 || *args.tos > 255))
    return make_error(ErrorCode::kUsage, fmt::format("--tos {}: a ToS byte is 0-255", *args.tos));

  DoctorSnapshot snap;
  if (!args.snapshot_file.empty()) {
    auto text = ctx.fs.read(args.snapshot_file);
    if (!text) return text.error();
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return make_error(ErrorCode::kUsage, fmt::format("{}: not JSON", args.snapshot_file));
    auto parsed = snapshot_from_json(j);
    if (!parsed) return parsed.error();
    snap = std::move(*parsed);
  } else {
    snap = gather_doctor_snapshot(ctx, probe, args);
  }
  if (args.dump_snapshot) {
    ctx.out.print_json_document(snapshot_to_json(snap));
    return Ok{};
  }
  DoctorReport report = run_doctor_checks(snap);
  ctx.out.print(report);
  ctx.exit_status = report.exit_status();
  return Ok{};
}

Action setup_doctor(CLI::App& sub) {
  auto args = std::make_shared<DoctorArgs>();
  sub.add_option("--traddr", args->traddr, "check the path to this target address too");
  sub.add_option("--trsvcid", args->trsvcid, "the target's port (default 4420)");
  sub.add_option("--tos", args->tos, "the tos= the connection will use (0-255)");
  sub.add_flag("--json", args->json, "JSON output (same as -o json)");
  sub.add_flag("--dump-snapshot", args->dump_snapshot,
               "print the facts gathered (JSON, a test fixture) instead of checking them");
  sub.add_option("--snapshot", args->snapshot_file, "check a recorded snapshot instead of this host");
  return [args](Context& ctx) {
    LibnlFabricProbe probe;
    return run_doctor(ctx, probe, *args);
  };
}

}  // namespace rnvme
