// Package clip makes synthetic face videos with a known pulse, breathing and
// heart rate variability, for tests and the accuracy benchmark.
//
// A real photo of a face (pigo's MIT-licensed sample, photo/) is animated:
// the skin darkens and lightens with a physiological blood volume pulse
// (systolic peak, dicrotic notch, beat-to-beat variability with a known
// RMSSD), breathing modulates the pulse's amplitude, the skin's brightness
// and the heart rate (sinus arrhythmia), the head sways, the light drifts or
// flickers and the camera adds noise. Only skin pixels carry the pulse, with
// the per-channel strengths of real skin. Everything is drawn from a seeded
// generator: the same Config always gives the same frames.
//
// Frames can be had in memory (Frames, for tests that skip encoding) or
// encoded through ffmpeg as mp4, mov, avi (H.264), webm (VP9) or y4m, with
// the ground truth written beside each file as JSON (Encode, Generate).
package clip

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Config describes one clip. Zero fields take the defaults noted.
type Config struct {
	Width, Height int     // frame size, pixels (640x480)
	FPS           float64 // nominal frame rate (30)
	Seconds       float64 // length (20)
	Seed          uint64  // everything random derives from it

	HeartRate      float64 // mean, beats per minute (72)
	BreathingRate  float64 // mean, breaths per minute (15)
	RMSSD          float64 // of the RR intervals, ms (40, a resting adult)
	PulseAmplitude float64 // peak-to-peak relative change of green on skin (0.006)

	// Motion is the head sway amplitude in face heights (0: still; 0.02:
	// small; 0.1: moving).
	Motion float64
	// Brightness is the light on the scene (1, a well-lit face; 0.5 dim;
	// 0.3 a dark room). The camera's auto-exposure makes up for dim light
	// with gain (see exposureGain), which amplifies the noise too.
	Brightness float64
	// Flicker of the light: frequency (Hz) and depth (fraction, 0 off).
	FlickerHz, FlickerDepth float64
	// Noise is the camera noise at unit gain, standard deviation in 8-bit
	// levels (1.5).
	Noise float64
	// FaceScale is the photo's height over the frame height (0.65: the face
	// fills about 45% of the frame height).
	FaceScale float64
	// Jitter moves each frame's capture time by up to this fraction of the
	// frame interval (0-0.45), deterministically: uneven frame spacing.
	Jitter float64
	// DropEvery drops every n-th frame (0: none), as a busy camera does.
	DropEvery int

	// HeartRateEnd, when set, is the heart rate the clip ends at: the rate
	// moves from HeartRate to it along a half cosine from 20% to 60% of
	// the clip, as under a stress task (physio.go). HeartRate is then the
	// rate at the start; the truth's hrBpm is the mean over the clip.
	HeartRateEnd float64
}

// Defaults.
const (
	DefaultWidth, DefaultHeight = 640, 480
	DefaultFPS                  = 30.0
	DefaultSeconds              = 20.0
	DefaultHeartRate            = 72.0
	DefaultBreathingRate        = 15.0
	DefaultRMSSD                = 40.0
	DefaultPulseAmplitude       = 0.006
	DefaultNoise                = 1.5
	DefaultFaceScale            = 0.65
)

func (c Config) withDefaults() Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Width == 0 {
		c.Width = DefaultWidth
	}
	if c.Height == 0 {
		c.Height = DefaultHeight
	}
	def(&c.FPS, DefaultFPS)
	def(&c.Seconds, DefaultSeconds)
	def(&c.HeartRate, DefaultHeartRate)
	def(&c.BreathingRate, DefaultBreathingRate)
	def(&c.RMSSD, DefaultRMSSD)
	def(&c.PulseAmplitude, DefaultPulseAmplitude)
	def(&c.Brightness, 1)
	def(&c.Noise, DefaultNoise)
	def(&c.FaceScale, DefaultFaceScale)
	return c
}

func (c Config) validate() error {
	switch {
	case c.Width < 64 || c.Height < 64 || c.Width > 4096 || c.Height > 4096 || c.Width%2 != 0 || c.Height%2 != 0:
		return fmt.Errorf("frame size %dx%d: want even sides of 64 to 4096", c.Width, c.Height)
	case c.FPS < 5 || c.FPS > 120:
		return fmt.Errorf("fps %v: want 5 to 120", c.FPS)
	case c.Seconds <= 0 || c.Seconds > 600:
		return fmt.Errorf("length %vs: want up to 600", c.Seconds)
	case c.HeartRate < 30 || c.HeartRate > 220:
		return fmt.Errorf("heart rate %v bpm: want 30 to 220", c.HeartRate)
	case c.BreathingRate < 3 || c.BreathingRate > 60:
		return fmt.Errorf("breathing rate %v /min: want 3 to 60", c.BreathingRate)
	case c.RMSSD < 0 || c.RMSSD > 300:
		return fmt.Errorf("RMSSD %v ms: want 0 to 300", c.RMSSD)
	case c.Jitter < 0 || c.Jitter > 0.45:
		return fmt.Errorf("jitter %v: want 0 to 0.45 of a frame interval", c.Jitter)
	case c.DropEvery < 0 || c.DropEvery == 1:
		return errors.New("drop every: want 0 (none) or 2 and more")
	case c.FaceScale < 0.1 || c.FaceScale > 2:
		return fmt.Errorf("face scale %v: want 0.1 to 2", c.FaceScale)
	case c.HeartRateEnd != 0 && (c.HeartRateEnd < 30 || c.HeartRateEnd > 220):
		return fmt.Errorf("end heart rate %v bpm: want 30 to 220, or 0 for a steady rate", c.HeartRateEnd)
	}
	return nil
}

// Clip is a generated clip: its configuration, physiology and frame times.
type Clip struct {
	cfg    Config
	phys   physiology
	times  []float64 // capture time of each frame, seconds
	scene  *scene
	noiseK uint64 // noise stream key
}

// New prepares a clip: it draws the physiology and the frame times and
// lays out the scene. Rendering happens frame by frame later.
func New(cfg Config) (*Clip, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	c := &Clip{cfg: cfg}
	c.phys = newPhysiology(rng, cfg.Seconds, newHeartTrend(cfg.Seconds, cfg.HeartRate, cfg.HeartRateEnd), cfg.BreathingRate, cfg.RMSSD)
	c.times = frameTimes(cfg)
	var err error
	if c.scene, err = newScene(cfg, rng); err != nil {
		return nil, err
	}
	c.noiseK = rng.Uint64()
	return c, nil
}

// frameTimes are the capture times: frame n of the nominal rate at n/fps,
// moved by jitter·sin(2.3 n)/fps (irregular but reproducible, and the same
// formula the encoder's setpts uses), rounded to the millisecond a container
// stores, with every DropEvery-th frame left out.
func frameTimes(c Config) []float64 {
	var ts []float64
	for n := 0; ; n++ {
		t := stamp(n, c.FPS, c.Jitter)
		if t >= c.Seconds {
			return ts
		}
		if c.DropEvery > 0 && n%c.DropEvery == c.DropEvery-1 {
			continue
		}
		ts = append(ts, t)
	}
}

// stamp is frame n's capture time, seconds, to the millisecond.
func stamp(n int, fps, jitter float64) float64 {
	t := (float64(n) + jitter*math.Sin(2.3*float64(n))) / fps
	return math.Round(t*1000) / 1000
}

// Auto-exposure: the camera raises its gain to bring the picture to the
// level of exposureTarget light, by at most maxGain; darker scenes stay
// darker. Sensor noise is amplified with the signal.
const (
	exposureTarget = 0.8
	maxGain        = 2.0
)

// exposureGain is the camera gain for a scene lit at brightness b.
func exposureGain(b float64) float64 {
	return min(maxGain, max(1, exposureTarget/b))
}

// Truth is the ground truth written beside a clip.
type Truth struct {
	File   string `json:"file,omitempty"`
	Format string `json:"format,omitempty"`
	Codec  string `json:"codec,omitempty"`
	CRF    int    `json:"crf,omitempty"`
	// BitrateKbps is the target of a rate-controlled encoding, kbit/s.
	BitrateKbps int     `json:"bitrateKbps,omitempty"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	FPS         float64 `json:"fps"` // nominal
	Frames      int     `json:"frames"`
	// Seconds is the clip's length.
	Seconds float64 `json:"seconds"`
	Seed    uint64  `json:"seed"`
	// HeartRate is 60 over the mean RR interval of the beats inside the
	// clip, beats per minute.
	HeartRate float64 `json:"hrBpm"`
	// BreathingRate is the breathing cycles completed per minute.
	BreathingRate float64 `json:"brPerMin"`
	// RMSSD of the RR intervals inside the clip, ms.
	RMSSD float64 `json:"rmssdMs"`
	// HRCourse is the heart rate at each whole second of the clip (0, 1,
	// 2 s...): 60 over the RR interval in progress, beats per minute.
	HRCourse []float64 `json:"hrCourseBpm,omitempty"`
	// BeatTimes are the onsets of the beats inside the clip, seconds.
	BeatTimes  []float64  `json:"beatTimesS,omitempty"`
	Conditions Conditions `json:"conditions"`
}

// Conditions repeats the capture conditions the clip was made under.
type Conditions struct {
	PulseAmplitude float64 `json:"pulseAmplitude"`
	Motion         float64 `json:"motionFaceHeights"`
	Brightness     float64 `json:"brightness"`
	Gain           float64 `json:"cameraGain"`
	FlickerHz      float64 `json:"flickerHz,omitempty"`
	FlickerDepth   float64 `json:"flickerDepth,omitempty"`
	Noise          float64 `json:"noiseLevels"`
	FaceScale      float64 `json:"faceScale"`
	Jitter         float64 `json:"jitter,omitempty"`
	DropEvery      int     `json:"dropEvery,omitempty"`
	HeartRateEnd   float64 `json:"hrEndBpm,omitempty"`
}

// Truth returns the clip's ground truth (without the encoding fields).
func (c *Clip) Truth() Truth {
	beats, hr, rm := c.phys.truthWindow(c.cfg.Seconds)
	return Truth{
		Width: c.cfg.Width, Height: c.cfg.Height, FPS: c.cfg.FPS, Frames: len(c.times),
		Seconds: c.cfg.Seconds, Seed: c.cfg.Seed,
		HeartRate: hr, BreathingRate: c.phys.meanBreathing(c.cfg.Seconds), RMSSD: rm,
		HRCourse:  c.phys.course(c.cfg.Seconds),
		BeatTimes: beats,
		Conditions: Conditions{
			PulseAmplitude: c.cfg.PulseAmplitude, Motion: c.cfg.Motion, Brightness: c.cfg.Brightness,
			Gain:      exposureGain(c.cfg.Brightness),
			FlickerHz: c.cfg.FlickerHz, FlickerDepth: c.cfg.FlickerDepth, Noise: c.cfg.Noise,
			FaceScale: c.cfg.FaceScale, Jitter: c.cfg.Jitter, DropEvery: c.cfg.DropEvery,
			HeartRateEnd: c.cfg.HeartRateEnd,
		},
	}
}

// Len is the number of frames.
func (c *Clip) Len() int { return len(c.times) }

// Time is frame i's capture time.
func (c *Clip) Time(i int) time.Duration {
	return time.Duration(c.times[i] * float64(time.Second))
}
