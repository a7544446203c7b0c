#include "core/attempt.h"

#include <charconv>

namespace rnvme {

std::string AttemptRecord::get(const std::string& key) const {
  auto it = kv.find(key);
  return it == kv.end() ? std::string() : it->second;
}

std::optional<AttemptRecord> parse_attempt_record(std::string_view text) {
  static constexpr std::string_view kPrefix = "rnvme: attempt ";
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  text.remove_prefix(kPrefix.size());
  AttemptRecord r;
  while (!text.empty()) {
    size_t end = text.find(' ');
    std::string_view tok = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (tok.empty()) continue;
    size_t eq = tok.find('=');
    if (eq == 0 || eq == std::string_view::npos) return std::nullopt;  // not our format
    r.kv.emplace(std::string(tok.substr(0, eq)), std::string(tok.substr(eq + 1)));
  }
  // A later format may add keys; one that changes their meaning bumps v.
  if (r.get("v") != "1" || r.get("result").empty() || r.get("kind").empty()) return std::nullopt;
  return r;
}

std::optional<AttemptRecord> find_own_attempt(const std::vector<std::string>& lines, long pid) {
  std::optional<AttemptRecord> found;
  for (const auto& l : lines) {
    auto r = parse_attempt_record(l);
    if (!r || r->get("kind") != "connect") continue;
    const std::string p = r->get("pid");
    long v = -1;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc() || ptr != p.data() + p.size() || v != pid) continue;
    found = std::move(r);
  }
  return found;
}

}  // namespace rnvme
