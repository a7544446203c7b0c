// Which priority a ToS lands on (DCB APP table, trust, VLAN egress-qos-map): map_tos(),
// lossless_tos(), tos_to_skb_priority().
#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

int tos_to_skb_priority(int tos) {
  // TC_PRIO_BESTEFFORT 0, BULK 2, INTERACTIVE_BULK 4, INTERACTIVE 6, per pair of IPTOS_TOS bits.
  static const int kTos2Prio[16] = {0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4};
  return kTos2Prio[(tos & 0x1e) >> 1];
}

namespace {

// PCP trust: what priority frames get without DSCP classification.
void pcp_priority(TosMapping& m, int tos, const std::map<int, int>* vlan_egress, std::string_view why) {
  if (!vlan_egress) {
    m.priority = 0;
    m.how = fmt::format("{}: untagged RoCE frames carry no PCP and land on priority 0", why);
    return;
  }
  const int skb = tos_to_skb_priority(tos);
  auto it = vlan_egress->find(skb);
  m.priority = it == vlan_egress->end() ? 0 : it->second & 7;
  m.how = fmt::format("{}: the VLAN's egress-qos-map gives skb priority {} (of tos {}) PCP {}{}", why, skb,
                      tos, *m.priority, it == vlan_egress->end() ? " (unmapped)" : "");
}

}  // namespace

TosMapping map_tos(const DcbState& dcb, int tos, const std::map<int, int>* vlan_egress) {
  TosMapping m;
  m.dscp = (tos >> 2) & 0x3f;
  if (dcb.support != DcbState::kPresent) {
    m.how = "no DCB on the netdev: no priority mapping to read";
    return m;
  }
  const bool trust_reported = !dcb.trust.empty();
  if (trust_reported && std::find(dcb.trust.begin(), dcb.trust.end(), 5) == dcb.trust.end()) {
    pcp_priority(m, tos, vlan_egress, "the trust table does not include DSCP");
    return m;
  }
  bool dscp_trust = trust_reported;
  for (const auto& a : dcb.apps) {
    if (a.selector != 5) continue;  // IEEE_8021QAZ_APP_SEL_DSCP
    dscp_trust = true;
    if (a.protocol == m.dscp) {
      m.priority = a.priority;
      m.how = fmt::format("DSCP {} -> priority {} (DCB APP table, DSCP trust)", m.dscp, a.priority);
      return m;
    }
  }
  if (dscp_trust) {
    m.how = fmt::format("DSCP trust, but the APP table has no entry for DSCP {}: the device's "
                        "default decides (mlx5: DSCP/8 = {})",
                        m.dscp, m.dscp / 8);
    return m;
  }
  pcp_priority(m, tos, vlan_egress, "PCP trust (no DSCP entries in the APP table, no trust table)");
  return m;
}

LosslessTos lossless_tos(const DcbState& dcb) {
  LosslessTos r;
  if (dcb.support != DcbState::kPresent) {
    r.how = dcb.support == DcbState::kAbsent ? "the netdev has no DCB: no lossless class"
                                             : "DCB could not be read" + (dcb.error.empty() ? std::string()
                                                                                            : ": " + dcb.error);
    return r;
  }
  if (!dcb.pfc_en) {
    r.how = "no priority has PFC: no lossless class";
    return r;
  }
  for (const auto& a : dcb.apps) {
    if (a.selector != 5 || !(dcb.pfc_en & (1u << (a.priority & 7)))) continue;
    const TosMapping m = map_tos(dcb, a.protocol << 2);
    if (m.priority && *m.priority == a.priority) {
      r.tos = a.protocol << 2;
      r.how = fmt::format("{}, which has PFC", m.how);
      return r;
    }
  }
  r.how = fmt::format("PFC on {} but no DSCP-trusted APP entry maps a DSCP to it: the ToS does not "
                      "choose the class (PCP trust)",
                      prio_list(dcb.pfc_en));
  return r;
}

}  // namespace rnvme
