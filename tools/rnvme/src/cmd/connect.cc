#include "cmd/commands.h"

namespace rnvme {

Status run_connect(Context& ctx, const ConnectOptions& opts) {
  for (const auto& n : opts.ignored) ctx.out.note(n);
  auto r = connect_controller(ctx, opts);
  if (!r) return r.error();
  ctx.out.print(*r);
  return Ok{};
}

Action setup_connect(CLI::App& sub) {
  auto opts = std::make_shared<ConnectOptions>();
  add_connect_options(sub, *opts);
  return [opts](Context& ctx) { return run_connect(ctx, *opts); };
}

}  // namespace rnvme
