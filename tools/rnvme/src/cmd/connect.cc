#include "cmd/commands.h"

namespace rnvme {

Status run_connect(Context& ctx, const ConnectArgs& args) {
  if (args.quiet) ctx.out.set_quiet(true);
  for (const auto& n : args.opts.ignored) ctx.out.note(n);
  ConnectOptions opts = args.opts;
  if (auto st = apply_config_json(ctx, args.config_json, opts); !st) return st;
  auto r = connect_controller(ctx, opts);
  if (!r) return r.error();
  ctx.out.print(*r);
  return Ok{};
}

Action setup_connect(CLI::App& sub) {
  auto args = std::make_shared<ConnectArgs>();
  add_connect_options(sub, args->opts);
  sub.add_option("-J,--config", args->config_json,
                 "nvme-cli's JSON configuration: options not given here come from this "
                 "controller's port there; 'none' for no file")
      ->capture_default_str();
  add_quiet_option(sub, args->quiet);
  return [args](Context& ctx) { return run_connect(ctx, *args); };
}

}  // namespace rnvme
