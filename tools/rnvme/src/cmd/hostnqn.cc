#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/hostid.h"
#include "sys/host_identity.h"

namespace rnvme {
namespace {

// As connect would use them: a missing or blank host NQN file gives way to libnvme's generated
// host NQN, as nvme-cli's show-hostnqn prints it.
HostCheck read_files(Context& ctx) { return check_host_identity(read_host_identity(ctx)); }

bool blank(const std::optional<std::string>& file) { return !file || trim(*file).empty(); }

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
    // The files as they are: a missing or blank one is no identity to protect.  `rnvme hostnqn
    // generate > /etc/nvme/hostnqn` (nvme-cli's habit with gen-hostnqn) has the shell empty the
    // file before this reads it: it is written here all the same, and the redirected output goes
    // to the file replaced, not into the new one.
    const HostIdentityInput files = read_host_identity(ctx.fs);
    const bool nqn_blank = blank(files.hostnqn), id_blank = blank(files.hostid);
    const HostCheck existing = check_host_identity(files);
    if (!args.force && !nqn_blank && !id_blank)
      return make_error(ErrorCode::kConfig, "host identity files already exist",
                        "replacing them changes how every target sees this host",
                        "pass --force to replace them, or 'rnvme hostnqn check' to validate them");
    // Without --force a half that is there is kept, so it must be one connect can use.
    const std::string kept_id = !args.force && !id_blank ? existing.hostid : std::string();
    if (!kept_id.empty() && !is_valid_uuid(kept_id))
      return make_error(ErrorCode::kConfig,
                        fmt::format("{} holds '{}', which is not a UUID", kHostidPath, kept_id),
                        "without --force generate keeps the host ID that is there",
                        "pass --force to replace both files");
    // Keep a hostnqn that already carries a UUID; otherwise libnvme makes one (the machine's
    // DMI UUID, as `nvme gen-hostnqn`), which rnvme checks before writing it.
    std::string uuid;
    if (auto u = nqn_blank ? std::nullopt : uuid_from_hostnqn(existing.hostnqn)) {
      uuid = *u;
    } else if (!nqn_blank && !args.force) {
      return make_error(ErrorCode::kConfig,
                        fmt::format("{} holds '{}', which carries no UUID to pair a host ID with",
                                    kHostnqnPath, existing.hostnqn),
                        "without --force generate keeps the host NQN that is there",
                        "pass --force to replace both files");
    } else {
      auto generated = ctx.generate_hostnqn();
      if (!generated) return generated.error();
      // a random one (no DMI product UUID) is fine here: it is written, and stays
      if (auto why = generated_hostnqn_problem(generated->nqn))
        return make_error(ErrorCode::kConfig,
                          fmt::format("libnvme generated host NQN '{}'", generated->nqn), *why,
                          fmt::format("write a host NQN of your own to {} (e.g. '{}' followed by "
                                      "the output of uuidgen), then run 'rnvme hostnqn generate "
                                      "--force' to pair a host ID with it",
                                      kHostnqnPath, kUuidNqnPrefix));
      uuid = *uuid_from_hostnqn(generated->nqn);
    }
    HostCheck hc;
    hc.hostnqn = hostnqn_for_uuid(uuid);
    hc.hostid = kept_id.empty() ? uuid : kept_id;
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
