package session

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// iceScope is where a server's WebRTC gathers its host candidates. It
// follows the listener the session routes are served on: a client that
// reached the listener can reach the same address over UDP, and a server
// kept on loopback stays there.
type iceScope struct {
	// loopback keeps ICE on the loopback interface, as the default
	// listeners and the tests need.
	loopback bool
	// ip is the only address gathered on; nil means every non-loopback
	// IPv4 address of the machine.
	ip net.IP
}

// scopeOf is the ICE scope of a listener on ip: loopback for a loopback
// address (and for none, so that a server given no listener stays on
// loopback), that address for a specific one, and every non-loopback IPv4
// address for an unspecified one (0.0.0.0 or ::).
func scopeOf(ip net.IP) iceScope {
	switch {
	case ip == nil || ip.IsLoopback():
		return iceScope{loopback: true}
	case ip.IsUnspecified():
		return iceScope{}
	}
	return iceScope{ip: ip}
}

// keeps reports whether ICE may gather a host candidate on ip. Link-local
// addresses are left out of the unspecified scope: they change on every
// boot and a phone on the LAN has its routable address to use.
func (sc iceScope) keeps(ip net.IP) bool {
	switch {
	case sc.loopback:
		return ip.IsLoopback()
	case sc.ip != nil:
		return ip.Equal(sc.ip)
	}
	return ip.To4() != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast()
}

// networks are the candidate networks of the scope: UDP over the family
// of its address, UDP4 otherwise (browsers and pion meet on it).
func (sc iceScope) networks() []webrtc.NetworkType {
	if sc.ip != nil && sc.ip.To4() == nil {
		return []webrtc.NetworkType{webrtc.NetworkTypeUDP6}
	}
	return []webrtc.NetworkType{webrtc.NetworkTypeUDP4}
}

// settings are pion's settings for the scope: host candidates only (no
// STUN, no TURN, no mDNS: the server's address is known), on the scope's
// addresses, from cfg's UDP ports, published as cfg's public IP when the
// server sits behind a 1:1 NAT. A loopback scope ignores the public IP:
// rewriting a loopback candidate would name an address nothing listens on.
func (sc iceScope) settings(cfg Config) (webrtc.SettingEngine, error) {
	var se webrtc.SettingEngine
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes(sc.networks())
	se.SetIPFilter(sc.keeps)
	if sc.loopback {
		// pion leaves the loopback interface out unless told.
		se.SetIncludeLoopbackCandidate(true)
		se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	}
	if cfg.WebRTCPorts != (UDPPorts{}) {
		if err := se.SetEphemeralUDPPortRange(cfg.WebRTCPorts.Min, cfg.WebRTCPorts.Max); err != nil {
			return se, fmt.Errorf("webrtc ports: %w", err)
		}
	}
	if cfg.WebRTCPublicIP != "" && !sc.loopback {
		// A host candidate is replaced by the public address: what
		// SettingEngine.SetNAT1To1IPs did with ICECandidateTypeHost,
		// which pion now deprecates for these rules.
		err := se.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{
			External:        []string{cfg.WebRTCPublicIP},
			AsCandidateType: webrtc.ICECandidateTypeHost,
			Mode:            webrtc.ICEAddressRewriteReplace,
		})
		if err != nil {
			return se, fmt.Errorf("webrtc public address: %w", err)
		}
	}
	return se, nil
}

// UDPPorts is a range of UDP ports, both ends included, that WebRTC takes
// its ports from: one per session and address gathered on. The zero value
// means any port the system gives. As a flag.Value it reads "50000-50100".
type UDPPorts struct{ Min, Max uint16 }

func (p UDPPorts) String() string {
	if p == (UDPPorts{}) {
		return ""
	}
	return fmt.Sprintf("%d-%d", p.Min, p.Max)
}

// Set reads a range "min-max" (an empty one is the zero value).
func (p *UDPPorts) Set(s string) error {
	if s == "" {
		*p = UDPPorts{}
		return nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return fmt.Errorf("%q is not a port range such as 50000-50100", s)
	}
	low, err1 := strconv.ParseUint(lo, 10, 16)
	high, err2 := strconv.ParseUint(hi, 10, 16)
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Errorf("%q is not a port range such as 50000-50100", s)
	case low == 0 || high < low:
		return fmt.Errorf("port range %q must run from 1 up to at most 65535, low end first", s)
	}
	*p = UDPPorts{Min: uint16(low), Max: uint16(high)}
	return nil
}
