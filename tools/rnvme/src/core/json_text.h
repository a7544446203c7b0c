// The one way the tool turns JSON into text (stdout documents, --dump-config, the tune state
// file). Strings in it come from targets and the kernel (subsystem NQNs, sysfs values, kernel
// log lines) and are untrusted: they need not be UTF-8, and nlohmann's default dump() throws
// type_error 316 on such bytes. Here every byte sequence that is not UTF-8 becomes U+FFFD, so
// the text is always valid JSON in UTF-8 and rendering never throws.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace rnvme {

// j.dump(indent) with invalid UTF-8 replaced by U+FFFD; indent -1: one line.
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace rnvme
