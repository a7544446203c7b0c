#include "core/connect_cli.h"

#include <fmt/format.h>

namespace rnvme {

void add_connect_options(CLI::App& app, ConnectOptions& opts, std::optional<Error>* refused) {
  for (const auto& spec : option_table()) {
    std::string names = spec.short_name ? fmt::format("-{},--{}", spec.short_name, spec.long_name)
                                        : fmt::format("--{}", spec.long_name);
    if (!spec.alias.empty()) names += fmt::format(",--{}", spec.alias);
    const OptionSpec* s = &spec;
    if (spec.is_flag()) {
      app.add_flag_callback(names, [&opts, s] { (void)set_option(opts, *s, ""); },
                            std::string(spec.help));
      continue;
    }
    app.add_option_function<std::string>(
           names,
           [&opts, s, refused](const std::string& v) {
             if (auto st = set_option(opts, *s, v); !st) {
               if (refused && !*refused) *refused = st.error();
               throw CLI::ValidationError(
                   fmt::format("--{}", s->long_name),
                   st.error().fix.empty() ? st.error().message
                                          : st.error().message + "; " + st.error().fix);
             }
           },
           std::string(spec.help))
        ->type_name(spec.kind == OptionKind::kInt ? "NUM" : "TEXT");
  }
}

}  // namespace rnvme
