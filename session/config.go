package session

import (
	"fmt"
	"net"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// Config bounds the sessions of a server. Zero fields take the defaults
// below; `pulsewire serve` sets them from its flags.
type Config struct {
	// ScanDuration is the capture time a scan measures, counted from the
	// first frame with a face (see scanEnd).
	ScanDuration time.Duration
	// ScanMaxDuration is the longest a scan goes on, from the same frame,
	// when its pulse is still too faint to answer at ScanDuration (see
	// scanResult), within MaxLength; zero: twice ScanDuration,
	// ScanDuration: never longer.
	ScanMaxDuration time.Duration
	// MaxLength is the longest life of a session, wall-clock time from its
	// opening: a realtime session then ends as on stop, a scan that has
	// not covered ScanDuration is given up.
	MaxLength time.Duration
	// IdleTimeout ends a session that receives no frame for that long,
	// attached or not (a dropped connection may resume within it).
	IdleTimeout time.Duration
	// MaxFrameBytes bounds one WebSocket message, a frame's 8-byte header
	// included.
	MaxFrameBytes int64
	// MaxSessions bounds the sessions open at once on the server (all
	// environments and both transports together, see Capacity).
	MaxSessions int
	// FrameQueue is how many frames may wait for analysis; more are
	// dropped. At 30 frames a second the default holds half a second.
	FrameQueue int
	// WebRTCPublicIP is the IPv4 address clients reach the server's
	// WebRTC at when it sits behind a 1:1 NAT: its host candidates are
	// published with it. Empty: the addresses gathered on.
	WebRTCPublicIP string
	// WebRTCPorts is the range WebRTC takes its UDP ports from, for a
	// firewall to open; zero: any port.
	WebRTCPorts UDPPorts
}

// Defaults of Config.
const (
	DefaultScanDuration  = 30 * time.Second
	DefaultMaxLength     = 10 * time.Minute
	DefaultIdleTimeout   = 10 * time.Second
	DefaultMaxFrameBytes = 1 << 20
	DefaultMaxSessions   = 100
	DefaultFrameQueue    = 16
)

// openingLimits is the opening rate of an account: at most 2
// session openings in any second and 20 in any minute. The database counts
// them, for every instance of the server together.
var openingLimits = []storage.Rate{{N: 2, Per: time.Second}, {N: 20, Per: time.Minute}}

// Fixed limits of the protocol (PROTOCOL.md).
const (
	// maxFramePixels bounds a JPEG frame: 1280x720. A face is found and
	// its skin averaged as well at 640x480; bigger pictures cost decoding
	// time and give nothing.
	maxFramePixels = 1280 * 720
	// vitalsEvery is the period of the vitals pushes.
	vitalsEvery = time.Second
	// calibrationWindow is how long a session waits for a calibration
	// after its result.
	calibrationWindow = 2 * time.Minute
	// outboundQueue is how many pushes may wait for a slow client; writeTimeout
	// is how long one write may take. A client past either is closed.
	outboundQueue = 16
	writeTimeout  = 5 * time.Second
	// warmUp is the capture a realtime session needs before hr, br and hrv
	// can all be reported: its progress is the fraction of it covered.
	warmUp = 20 * time.Second
	// scanLinger is how long a scan that covers its duration from its
	// first frame, and waits for a late face's, goes without frames before
	// it is measured as it is.
	scanLinger = 2 * time.Second
	// scanRecheck is how often a scan given more time for a faint pulse
	// is analysed again.
	scanRecheck = 5 * time.Second
)

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.ScanDuration, DefaultScanDuration)
	def(&c.ScanMaxDuration, 2*c.ScanDuration)
	def(&c.MaxLength, DefaultMaxLength)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.FrameQueue <= 0 {
		c.FrameQueue = DefaultFrameQueue
	}
	return c
}

// Validate reports a configuration that cannot work: a scan longer than a
// session may last or whose longest is under its duration, a frame limit
// below a frame header, an empty port range or a public address that is
// not one. A scan given more time for a faint pulse may outlast the
// session: it is then measured as it is.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.ScanDuration >= c.MaxLength:
		return fmt.Errorf("the scan duration (%v) must be shorter than the longest session (%v)", c.ScanDuration, c.MaxLength)
	case c.ScanMaxDuration < c.ScanDuration:
		return fmt.Errorf("the longest scan (%v) must be at least the scan duration (%v)", c.ScanMaxDuration, c.ScanDuration)
	case c.MaxLength > dsp.MaxSpan:
		return fmt.Errorf("the longest session (%v) must be at most the longest capture analysed (%v)", c.MaxLength, dsp.MaxSpan)
	case c.MaxFrameBytes <= frameHeaderBytes:
		return fmt.Errorf("the frame limit (%d bytes) leaves no room for a picture", c.MaxFrameBytes)
	case c.WebRTCPorts != (UDPPorts{}) && (c.WebRTCPorts.Min == 0 || c.WebRTCPorts.Max < c.WebRTCPorts.Min):
		return fmt.Errorf("the WebRTC port range %d-%d is empty", c.WebRTCPorts.Min, c.WebRTCPorts.Max)
	case c.WebRTCPublicIP != "":
		// The candidates are UDP4: an IPv6 address would never be used.
		ip := net.ParseIP(c.WebRTCPublicIP)
		if ip == nil || ip.To4() == nil || ip.IsUnspecified() || ip.IsLoopback() {
			return fmt.Errorf("the WebRTC public address %q is not a usable IPv4 address", c.WebRTCPublicIP)
		}
	}
	return nil
}
