#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/hostid.h"
#include "sys/host_identity.h"

namespace rnvme {
namespace {

HostCheck read_files(Context& ctx) {
  return check_host_identity(read_host_identity(ctx.fs));
}

}  // namespace

Status run_hostnqn(Context& ctx, const HostnqnArgs& args) {
  if (args.action == "show") {
    ctx.out.print(read_files(ctx));
    return Ok{};
  }
  if (args.action == "check") {
    HostCheck hc = read_files(ctx);
    ctx.out.print(hc);
    for (const auto& p : hc.problems)
      if (p.fatal) {
        Error e = make_error(ErrorCode::kConfig, fmt::format("{}: {}", p.source, p.problem), {}, p.fix);
        e.reason = std::string(failure_class_name(FailureClass::kHostIdentity));
        return e;
      }
    return Ok{};
  }
  if (args.action == "generate") {
    HostCheck existing = read_files(ctx);
    if (!args.force && (ctx.fs.exists(std::string(kHostnqnPath)) || ctx.fs.exists(std::string(kHostidPath))))
      return make_error(ErrorCode::kConfig, "host identity files already exist",
                        "replacing them changes how every target sees this host",
                        "pass --force to replace them, or 'rnvme hostnqn check' to validate them");
    // Keep a hostnqn that already carries a UUID; otherwise libnvme makes one (the machine's
    // DMI UUID, as `nvme gen-hostnqn`), which rnvme checks before writing it.
    std::string uuid;
    if (auto u = uuid_from_hostnqn(existing.hostnqn)) {
      uuid = *u;
    } else {
      auto generated = ctx.generate_hostnqn();
      if (!generated) return generated.error();
      if (auto why = generated_hostnqn_problem(*generated))
        return make_error(ErrorCode::kConfig,
                          fmt::format("libnvme generated host NQN '{}'", *generated), *why,
                          fmt::format("write a host NQN of your own to {} (e.g. '{}' followed by "
                                      "the output of uuidgen), then run 'rnvme hostnqn generate "
                                      "--force' to pair a host ID with it",
                                      kHostnqnPath, kUuidNqnPrefix));
      uuid = *uuid_from_hostnqn(*generated);
    }
    HostCheck hc;
    hc.hostnqn = hostnqn_for_uuid(uuid);
    hc.hostid = uuid;
    hc.hostnqn_source = std::string(kHostnqnPath);
    hc.hostid_source = std::string(kHostidPath);
    // The pair is replaced together (and /etc/nvme made if missing): a failure leaves the old
    // pair, never a new hostnqn beside an old hostid.
    if (!ctx.dry_run) {
      if (auto st = ctx.fs.replace_files({{std::string(kHostnqnPath), hc.hostnqn + "\n"},
                                          {std::string(kHostidPath), hc.hostid + "\n"}});
          !st)
        return st;
    }
    ctx.out.print(hc);
    return Ok{};
  }
  return make_error(ErrorCode::kUsage, fmt::format("unknown hostnqn action '{}'", args.action), {},
                    "use show, generate or check");
}

Action setup_hostnqn(CLI::App& sub) {
  auto args = std::make_shared<HostnqnArgs>();
  sub.add_option("action", args->action, "show (default), generate or check")
      ->check(CLI::IsMember({"show", "generate", "check"}));
  sub.add_flag("--force", args->force, "generate: replace existing files");
  return [args](Context& ctx) { return run_hostnqn(ctx, *args); };
}

}  // namespace rnvme
