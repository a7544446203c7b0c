#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/device_arg.h"
#include "core/discovery.h"

namespace rnvme {

Status run_discover(Context& ctx, DiscoverArgs args) {
  if (args.quiet) ctx.out.set_quiet(true);
  if (args.opts.nqn.empty()) args.opts.nqn = std::string(kDiscoveryNqn);
  for (const auto& n : args.opts.ignored) ctx.out.note(n);
  std::string device;  // the discovery controller (nvmeN)
  bool ours = false;  // connected here, so removed again unless --persistent
  if (!args.device.empty()) {
    // nvme-cli's spellings: nvme3 or /dev/nvme3
    auto name = controller_arg(args.device);
    if (!name) return name.error();
    device = std::move(*name);
  } else {
    if (auto st = apply_config_json(ctx, args.config_json, args.opts); !st) return st;
    // nvme-cli's keep-alive for a discovery controller that stays (NVMF_DEF_DISC_TMO): a target
    // that applies its discovery KATO would drop one without.  A value given (-k, config.json)
    // is kept; -k 0 and -1 are nvme-cli's "not given" (set_option() leaves them unset).
    if (args.persistent && !args.opts.keep_alive_tmo) args.opts.keep_alive_tmo = kPersistentDiscoveryKato;
    auto c = connect_controller(ctx, args.opts);
    if (!c) return c.error();
    if (c->dry_run) {
      ctx.out.print(*c);
      return Ok{};
    }
    device = c->device;
    // A discovery controller with its own (unique) NQN that is already connected is used and
    // left alone, as nvme-cli does with a persistent one.
    ours = !c->already_connected;
  }
  auto bytes = ctx.dlog.read(device);
  // The discovery controller was only needed for the log page.
  if (ours && !args.persistent) {
    if (auto st = delete_controller(ctx, device); !st && ctx.verbose) ctx.out.note(st.error().message);
  }
  if (!bytes) return bytes.error();
  auto log = decode_discovery_log(*bytes);
  if (!log) return log.error();
  ctx.out.print(*log);
  return Ok{};
}

Action setup_discover(CLI::App& sub) {
  auto args = std::make_shared<DiscoverArgs>();
  add_connect_options(sub, args->opts);
  sub.add_option("-J,--config", args->config_json,
                 "nvme-cli's JSON configuration: options not given here come from this discovery "
                 "controller's port there; 'none' for no file")
      ->capture_default_str();
  sub.add_option("--device", args->device, "use an existing discovery controller (nvmeN or /dev/nvmeN)");
  sub.add_flag("-p,--persistent", args->persistent, "keep the discovery controller connected");
  add_quiet_option(sub, args->quiet);
  return [args](Context& ctx) { return run_discover(ctx, *args); };
}

}  // namespace rnvme
