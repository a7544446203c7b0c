#include "cmd/commands.h"

namespace rnvme {

Status run_connect(Context& ctx, const ConnectArgs& args) {
  if (args.quiet) ctx.out.set_quiet(true);
  for (const auto& n : args.opts.ignored) ctx.out.note(n);
  auto r = connect_controller(ctx, args.opts);
  if (!r) return r.error();
  ctx.out.print(*r);
  return Ok{};
}

Action setup_connect(CLI::App& sub) {
  auto args = std::make_shared<ConnectArgs>();
  add_connect_options(sub, args->opts);
  add_quiet_option(sub, args->quiet);
  return [args](Context& ctx) { return run_connect(ctx, *args); };
}

}  // namespace rnvme
