package session

import (
	"encoding/binary"
	"io"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4/pkg/media/samplebuilder"
)

// vp8Frames turns the RTP packets of a VP8 track into whole frames in an
// IVF stream for the decoder. Packets arrive late, out of order or not at
// all on a real network, and a packet the peer sends again on a NACK
// arrives after those sent behind it; glued together as they come, they
// would make frames that ffmpeg decodes into smeared blocks of colour, and
// every later frame that predicts from them too, until the next key frame:
// seconds of skin colour that no face has, read as pulse. So packets wait
// in a jitter buffer until their frame is whole, a frame still missing a
// packet after maxLateness is dropped, and the inter frames after a drop
// (which reference what was lost) are skipped until a key frame, which the
// caller asks the peer for while wantKey holds.
type vp8Frames struct {
	sb  *samplebuilder.SampleBuilder
	out io.Writer

	started bool   // the IVF header and a first key frame are written
	first   uint32 // RTP timestamp of the first frame written
	wantKey bool   // frames are skipped until a key frame
	skipped int    // frames that came and were not written: fragments, or waiting for a key frame
	// Padding never reaches the builder: the media packets are numbered
	// without it. pads holds the sequence numbers of the padding packets
	// within vp8MaxLatePackets of newest, the newest media packet's;
	// offset counts the older ones.
	pads   map[uint16]bool
	offset uint16
	newest uint16
	media  bool   // a media packet has come
	last   uint16 // the last packet of the last frame popped, renumbered
	popped bool
	buf    []byte // an IVF frame header and the frame
}

// maxLateness is how long a frame waits for a packet that is missing, in
// media time: enough for a NACK and its resend on a network with a few
// hundred milliseconds of round trip, or a receiver that was not scheduled
// for a while; the live vitals, read once a second from 30 s of frames,
// can wait that long.
const maxLateness = time.Second

// vp8MaxLatePackets bounds the jitter buffer in packets, far above what
// maxLateness holds at a webcam's bit rate.
const vp8MaxLatePackets = 2048

// vp8ClockRate is the RTP clock of video, 90 kHz.
const vp8ClockRate = 90000

func newVP8Frames(out io.Writer) *vp8Frames {
	head := func(d any) any {
		// A frame starts at the first packet of its first partition; a
		// later partition's first packet after a loss would start a
		// fragment.
		p, ok := d.(*codecs.VP8Packet)
		return ok && p.S == 1 && p.PID == 0
	}
	return &vp8Frames{
		sb: samplebuilder.New(vp8MaxLatePackets, &codecs.VP8Packet{}, vp8ClockRate,
			samplebuilder.WithMaxTimeDelay(maxLateness), samplebuilder.WithPacketHeadHandler(head),
			samplebuilder.WithRTPHeaders(true)),
		out:     out,
		wantKey: true,
		pads:    map[uint16]bool{},
	}
}

// push adds a packet and writes the frames it completes.
// The last frame waits for a packet after it, which never comes at the
// track's end: a frame lost there is not missed, and the builder's Flush
// takes more than a second of CPU.
func (v *vp8Frames) push(p *rtp.Packet) error {
	if len(p.Payload) == 0 {
		v.pad(p.SequenceNumber)
		return nil
	}
	seq, ok := v.renumber(p.SequenceNumber)
	if !ok {
		return nil
	}
	q := *p
	q.SequenceNumber = seq
	v.sb.Push(&q)
	for s := v.sb.Pop(); s != nil; s = v.sb.Pop() {
		whole, _ := s.Metadata.(bool)
		if v.lostBefore(s.RTPHeaders) || !whole {
			// Packets were lost: the frames that follow predict from
			// what is missing.
			v.wantKey = true
		}
		if !whole || v.wantKey && !isVP8KeyFrame(s.Data) {
			if v.started {
				v.skipped++
			}
			continue
		}
		v.wantKey = false
		if err := v.write(s.Data, s.PacketTimestamp); err != nil {
			return err
		}
	}
	return nil
}

// pad records a padding-only packet, which a browser sends to probe the
// bandwidth (on the video's own stream when no RTX is agreed; Chromium in
// bursts of 15 between frames, with the last frame's timestamp). Pushed
// into pion's builder it cost frames: the builder counts padding with
// lost packets, and a one-packet frame right after a burst, its marker
// read before its new timestamp, was dropped with the padding. So the
// media packets are numbered without it. Padding that comes after a
// later media packet was numbered leaves its gap: counted then, it would
// give two packets one number.
func (v *vp8Frames) pad(seq uint16) {
	if v.media && int16(seq-v.newest) < 0 || len(v.pads) >= vp8MaxLatePackets {
		return
	}
	v.pads[seq] = true
}

// renumber returns a media packet's sequence number without the padding
// before it, or false for a packet too old to be waited for.
func (v *vp8Frames) renumber(seq uint16) (uint16, bool) {
	if v.media && int16(seq-v.newest) < -vp8MaxLatePackets {
		return 0, false
	}
	if !v.media || int16(seq-v.newest) > 0 {
		v.newest, v.media = seq, true
	}
	before := v.offset
	for q := range v.pads {
		if uint16(v.newest-q) > vp8MaxLatePackets && int16(v.newest-q) > 0 {
			// Older than any packet still taken: counted for good.
			delete(v.pads, q)
			v.offset++
			before++
		} else if int16(seq-q) > 0 {
			before++
		}
	}
	return seq - before, true
}

// lostBefore reports whether media packets were lost between the last
// frame popped and this one, whose packets' headers (renumbered) are
// given.
func (v *vp8Frames) lostBefore(hs []*rtp.Header) bool {
	if len(hs) == 0 {
		return true
	}
	lost := v.popped && hs[0].SequenceNumber != v.last+1
	v.last, v.popped = hs[len(hs)-1].SequenceNumber, true
	return lost
}

// write writes a frame, and the IVF header before the first. Timestamps
// stay on the 90 kHz RTP clock, from the first frame, so that the decoder
// gives each frame its capture time.
func (v *vp8Frames) write(frame []byte, ts uint32) error {
	if !v.started {
		var h [32]byte
		copy(h[0:], "DKIF")
		binary.LittleEndian.PutUint16(h[6:], 32) // header size
		copy(h[8:], "VP80")
		binary.LittleEndian.PutUint16(h[12:], 640) // the bitstream says the real size
		binary.LittleEndian.PutUint16(h[14:], 480)
		binary.LittleEndian.PutUint32(h[16:], vp8ClockRate) // time base 1/90000
		binary.LittleEndian.PutUint32(h[20:], 1)
		if _, err := v.out.Write(h[:]); err != nil {
			return err
		}
		v.started, v.first = true, ts
	}
	v.buf = append(v.buf[:0], make([]byte, 12)...)
	binary.LittleEndian.PutUint32(v.buf[0:], uint32(len(frame)))
	binary.LittleEndian.PutUint64(v.buf[4:], uint64(ts-v.first)) // wraps after 13 hours
	v.buf = append(v.buf, frame...)
	_, err := v.out.Write(v.buf)
	return err
}

// isVP8KeyFrame reports whether a VP8 frame is a key frame: the frame tag's
// lowest bit clear and the key frame start code (RFC 6386, 9.1).
func isVP8KeyFrame(f []byte) bool {
	return len(f) >= 10 && f[0]&1 == 0 && f[3] == 0x9d && f[4] == 0x01 && f[5] == 0x2a
}
