// The one grammar of the connect options: option_table() bound to a CLI11 parser, used by the
// command line (connect, discover, connect-all) and by each line of discovery.conf.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

#include "core/options.h"
#include "core/result.h"

namespace rnvme {

// Registers the connect options of option_table() on `app`, writing into `opts`.  A value
// set_option() refuses throws CLI::ValidationError; with `refused` that Error is kept there too
// (the first one), for callers that report it as it is.
void add_connect_options(CLI::App& app, ConnectOptions& opts,
                         std::optional<Error>* refused = nullptr);

}  // namespace rnvme
