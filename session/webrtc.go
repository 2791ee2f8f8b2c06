package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
)

// webrtcAPI makes the peer connections of WHIP sessions: VP8 video in
// only, a data channel, host candidates over UDP in the server's ICE scope
// (ice.go, which says why no mDNS, STUN or TURN; PROTOCOL.md says what a
// client may count on).
type webrtcAPI struct{ api *webrtc.API }

// vitalsLabel names the data channel the client creates for the session's
// messages.
const vitalsLabel = "vitals"

func newWebRTCAPI(scope iceScope, cfg Config) (*webrtcAPI, error) {
	m := &webrtc.MediaEngine{}
	err := m.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType: webrtc.MimeTypeVP8, ClockRate: 90000,
			RTCPFeedback: []webrtc.RTCPFeedback{{Type: "goog-remb"}, {Type: "ccm", Parameter: "fir"}, {Type: "nack"}, {Type: "nack", Parameter: "pli"}},
		},
		PayloadType: 96,
	}, webrtc.RTPCodecTypeVideo)
	if err != nil {
		return nil, fmt.Errorf("webrtc codecs: %w", err)
	}
	// NACKs ask for lost packets again, so that a loss does not break
	// the VP8 frames ffmpeg decodes; receiver reports let the browser
	// adapt its rate.
	ir := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(m, ir); err != nil {
		return nil, fmt.Errorf("webrtc interceptors: %w", err)
	}
	se, err := scope.settings(cfg)
	if err != nil {
		return nil, err
	}
	return &webrtcAPI{api: webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(ir), webrtc.WithSettingEngine(se))}, nil
}

// connect answers a session's offer and wires its peer connection: the
// video track into the session, the vitals data channel as its peer. It
// returns the answer, with every candidate (no trickle).
func (s *Server) connect(sess *session, offer string) (string, error) {
	pc, err := s.webrtc.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return "", fmt.Errorf("peer connection: %w", err)
	}
	var channel atomic.Pointer[webrtc.DataChannel]
	go func() {
		// The session's end ends the connection, whoever ends it, once
		// the data channel has sent what it holds (its last message says
		// how the session ended: WebRTC has no close status).
		<-sess.done
		if dc := channel.Load(); dc != nil {
			deadline := time.Now().Add(writeTimeout)
			for dc.BufferedAmount() > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
		}
		pc.Close()
	}()
	var once sync.Once
	pc.OnTrack(func(track *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if track.Kind() != webrtc.RTPCodecTypeVideo {
			return
		}
		once.Do(func() { go s.receiveVideo(sess, pc, track) })
	})
	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		if dc.Label() != vitalsLabel {
			return
		}
		channel.Store(dc)
		p := &dataChannelPeer{dc: dc, pc: pc}
		dc.OnOpen(func() { sess.do(command{kind: attach, peer: p}) })
		dc.OnMessage(func(msg webrtc.DataChannelMessage) {
			m, err := parseClientMessage(msg.Data)
			cmd, ok := commandOf(m)
			if err != nil || !ok {
				sess.log.Info("malformed data channel message")
				return
			}
			sess.do(cmd)
		})
	})
	pc.OnConnectionStateChange(func(state webrtc.PeerConnectionState) {
		if state == webrtc.PeerConnectionStateFailed || state == webrtc.PeerConnectionStateClosed {
			// Like a dropped WebSocket: frames stop, and the session
			// ends when it is idle.
			sess.log.Info("peer connection " + state.String())
		}
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", fmt.Errorf("%w: %w", errOffer, err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOffer, err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		return "", fmt.Errorf("local description: %w", err)
	}
	select {
	case <-gathered:
	case <-time.After(gatherTimeout):
		return "", errors.New("ICE gathering did not complete")
	}
	return pc.LocalDescription().SDP, nil
}

// gatherTimeout bounds ICE gathering of host candidates, which takes
// milliseconds.
const gatherTimeout = 5 * time.Second

// receiveVideo decodes a session's video track and feeds what its face
// tracker sees to the session: RTP, reassembled into whole VP8 frames
// (vp8frames.go), piped into ffmpeg (media.DecodeLive), whose frames the
// tracker observes here, so that the session's loop only adds
// observations. A frame's capture time is its RTP timestamp.
func (s *Server) receiveVideo(sess *session, pc *webrtc.PeerConnection, track *webrtc.TrackRemote) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-sess.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	decoded := make(chan error, 1)
	go func() {
		tracker := face.NewTracker(s.cascade)
		_, err := media.DecodeLive(ctx, pr, s.liveOptions(), func(f media.Frame) error {
			sess.offer(frame{observed: true, obs: tracker.Observe(f.Image), at: f.Time})
			return nil
		})
		pr.CloseWithError(io.ErrClosedPipe) // a writer still writing stops
		decoded <- err
	}()
	frames := newVP8Frames(pw)
	var asked time.Time
	counted := 0 // frames.skipped in the metrics
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			break
		}
		if err := frames.push(pkt); err != nil {
			break
		}
		if frames.skipped > counted {
			sess.counted.FramesLost(frames.skipped - counted)
			counted = frames.skipped
		}
		// ffmpeg can start only with a key frame, and after a lost
		// frame only a key frame decodes cleanly: ask for one, again
		// each keyFrameRetry while it does not come.
		if frames.wantKey && time.Since(asked) > keyFrameRetry {
			asked = time.Now()
			pc.WriteRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: uint32(track.SSRC())}})
		}
	}
	if frames.skipped > 0 {
		sess.log.Info("video frames lost on the network", "frames", frames.skipped)
	}
	pw.Close()
	if err := <-decoded; err != nil && ctx.Err() == nil {
		sess.log.Info("video decoding ended", "err", err)
	}
}

// keyFrameRetry spaces the requests for a key frame: a browser's encoder
// sends one within a round trip, and asking faster only costs bits.
const keyFrameRetry = time.Second

// liveOptions bound the decode of one session's video: as long as a
// session may last, at up to 60 frames a second and 8 Mbit/s.
func (s *Server) liveOptions() media.VideoOptions {
	seconds := s.cfg.MaxLength.Seconds()
	return media.VideoOptions{
		MaxFrames: int(60 * seconds),
		MaxBytes:  int64(1e6 * seconds),
		Timeout:   s.cfg.MaxLength + time.Minute,
	}
}

// dataChannelPeer sends a session's messages on the vitals data channel.
// The channel queues in its SCTP buffer; a client that lets it fill is too
// slow.
type dataChannelPeer struct {
	dc *webrtc.DataChannel
	pc *webrtc.PeerConnection

	mu     sync.Mutex // protects closed
	closed bool
}

// maxBuffered is how much may wait on a data channel: 16 vitals messages
// and then some.
const maxBuffered = 64 << 10

func (p *dataChannelPeer) resumable() bool { return false }

func (p *dataChannelPeer) send(msg []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.dc.BufferedAmount() > maxBuffered || p.dc.SendText(string(msg)) != nil {
		p.closed = true
		go p.pc.Close()
		return false
	}
	return true
}

// close stops sending. The session closes only a peer it leaves, and the
// peer connection closes when the session has ended (Server.connect).
func (p *dataChannelPeer) close(websocket.StatusCode, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}
