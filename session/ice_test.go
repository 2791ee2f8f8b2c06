package session

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pulsewire/pulsewire/control"
)

func TestICEScope(t *testing.T) {
	lan, other := net.ParseIP("192.168.1.20"), net.ParseIP("10.0.0.7")
	loop, loop6 := net.ParseIP("127.0.0.1"), net.ParseIP("::1")
	linkLocal, global6 := net.ParseIP("169.254.10.1"), net.ParseIP("2001:db8::5")
	for _, tc := range []struct {
		name    string
		listen  net.IP
		keep    []net.IP
		refuse  []net.IP
		network webrtc.NetworkType
	}{
		{"no listener", nil, []net.IP{loop}, []net.IP{lan, other, global6}, webrtc.NetworkTypeUDP4},
		{"loopback", loop, []net.IP{loop, loop6}, []net.IP{lan, other, linkLocal}, webrtc.NetworkTypeUDP4},
		{"other loopback address", net.ParseIP("127.0.0.2"), []net.IP{loop}, []net.IP{lan}, webrtc.NetworkTypeUDP4},
		{"IPv6 loopback", loop6, []net.IP{loop}, []net.IP{lan}, webrtc.NetworkTypeUDP4},
		{"specific address", lan, []net.IP{lan}, []net.IP{other, loop, linkLocal, global6}, webrtc.NetworkTypeUDP4},
		{"specific IPv6 address", global6, []net.IP{global6}, []net.IP{lan, loop6}, webrtc.NetworkTypeUDP6},
		{"0.0.0.0", net.IPv4zero, []net.IP{lan, other}, []net.IP{loop, loop6, linkLocal, global6}, webrtc.NetworkTypeUDP4},
		{"::", net.IPv6unspecified, []net.IP{lan, other}, []net.IP{loop, loop6, linkLocal, global6}, webrtc.NetworkTypeUDP4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scopeOf(tc.listen)
			for _, ip := range tc.keep {
				if !sc.keeps(ip) {
					t.Errorf("%v refused, want kept", ip)
				}
			}
			for _, ip := range tc.refuse {
				if sc.keeps(ip) {
					t.Errorf("%v kept, want refused", ip)
				}
			}
			if got := sc.networks(); !slices.Equal(got, []webrtc.NetworkType{tc.network}) {
				t.Errorf("networks %v, want %v", got, tc.network)
			}
		})
	}
}

// gather returns the host candidates pion gathers for an offer with the
// scope's settings. Gathering binds UDP ports and sends nothing.
func gather(t *testing.T, sc iceScope, cfg Config) []webrtc.ICECandidate {
	t.Helper()
	se, err := sc.settings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc, offer := dataOnlyPeer(t, se)
	defer pc.Close()
	var found []webrtc.ICECandidate
	done := make(chan struct{})
	pc.OnICECandidate(func(c *webrtc.ICECandidate) {
		if c == nil {
			close(done)
			return
		}
		found = append(found, *c)
	})
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(gatherTimeout):
		t.Fatal("gathering did not complete")
	}
	return found
}

// lanAddresses are the machine's addresses that the unspecified scope
// gathers on: non-loopback, non-link-local IPv4 of interfaces that are up.
func lanAddresses(t *testing.T) []string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && scopeOf(net.IPv4zero).keeps(n.IP) {
				ips = append(ips, n.IP.String())
			}
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

func TestICEGathering(t *testing.T) {
	addresses := func(cs []webrtc.ICECandidate) []string {
		var ips []string
		for _, c := range cs {
			if c.Typ != webrtc.ICECandidateTypeHost {
				t.Errorf("candidate %v is not a host candidate", c)
			}
			ips = append(ips, c.Address)
		}
		slices.Sort(ips)
		return slices.Compact(ips)
	}
	t.Run("loopback", func(t *testing.T) {
		// The public address is ignored on loopback.
		got := addresses(gather(t, scopeOf(nil), Config{WebRTCPublicIP: "203.0.113.7"}))
		if !slices.Equal(got, []string{"127.0.0.1"}) {
			t.Errorf("candidates on %v, want 127.0.0.1 only", got)
		}
	})
	lan := lanAddresses(t)
	if len(lan) == 0 {
		t.Skip("no non-loopback IPv4 address on this machine")
	}
	t.Run("every LAN address", func(t *testing.T) {
		if got := addresses(gather(t, scopeOf(net.IPv4zero), Config{})); !slices.Equal(got, lan) {
			t.Errorf("candidates on %v, want %v", got, lan)
		}
	})
	t.Run("one address", func(t *testing.T) {
		if got := addresses(gather(t, scopeOf(net.ParseIP(lan[0])), Config{})); !slices.Equal(got, lan[:1]) {
			t.Errorf("candidates on %v, want %v", got, lan[:1])
		}
	})
	t.Run("public address and port range", func(t *testing.T) {
		ports := UDPPorts{Min: 50000, Max: 50009}
		cs := gather(t, scopeOf(net.IPv4zero), Config{WebRTCPublicIP: "203.0.113.7", WebRTCPorts: ports})
		if got := addresses(cs); !slices.Equal(got, []string{"203.0.113.7"}) {
			t.Errorf("candidates on %v, want 203.0.113.7 only", got)
		}
		for _, c := range cs {
			if c.Port < ports.Min || c.Port > ports.Max {
				t.Errorf("candidate port %d outside %v", c.Port, ports)
			}
		}
	})
}

// TestWHIPAnswerOnTheListener: a server whose listener takes every address
// answers an offer with candidates on the machine's LAN addresses, not on
// loopback.
func TestWHIPAnswerOnTheListener(t *testing.T) {
	t.Parallel()
	lan := lanAddresses(t)
	if len(lan) == 0 {
		t.Skip("no non-loopback IPv4 address on this machine")
	}
	e := newTestEnvOn(t, control.Test, Config{}, &testClock{}, net.IPv4zero)
	value, _ := e.mint(realtimeOnce())
	res, answer := e.whipPost("?chain=realtime", "application/sdp", newWHIPClient(t).offer(t), value)
	if res.StatusCode != 201 {
		t.Fatalf("POST: %d", res.StatusCode)
	}
	var got []string
	for line := range strings.Lines(answer) {
		// a=candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type>
		if f := strings.Fields(strings.TrimPrefix(line, "a=candidate:")); strings.HasPrefix(line, "a=candidate:") && len(f) > 4 {
			got = append(got, f[4])
		}
	}
	slices.Sort(got)
	if got = slices.Compact(got); !slices.Equal(got, lan) {
		t.Fatalf("answer candidates on %v, want %v", got, lan)
	}
}

func TestUDPPorts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     UDPPorts
		ok       bool
	}{
		{"range", "50000-50100", UDPPorts{50000, 50100}, true},
		{"one port", "50000-50000", UDPPorts{50000, 50000}, true},
		{"whole span", "1-65535", UDPPorts{1, 65535}, true},
		{"empty is any port", "", UDPPorts{}, true},
		{"one number", "50000", UDPPorts{}, false},
		{"port zero", "0-100", UDPPorts{}, false},
		{"past 65535", "1-65536", UDPPorts{}, false},
		{"reversed", "50100-50000", UDPPorts{}, false},
		{"not numbers", "a-b", UDPPorts{}, false},
		{"spaces", "50000 - 50100", UDPPorts{}, false},
		{"negative", "-1-5", UDPPorts{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p UDPPorts
			err := p.Set(tc.in)
			if (err == nil) != tc.ok || p != tc.want {
				t.Fatalf("Set(%q) = %v, %v; want %v, ok %v", tc.in, p, err, tc.want, tc.ok)
			}
			if tc.ok && p.String() != tc.in {
				t.Errorf("String() = %q, want %q", p.String(), tc.in)
			}
		})
	}
}

func FuzzUDPPorts(f *testing.F) {
	for _, s := range []string{"50000-50100", "", "1-65535", "0-1", "5-", "-", "65535-65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p UDPPorts
		if p.Set(s) != nil {
			return
		}
		if p != (UDPPorts{}) && (p.Min == 0 || p.Max < p.Min) {
			t.Fatalf("Set(%q) accepted the empty range %v", s, p)
		}
		var q UDPPorts
		if err := q.Set(p.String()); err != nil || q != p {
			t.Fatalf("%v does not read back: %v, %v", p, q, err)
		}
	})
}

func TestConfigWebRTC(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"none", Config{}, true},
		{"public IPv4", Config{WebRTCPublicIP: "203.0.113.7"}, true},
		{"public IPv6", Config{WebRTCPublicIP: "2001:db8::1"}, false},
		{"unspecified", Config{WebRTCPublicIP: "0.0.0.0"}, false},
		{"loopback", Config{WebRTCPublicIP: "127.0.0.1"}, false},
		{"host name", Config{WebRTCPublicIP: "example.com"}, false},
		{"ports", Config{WebRTCPorts: UDPPorts{50000, 50100}}, true},
		{"reversed ports", Config{WebRTCPorts: UDPPorts{50100, 50000}}, false},
		{"port zero", Config{WebRTCPorts: UDPPorts{0, 10}}, false},
		{"the longest capture analysed", Config{MaxLength: 10 * time.Minute}, true},
		{"a session longer than that", Config{MaxLength: 10*time.Minute + time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
