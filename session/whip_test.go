package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/pion/webrtc/v4/pkg/media/ivfreader"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// vp8Clip makes a synthetic face clip and encodes it as a browser would
// send it: VP8 at about 1.5 Mbit/s with a key frame every 1.25 s, in an
// IVF file. libvpx's real-time
// speed is fixed (a negative -cpu-used): a positive one lets it pick its
// speed by the time frames take, which makes the clip depend on how busy
// the machine is.
func vp8Clip(t *testing.T, cfg clip.Config) (ivf []byte, truth clip.Truth) {
	t.Helper()
	y4m, truth := synthClip(t, cfg)
	path := filepath.Join(filepath.Dir(y4m), "clip.ivf")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", y4m, "-c:v", "libvpx",
		"-b:v", "1500k", "-deadline", "realtime", "-cpu-used", "-8", "-g", strconv.Itoa(int(1.25*cfg.FPS)), "-f", "ivf", path).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	ivf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ivf, truth
}

// whipClient is a pion peer that publishes a VP8 track and a vitals data
// channel, as the widget does in a browser.
type whipClient struct {
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticSample
	dc    *webrtc.DataChannel
	// msgs receives the channel's messages. A test that stops taking
	// them stops the client reading its channel once msgs is full: a
	// slow reader.
	msgs chan received
	gone chan struct{} // closed at the test's end: msgs is no longer read
	plis atomic.Int32  // requests for a key frame received
}

// newWHIPClient makes the client, which resends packets the server asks
// for again (NACK) as a browser does; tune, if given, changes its pion
// settings and may add interceptors nearer the network.
func newWHIPClient(t testing.TB, tune ...func(*webrtc.SettingEngine, *interceptor.Registry)) *whipClient {
	t.Helper()
	m := &webrtc.MediaEngine{}
	if err := m.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	se, err := scopeOf(nil).settings(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ir := &interceptor.Registry{}
	for _, f := range tune {
		f(&se, ir)
	}
	if err := webrtc.RegisterDefaultInterceptors(m, ir); err != nil {
		t.Fatal(err)
	}
	pc, err := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(se), webrtc.WithInterceptorRegistry(ir)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	c := &whipClient{pc: pc, msgs: make(chan received, 256), gone: make(chan struct{})}
	t.Cleanup(func() {
		close(c.gone)
		pc.Close()
	})
	if c.track, err = webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, "video", "face"); err != nil {
		t.Fatal(err)
	}
	sender, err := pc.AddTrack(c.track)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			pkts, _, err := sender.ReadRTCP()
			if err != nil {
				return
			}
			for _, p := range pkts {
				if _, ok := p.(*rtcp.PictureLossIndication); ok {
					c.plis.Add(1)
				}
			}
		}
	}()
	if c.dc, err = pc.CreateDataChannel(vitalsLabel, nil); err != nil {
		t.Fatal(err)
	}
	c.dc.OnMessage(func(msg webrtc.DataChannelMessage) {
		var r received
		if json.Unmarshal(msg.Data, &r) == nil {
			r.raw = msg.Data
			select {
			case c.msgs <- r:
			case <-c.gone:
			}
		}
	})
	return c
}

// lossyLink is a network that loses the first sending of every n-th video
// packet (a resend after a NACK gets through) and every sending of one
// frame. It spares the first key frame: a lost first packet leaves no gap
// to ask for, and a browser then answers the server's request for a key
// frame at once, where a clip encoded beforehand has its next one seconds
// later.
type lossyLink struct {
	interceptor.NoOp
	every  uint16
	gone   int // the frame lost for good, counted from 0
	mu     sync.Mutex
	sent   bool   // a packet has been sent
	first  uint16 // the first one's sequence number
	lost   map[uint16]bool
	frames map[uint32]int // each frame's number by its RTP timestamp
}

// lossySpared is how many packets from the start the link spares: the
// first key frame of vp8Clip takes 6, the first 2 s about 100.
const lossySpared = 100

// lossy adds a lossyLink to a client, nearest the network.
func lossy(every uint16, gone int) func(*webrtc.SettingEngine, *interceptor.Registry) {
	return func(_ *webrtc.SettingEngine, ir *interceptor.Registry) {
		ir.Add(&lossyLink{every: every, gone: gone, lost: map[uint16]bool{}, frames: map[uint32]int{}})
	}
}

func (l *lossyLink) NewInterceptor(string) (interceptor.Interceptor, error) { return l, nil }

func (l *lossyLink) BindLocalStream(info *interceptor.StreamInfo, w interceptor.RTPWriter) interceptor.RTPWriter {
	if !strings.EqualFold(info.MimeType, webrtc.MimeTypeVP8) {
		return w
	}
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		l.mu.Lock()
		if !l.sent {
			l.sent, l.first = true, h.SequenceNumber
		}
		frame, ok := l.frames[h.Timestamp]
		if !ok {
			frame = len(l.frames)
			l.frames[h.Timestamp] = frame
		}
		drop := h.SequenceNumber-l.first >= lossySpared && h.SequenceNumber%l.every == 0 && !l.lost[h.SequenceNumber]
		if drop {
			l.lost[h.SequenceNumber] = true
		}
		drop = drop || frame == l.gone
		l.mu.Unlock()
		if drop {
			return h.MarshalSize() + len(payload), nil
		}
		return w.Write(h, payload, a)
	})
}

// offer returns the client's offer with its candidates.
func (c *whipClient) offer(t testing.TB) string {
	t.Helper()
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	return c.pc.LocalDescription().SDP
}

// expect waits for a data channel message of type typ, skipping vitals.
func (c *whipClient) expect(t *testing.T, typ string, timeout time.Duration) received {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case r := <-c.msgs:
			if r.Type == typ {
				return r
			}
			if r.Type != "vitals" {
				t.Fatalf("waiting for %s, got %s", typ, r.raw)
			}
		case <-deadline:
			t.Fatalf("no %s message within %v", typ, timeout)
		}
	}
}

// publish sends the IVF clip's frames on the track at their frame rate.
func (c *whipClient) publish(t *testing.T, ivf []byte, fps float64, done <-chan struct{}) {
	r, _, err := ivfreader.NewWith(bytes.NewReader(ivf))
	if err != nil {
		t.Error(err)
		return
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / fps))
	defer tick.Stop()
	for {
		frame, _, err := r.ParseNextFrame()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Error(err)
			return
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if err := c.track.WriteSample(media.Sample{Data: frame, Duration: time.Duration(float64(time.Second) / fps)}); err != nil {
			return
		}
	}
}

// whipPost sends a WHIP request with the token as a Bearer credential
// (none when token is empty).
func (e *testEnv) whipPost(query, contentType, body, token string) (*http.Response, string) {
	e.t.Helper()
	return e.whipRequest("POST", "/sessions/whip"+query, contentType, body, bearerHeader(token)...)
}

func (e *testEnv) whipDelete(location, token string) int {
	e.t.Helper()
	res, _ := e.whipRequest("DELETE", location, "", "", bearerHeader(token)...)
	return res.StatusCode
}

// bearerHeader is the Authorization header of a token, none for "".
func bearerHeader(token string) []string {
	if token == "" {
		return nil
	}
	return []string{"Bearer " + token}
}

// whipRequest sends a request to a WHIP route with the given Authorization
// headers, and returns the response and its body.
func (e *testEnv) whipRequest(method, target, contentType, body string, authorization ...string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+target, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, a := range authorization {
		req.Header.Add("Authorization", a)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestWHIP: a pion peer publishes a synthetic face as VP8 to POST
// /sessions/whip over a link that loses one packet in 25 (each sent again
// on the server's NACK, later than the packets behind it) and one frame
// for good (the server asks for a key frame), gets vitals on the data
// channel, and a DELETE of the session's Location stores the measure,
// whose hr is within 3 bpm of the truth, pushed as result.
func TestWHIP(t *testing.T) {
	t.Parallel()
	// 20 frames a second, two thirds of a webcam's, lighten the work of a
	// race-detector build on a shared machine. The heart rate needs 12 on
	// average and at most a fifth of the capture in holes: the frames this
	// test loses on purpose make a hole of 1.2 s, and a resend that comes
	// too late on a loaded machine loses up to the next key frame, 1.25 s
	// on. By 14 s both fit (at 15 frames a second and key frames every
	// 2 s, such a resend left too few frames for the heart rate).
	const fps = 20.0
	ivf, truth := vp8Clip(t, clip.Config{Width: 320, Height: 240, FPS: fps, Seconds: 16, Seed: 9, HeartRate: 72, BreathingRate: 15})
	e := newTestEnv(t, Config{})
	value, _ := e.mint(realtimeOnce())
	// Frame 151 is lost, found so a second later (before the next key
	// frame: the server asks for one), and the frames up to the key frame
	// of 175 are skipped.
	c := newWHIPClient(t, lossy(25, 151))
	body, _ := json.Marshal(map[string]any{"offer": c.offer(t), "measure": map[string]any{"tags": []string{"webrtc"}}})
	res, answer := e.whipPost("?chain=realtime", "application/json", string(body), value)
	location := res.Header.Get("Location")
	if res.StatusCode != 201 || res.Header.Get("Content-Type") != "application/sdp" || !strings.HasPrefix(location, "/sessions/whip/") {
		t.Fatalf("POST: %d %v %s", res.StatusCode, res.Header, answer)
	}
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	var o openedMessage
	c.expect(t, "opened", 20*time.Second).decode(t, &o)
	if o.ResumeTicket != "" || o.Chain != Realtime || "/sessions/whip/"+o.SessionID != location {
		t.Fatalf("opened %+v at %s", o, location)
	}
	done := make(chan struct{})
	published := make(chan struct{})
	go func() {
		defer close(published)
		c.publish(t, ivf, fps, done)
	}()
	var v vitalsMessage
	for v.ElapsedMs < 14000 {
		c.expect(t, "vitals", 20*time.Second).decode(t, &v)
	}
	// Most of the 280 frames sent by then, less the 24 skipped: a resend
	// that comes too late on a loaded machine loses a frame and the rest
	// up to the next key frame.
	if v.HR.Error != "" || v.FramesReceived < 220 || len(v.Wave) == 0 {
		t.Errorf("vitals after %d ms: hr %+v, %d frames, %d dropped, %d wave samples", v.ElapsedMs, v.HR, v.FramesReceived, v.FramesDropped, len(v.Wave))
	}
	<-published
	// One request at the start, when a key frame is the first thing
	// ffmpeg needs, and one after the lost frame.
	if n := c.plis.Load(); n < 2 {
		t.Errorf("%d requests for a key frame, want 2 or more", n)
	}
	// The frames skipped after it are counted.
	lost := regexp.MustCompile(`\npulsewire_session_frames_lost_total\{chain="realtime",env="test",transport="webrtc"\} ([0-9]+)\n`)
	if m := lost.FindStringSubmatch(e.scraped()); m == nil || m[1] == "0" {
		t.Errorf("frames lost in the metrics: %q", m)
	}
	other, _ := e.mint(realtimeOnce())
	if code := e.whipDelete(location, other); code != 404 {
		t.Fatalf("DELETE with another token: %d", code)
	}
	if code := e.whipDelete(location, value); code != 200 {
		t.Fatalf("DELETE: %d", code)
	}
	// The measure is stored by the time the DELETE answers.
	if res, body := e.httpDo("GET", "/measures/"+o.MeasureID, ""); res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"ended"`) {
		t.Errorf("the measure as the DELETE answers: %d %s", res.StatusCode, body)
	}
	var result struct{ Measure measureJSON }
	c.expect(t, "result", 20*time.Second).decode(t, &result)
	if result.Measure.ID != o.MeasureID || result.Measure.Status != "ended" || len(result.Measure.Tags) != 1 {
		t.Fatalf("result %+v", result.Measure)
	}
	if hr := hrOf(t, result.Measure); math.Abs(hr-truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, truth.HeartRate)
	}
	close(done)
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })
	if code := e.whipDelete(location, value); code != 404 {
		t.Fatalf("DELETE of an ended session: %d", code)
	}
}

// TestDataChannelSlowReader: a WHIP client that stops reading its vitals
// channel is cut off once more than maxBuffered bytes wait on the server's
// side of it, as a WebSocket client that does not read is closed with
// 4001; a client that reads the same kind of stream, more of it than its
// receive window holds, keeps its connection. The realtime session goes on
// without its peer, and a DELETE then stores its measure.
func TestDataChannelSlowReader(t *testing.T) {
	t.Parallel()
	// No frames come: the session must not end idle meanwhile.
	e := newTestEnv(t, Config{IdleTimeout: time.Minute})
	value, _ := e.mint(realtimeOnce())
	// A 16 KiB receive window instead of pion's 1 MiB: what the client
	// does not read backs up to the server after 16 KiB, not 1 MiB.
	c := newWHIPClient(t, func(se *webrtc.SettingEngine, _ *interceptor.Registry) { se.SetSCTPMaxReceiveBufferSize(16 << 10) })
	closed := make(chan struct{})
	var once sync.Once
	c.pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateClosed || s == webrtc.PeerConnectionStateFailed {
			once.Do(func() { close(closed) })
		}
	})
	res, answer := e.whipPost("?chain=realtime", "application/sdp", c.offer(t), value)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d", res.StatusCode)
	}
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	var o openedMessage
	c.expect(t, "opened", 20*time.Second).decode(t, &o)

	// Each calibration before a result is answered with an error
	// message: the client makes the server talk as fast as it likes.
	calibration := `{"type":"calibration","systole":120,"diastole":80}`
	const batches, batch = 12, 25
	var reply received
	for range batches {
		for range batch {
			if err := c.dc.SendText(calibration); err != nil {
				t.Fatal(err)
			}
		}
		for range batch {
			reply = c.expect(t, "error", 10*time.Second)
		}
	}
	if read := batches * batch * len(reply.raw); read <= 16<<10 || strings.Contains(e.logs.String(), "client too slow") {
		t.Fatalf("a client that read %d bytes was cut off", read)
	}

	// Now the client takes no more messages: once msgs is full, its
	// channel is not read, its window fills, and the server's side backs
	// up.
	sent := 0
	for ; sent < 20000; sent++ {
		if c.dc.SendText(calibration) != nil {
			break // the server has closed the connection
		}
		time.Sleep(100 * time.Microsecond) // about as fast as the server answers
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the client is still connected after %d unread answers", sent)
	}
	// The session closes the peer, then logs why.
	waitFor(t, func() bool { return strings.Contains(e.logs.String(), "client too slow") })
	// At least maxBuffered bytes of answers had to wait on the server
	// before it gave up on the client.
	if unread := sent * len(reply.raw); unread < maxBuffered {
		t.Fatalf("cut off after %d unread answers (%d bytes), before %d bytes could wait", sent, unread, maxBuffered)
	}
	if e.srv.session(o.SessionID) == nil {
		t.Fatal("the session ended with its peer")
	}
	if code := e.whipDelete("/sessions/whip/"+o.SessionID, value); code != http.StatusOK {
		t.Fatalf("DELETE: %d", code)
	}
	// The DELETE answers once the session has ended and its measure is
	// stored.
	if e.srv.session(o.SessionID) != nil {
		t.Error("the session outlived its DELETE")
	}
	if res, body := e.httpDo("GET", "/measures/"+o.MeasureID, ""); res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"ended"`) {
		t.Fatalf("the measure after the DELETE: %d %s", res.StatusCode, body)
	}
}

// TestWHIPRefusals: every refusal of the token (each cause of the
// WebSocket handshake's) is 401 with an empty body, its cause in the log;
// a malformed request is 400 before the token is looked at; a full server
// is 503.
// TestWHIPCrossOrigin: the widget, imported by a page of another origin,
// may call the WHIP routes: the browser's preflight is answered, and every
// answer, a refusal too, lets the page read it and its Location.
func TestWHIPCrossOrigin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	for _, target := range []string{"/sessions/whip?chain=scan", "/sessions/whip/abc"} {
		req, _ := http.NewRequest("OPTIONS", e.http.URL+target, nil)
		req.Header.Set("Origin", "https://company.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		h := res.Header
		if res.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "DELETE") {
			t.Fatalf("preflight of %s: %d %v", target, res.StatusCode, h)
		}
	}
	scan, _ := e.mint(scanOnce())
	for _, token := range []string{scan, ""} {
		res, _ := e.whipPost("?chain=scan", "application/sdp", newWHIPClient(t).offer(t), token)
		if res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Expose-Headers") != "Location, Retry-After" {
			t.Fatalf("answer %d: %v", res.StatusCode, res.Header)
		}
		if token != "" {
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("offer: %d", res.StatusCode)
			}
			e.whipDelete(res.Header.Get("Location"), token)
		}
	}
}

func TestWHIPRefusals(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{MaxSessions: 1})
	offer := newWHIPClient(t).offer(t)
	scan, scanID := e.mint(scanOnce())
	noVideo := newWHIPClientNoVideo(t)
	cases := []struct {
		name, query, contentType, body, token string
		status                                int
	}{
		{"no token", "?chain=scan", "application/sdp", offer, "", 401},
		{"the token's id", "?chain=scan", "application/sdp", offer, scanID, 401},
		{"scan token, realtime chain", "?chain=realtime", "application/sdp", offer, scan, 401},
		{"unknown measure", "?chain=scan&measureId=3f0e5a3e-2c7d-4d1b-9d0f-2b8c1f6f4a10", "application/sdp", offer, scan, 401},
		{"no chain", "", "application/sdp", offer, scan, 400},
		{"two chains", "?chain=scan&chain=scan", "application/sdp", offer, scan, 400},
		{"not SDP", "?chain=scan", "application/sdp", "hello", scan, 400},
		{"no video", "?chain=scan", "application/sdp", noVideo, scan, 400},
		// What the connection needs is checked before the token counts:
		// an offer pion would refuse is the client's 400, not a 500 that
		// spends the session.
		{"no ice-ufrag", "?chain=scan", "application/sdp", withoutAttribute(offer, "ice-ufrag"), scan, 400},
		{"no ice-pwd", "?chain=scan", "application/sdp", withoutAttribute(offer, "ice-pwd"), scan, 400},
		{"no fingerprint", "?chain=scan", "application/sdp", withoutAttribute(offer, "fingerprint"), scan, 400},
		// PROTOCOL.md's other causes of a 400: without a data channel the
		// session could send nothing, and without VP8 it could decode
		// nothing; a fingerprint that is a hash name alone fails the DTLS
		// handshake. Taken, each would spend the token on a session that
		// cannot work.
		{"no data channel", "?chain=scan", "application/sdp", withoutMedia(offer, "application"), scan, 400},
		{"video without VP8", "?chain=scan", "application/sdp", strings.ReplaceAll(offer, " VP8/90000", " H264/90000"), scan, 400},
		{"a fingerprint without its value", "?chain=scan", "application/sdp", fingerprintNameOnly(offer), scan, 400},
		{"text/plain", "?chain=scan", "text/plain", offer, scan, 400},
		{"JSON with an unknown member", "?chain=scan", "application/json", `{"offer":"x","sdp":"y"}`, scan, 400},
		{"measureId in the query, measure inputs in the body", "?chain=scan&measureId=3f0e5a3e-2c7d-4d1b-9d0f-2b8c1f6f4a10", "application/json", jsonOffer(offer, `"measure":{"tags":["webrtc"]}`), scan, 400},
		// Two ids would leave the session to pick one of them.
		{"measureId in the query and in the body", "?chain=scan&measureId=3f0e5a3e-2c7d-4d1b-9d0f-2b8c1f6f4a10", "application/json", jsonOffer(offer, `"measureId":"6a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`), scan, 400},
		{"JSON with a stray brace after it", "?chain=scan", "application/json", jsonOffer(offer, `"measure":null`) + "}", scan, 400},
		{"invalid measure inputs", "?chain=scan", "application/json", jsonOffer(offer, `"measure":{"tags":[""]}`), scan, 401},
		{"too large", "?chain=scan", "application/sdp", strings.Repeat("v=0\r\n", maxOfferBytes/5+1), scan, 413},
		// At the size limit the body is read (and refused as no offer);
		// one byte past it, it is not.
		{"at the size limit", "?chain=scan", "application/sdp", strings.Repeat("x", maxOfferBytes), scan, 400},
		{"one byte past the size limit", "?chain=scan", "application/sdp", strings.Repeat("x", maxOfferBytes+1), scan, 413},
	}
	bad := e.badTokens(newTestEnvIn(t, control.Production, Config{}, &testClock{}))
	for _, b := range bad {
		cases = append(cases, struct {
			name, query, contentType, body, token string
			status                                int
		}{b.name, "?chain=scan", "application/sdp", offer, b.value, 401})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.advance(time.Second)
			if tc.name == expiredToken {
				e.clock.advance(tokenLife)
				defer e.clock.advance(-tokenLife)
			}
			res, body := e.whipPost(tc.query, tc.contentType, tc.body, tc.token)
			if res.StatusCode != tc.status || body != "" {
				t.Fatalf("%d %q, want %d with an empty body", res.StatusCode, body, tc.status)
			}
		})
	}
	// The scan token was refused every time, never spent: it opens now,
	// and the server is then full.
	res, _ := e.whipPost("?chain=scan", "application/sdp", offer, scan)
	if res.StatusCode != 201 {
		t.Fatalf("the scan token after the refusals: %d", res.StatusCode)
	}
	e.clock.advance(time.Second)
	rt, _ := e.mint(realtimeOnce())
	res, body := e.whipPost("?chain=realtime", "application/sdp", newWHIPClient(t).offer(t), rt)
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "5" || body != "" {
		t.Fatalf("full server: %d %v %q", res.StatusCode, res.Header, body)
	}
	for _, v := range []string{scan, rt} {
		if strings.Contains(e.logs.String(), v) {
			t.Fatal("a token value is in the log")
		}
	}
	for _, b := range bad {
		if !strings.Contains(e.logs.String(), b.cause) || strings.Contains(e.logs.String(), b.value) {
			t.Errorf("the log does not name the cause %q, or names the token", b.cause)
		}
	}
}

// TestWHIPAuthorization: both WHIP routes read the access token from the
// Authorization header by control.Bearer's rule, the REST routes' rule for
// the API key: the scheme in any case, any spaces. A header that breaks it
// (two headers, none, empty, another scheme, more than the token) is
// refused like an unknown token, 401 with an empty body (the DELETE: 404
// as for an unknown session), and spends nothing: the same token then
// opens with a plain header.
func TestWHIPAuthorization(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	offer := newWHIPClient(t).offer(t)
	for _, tc := range []struct {
		name   string
		header []string // %s is the token
		ok     bool
	}{
		{"scheme as written", []string{"Bearer %s"}, true},
		{"scheme in lower case", []string{"bearer %s"}, true},
		{"scheme in upper case", []string{"BEARER %s"}, true},
		{"extra spaces", []string{"  Bearer   %s  "}, true},
		{"two headers", []string{"Bearer %s", "Bearer %s"}, false},
		{"no header", nil, false},
		{"empty header", []string{""}, false},
		{"another scheme", []string{"Basic %s"}, false},
		{"no space after the scheme", []string{"Bearer%s"}, false},
		{"a word after the token", []string{"Bearer %s x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, _ := e.mint(scanOnce())
			var header []string
			for _, h := range tc.header {
				header = append(header, strings.ReplaceAll(h, "%s", token))
			}
			// Past the account's opening rate, which counts every
			// opening of this test.
			e.clock.advance(4 * time.Second)
			res, body := e.whipRequest("POST", "/sessions/whip?chain=scan", "application/sdp", offer, header...)
			if tc.ok {
				if res.StatusCode != http.StatusCreated {
					t.Fatalf("POST: %d %q, want 201", res.StatusCode, body)
				}
				if res, body := e.whipRequest("DELETE", res.Header.Get("Location"), "", "", header...); res.StatusCode != http.StatusOK || body != "" {
					t.Fatalf("DELETE: %d %q, want 200 with an empty body", res.StatusCode, body)
				}
				return
			}
			if res.StatusCode != http.StatusUnauthorized || body != "" {
				t.Fatalf("POST: %d %q, want 401 with an empty body", res.StatusCode, body)
			}
			e.clock.advance(4 * time.Second)
			res, _ = e.whipPost("?chain=scan", "application/sdp", offer, token)
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("the token after its refusal: %d", res.StatusCode)
			}
			location := res.Header.Get("Location")
			if res, body := e.whipRequest("DELETE", location, "", "", header...); res.StatusCode != http.StatusNotFound || body != notFoundBody {
				t.Fatalf("DELETE: %d %q, want 404 %s", res.StatusCode, body, notFoundBody)
			}
			if code := e.whipDelete(location, token); code != http.StatusOK {
				t.Fatalf("DELETE with a plain header: %d", code)
			}
		})
	}
	if strings.Contains(e.logs.String(), "ivat-") {
		t.Fatal("a token value is in the log")
	}
}

// notFoundBody is the API's 404 body, which a WHIP DELETE of an
// unknown session, or with another token, answers.
const notFoundBody = `{"message":"Not Found","statusCode":404}`

func jsonOffer(offer, extra string) string {
	b, _ := json.Marshal(offer)
	return `{"offer":` + string(b) + `,` + extra + `}`
}

// newWHIPClientNoVideo is an offer with a data channel and no video.
// withoutAttribute is offer without its a=name lines, wherever they are.
func withoutAttribute(offer, name string) string {
	var kept []string
	for line := range strings.SplitSeq(offer, "\r\n") {
		if !strings.HasPrefix(line, "a="+name+":") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\r\n")
}

// withoutMedia is offer without its m=kind sections (a section runs to the
// next m= line); the offer still ends with its line break.
func withoutMedia(offer, kind string) string {
	var kept []string
	skip := false
	for line := range strings.SplitSeq(offer, "\r\n") {
		if strings.HasPrefix(line, "m=") {
			skip = strings.HasPrefix(line, "m="+kind+" ")
		}
		if !skip || line == "" {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\r\n")
}

// fingerprintNameOnly is offer whose a=fingerprint lines keep the hash
// function's name and lose the value.
func fingerprintNameOnly(offer string) string {
	lines := strings.Split(offer, "\r\n")
	for i, line := range lines {
		if v, ok := strings.CutPrefix(line, "a=fingerprint:"); ok {
			lines[i] = "a=fingerprint:" + strings.Fields(v)[0]
		}
	}
	return strings.Join(lines, "\r\n")
}

func newWHIPClientNoVideo(t testing.TB) string {
	_, offer := dataOnlyPeer(t, webrtc.SettingEngine{})
	return offer.SDP
}

// dataOnlyPeer is a peer connection with a vitals data channel and no
// video, and its offer (not yet set: nothing gathered).
func dataOnlyPeer(t testing.TB, se webrtc.SettingEngine) (*webrtc.PeerConnection, webrtc.SessionDescription) {
	t.Helper()
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	if _, err := pc.CreateDataChannel(vitalsLabel, nil); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pc, offer
}

// FuzzReadWHIP: no query, content type or body makes readWHIP panic. It
// refuses a request only as malformed (400) or too large (413), and never
// takes a body over maxOfferBytes. What it accepts keeps PROTOCOL.md's
// rules: one chain, scan or realtime; an SDP offer with VP8 video and a
// data channel (the body itself when it is application/sdp); measure
// inputs (JSON, not null: whether they are valid inputs is the
// handshake's to say) or a measureId, not both; and no token, which only
// the Authorization header gives. The seeds follow the requests of
// TestWHIP and TestWHIPRefusals.
func FuzzReadWHIP(f *testing.F) {
	offer := newWHIPClient(f).offer(f)
	const measureID = "3f0e5a3e-2c7d-4d1b-9d0f-2b8c1f6f4a10"
	for _, seed := range []struct{ query, contentType, body string }{
		{"chain=scan", "application/sdp", offer},
		{"chain=realtime&measureId=" + measureID, "application/sdp", offer},
		{"chain=realtime", "application/json", jsonOffer(offer, `"measure":{"tags":["webrtc"]}`)},
		{"chain=scan", "application/json; charset=utf-8", jsonOffer(offer, `"measureId":"`+measureID+`"`)},
		{"chain=scan&measureId=" + measureID, "application/json", jsonOffer(offer, `"measureId":"`+measureID+`"`)},
		{"chain=scan&measureId=" + measureID, "application/json", jsonOffer(offer, `"measure":{"tags":["webrtc"]}`)},
		{"chain=scan", "application/json", jsonOffer(offer, `"measure":null`)},
		{"chain=scan", "application/json", jsonOffer(offer, `"measure":{"tags":[""]}`)},
		{"", "application/sdp", offer},
		{"chain=scan&chain=scan", "application/sdp", offer},
		{"chain=scan", "application/sdp", "hello"},
		{"chain=scan", "application/sdp", newWHIPClientNoVideo(f)},
		{"chain=scan", "text/plain", offer},
		{"chain=scan", "application/json", `{"offer":"x","sdp":"y"}`},
		{"chain=scan", "application/sdp", strings.Repeat("x", maxOfferBytes+1)},
	} {
		f.Add(seed.query, seed.contentType, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, query, contentType string, body []byte) {
		r := &http.Request{
			Method: http.MethodPost,
			URL:    &url.URL{Path: "/sessions/whip", RawQuery: query},
			Header: http.Header{"Content-Type": {contentType}},
			Body:   io.NopCloser(bytes.NewReader(body)),
		}
		req, err := readWHIP(httptest.NewRecorder(), r)
		// A body past the limit is refused: as too large, or for what
		// the query says before the body is read.
		var tooLarge *http.MaxBytesError
		if (errors.As(err, &tooLarge) && len(body) <= maxOfferBytes) || (err == nil && len(body) > maxOfferBytes) {
			t.Fatalf("%d bytes: %v", len(body), err)
		}
		if err != nil {
			if tooLarge == nil && !errors.Is(err, errWHIPRequest) {
				t.Fatalf("refused neither as malformed nor as too large: %v", err)
			}
			return
		}
		o := req.open
		ct, _, _ := mime.ParseMediaType(contentType)
		switch {
		case o.chain != Scan && o.chain != Realtime, len(r.URL.Query()["chain"]) != 1:
			t.Fatalf("accepted chain %q from %q", o.chain, query)
		case checkOffer(req.offer) != nil:
			t.Fatalf("accepted an unusable offer: %v", checkOffer(req.offer))
		case ct == "application/sdp" && req.offer != string(body):
			t.Fatal("an application/sdp offer is not the body")
		case o.measure != nil && o.measureID != "":
			t.Fatalf("accepted both measure inputs and measureId %q", o.measureID)
		case o.measure != nil && (!json.Valid(o.measure) || control.IsNull(o.measure)):
			t.Fatalf("accepted measure inputs %q", o.measure)
		case o.token != "":
			t.Fatal("the request, not its Authorization header, gave a token")
		}
	})
}

// whipRealtime opens a realtime session over WHIP and returns its token
// and Location.
func (e *testEnv) whipRealtime(t *testing.T) (token, location string) {
	t.Helper()
	token, _ = e.mint(realtimeOnce())
	res, body := e.whipRequest("POST", "/sessions/whip?chain=realtime", "application/sdp", newWHIPClient(t).offer(t), bearerHeader(token)...)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d %q", res.StatusCode, body)
	}
	return token, res.Header.Get("Location")
}

// TestWHIPDeleteUnstored: a realtime session whose measure cannot be stored
// (the database is gone) answers its DELETE with the API's 500, not a 200
// that would promise a stored measure.
func TestWHIPDeleteUnstored(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	token, location := e.whipRealtime(t)
	e.db.Close()
	res, body := e.whipRequest("DELETE", location, "", "", bearerHeader(token)...)
	if res.StatusCode != http.StatusInternalServerError || !strings.Contains(body, `"statusCode":500`) {
		t.Fatalf("DELETE: %d %q, want the API's 500", res.StatusCode, body)
	}
}
