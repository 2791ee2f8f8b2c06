package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// errOffer is an offer the server cannot take (answered 400).
var errOffer = errors.New("unusable offer")

// checkOffer reads an SDP offer: it must describe a video stream that may be
// VP8 and an application (data channel) section, and carry what the
// connection itself needs: ICE credentials (ice-ufrag and ice-pwd) and a
// DTLS fingerprint, at the session level or in a media section. Everything
// the answer depends on is checked here, before the token is looked at, so
// that a bad offer is the client's 400 and never spends a session.
func checkOffer(offer string) error {
	desc := webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}
	parsed, err := desc.Unmarshal()
	if err != nil {
		return fmt.Errorf("%w: %w", errOffer, err)
	}
	var video, data bool
	for _, md := range parsed.MediaDescriptions {
		switch md.MediaName.Media {
		case "video":
			for _, a := range md.Attributes {
				if a.Key == "rtpmap" && strings.Contains(strings.ToUpper(a.Value), " VP8/90000") {
					video = true
				}
			}
		case "application":
			data = true
		}
	}
	switch {
	case !video:
		return fmt.Errorf("%w: no VP8 video", errOffer)
	case !data:
		return fmt.Errorf("%w: no data channel", errOffer)
	}
	return checkTransport(parsed)
}

// checkTransport checks the ICE credentials and the DTLS fingerprint of an
// offer. A value counts at the session level or in any media section; a
// fingerprint is a hash function name and a value.
func checkTransport(d *sdp.SessionDescription) error {
	for _, need := range []string{"ice-ufrag", "ice-pwd", "fingerprint"} {
		v, ok := attribute(d, need)
		switch {
		case !ok || strings.TrimSpace(v) == "":
			return fmt.Errorf("%w: no %s", errOffer, need)
		case need == "fingerprint" && len(strings.Fields(v)) != 2:
			return fmt.Errorf("%w: the fingerprint must be a hash function and a value", errOffer)
		}
	}
	return nil
}

// attribute is the value of the session attribute key, or else of the
// first media section that has it.
func attribute(d *sdp.SessionDescription, key string) (string, bool) {
	if v, ok := d.Attribute(key); ok {
		return v, true
	}
	for _, md := range d.MediaDescriptions {
		if v, ok := md.Attribute(key); ok {
			return v, true
		}
	}
	return "", false
}
