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
// Presets is the benchmark set the service's figures are measured on, and
// a test pins its clips bit for bit. WebcamPresets is a harder set that
// looks like a webcam recording of a person at a computer, each effect
// modelled on its physics and sources: a heart rate that rises or falls
// during the clip (physio.go), a head bowed towards a screen and drifting
// (pose.go), glasses and a fringe over the skin (occlusion.go), skin
// tones from light to dark through the melanin in the epidermis (tone.go),
// a screen lighting the face (light.go), the camera's exposure and white
// balance steps and shot noise (camera.go), and real-time encoders at
// webcam bit rates (encode.go). docs/synthetic-data.md describes the model
// and both sets.
//
// Frames can be had in memory (Frames, for tests that skip encoding) or
// encoded through ffmpeg as mp4, mov, avi (H.264), webm (VP9) or y4m, at a
// constant quality or a target bit rate, with the ground truth written
// beside each file as JSON (Encode, Generate).
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
	// PulseRed and PulseBlue are the pulse's relative change in red and
	// blue as shares of green's, on the photo's own skin (0: the skin's
	// blood-volume signature, 0.43 and 0.69; scene.go). People and
	// cameras differ in it, and the colour projections read only the
	// part of it that is not a change of brightness.
	PulseRed, PulseBlue float64

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

	// What follows makes a clip look like a webcam recording of a person
	// at a screen (WebcamPresets). Zero values leave the photo, the pose
	// and the camera as the fields above have them.

	// Melanin is the volume fraction of melanosomes in the epidermis,
	// which sets the skin tone (0: the photo's own light skin, taken as
	// 0.04; 0.13 moderately pigmented; 0.22-0.35 darkly pigmented).
	// Darker skin reflects less light and carries a weaker, redder pulse
	// (tone.go).
	Melanin float64
	// Pitch bows the head, degrees (15-25: looking down at a laptop
	// screen): the face is foreshortened and moves down, the forehead
	// turns to the camera and the shading of the face changes (pose.go).
	Pitch float64
	// Glasses puts dark-rimmed glasses on the face; their lenses reflect
	// the room and the screen over the eyes and the upper cheeks
	// (occlusion.go).
	Glasses bool
	// Fringe hangs hair over the forehead, as a share of the forehead's
	// height (0.6: most of it; occlusion.go).
	Fringe float64
	// Drift is the slow wandering of a seated head, face heights (0.02 a
	// person at a desk), on top of Motion's sway (pose.go).
	Drift float64
	// ScreenLight is the share of the face's light that comes from the
	// screen in front of it, whose content changes every few seconds (0.2:
	// a laptop in a dim room; light.go).
	ScreenLight float64
	// AutoExposure is the size of the camera's automatic exposure steps,
	// a fraction of the picture's level (0.03: a few percent every few
	// seconds, as webcams do); the white balance steps by a third of it
	// (camera.go).
	AutoExposure float64
	// ShotNoise adds photon shot noise: the noise grows with the light a
	// pixel collects, so a dim scene brought up by the camera's gain is
	// noisier than Noise alone says (camera.go).
	ShotNoise bool
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
	def(&c.PulseRed, pulseRatio[0])
	def(&c.PulseBlue, pulseRatio[2])
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
	case c.Melanin < 0 || c.Melanin > 0.45:
		return fmt.Errorf("melanin %v: want a volume fraction of 0 to 0.45", c.Melanin)
	case c.Pitch < -30 || c.Pitch > 35:
		return fmt.Errorf("pitch %v degrees: want -30 to 35", c.Pitch)
	case c.Fringe < 0 || c.Fringe > 1:
		return fmt.Errorf("fringe %v: want 0 to 1 of the forehead", c.Fringe)
	case c.Drift < 0 || c.Drift > 0.2:
		return fmt.Errorf("drift %v: want 0 to 0.2 face heights", c.Drift)
	case c.ScreenLight < 0 || c.ScreenLight > 0.8:
		return fmt.Errorf("screen light %v: want 0 to 0.8 of the face's light", c.ScreenLight)
	case c.PulseRed < 0 || c.PulseRed > 2 || c.PulseBlue < 0 || c.PulseBlue > 2:
		return fmt.Errorf("pulse signature red %v, blue %v: want 0 to 2 of green's change", c.PulseRed, c.PulseBlue)
	case c.AutoExposure < 0 || c.AutoExposure > 0.2:
		return fmt.Errorf("auto-exposure steps %v: want 0 to 0.2", c.AutoExposure)
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
	pose   pose   // the head's drift and bow over time
	camera camera // exposure and white balance steps
	screen screen // what the screen in front of the face shows
}

// New prepares a clip: it draws the physiology and the frame times and
// lays out the scene. Rendering happens frame by frame later.
func New(cfg Config) (*Clip, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	// The webcam effects draw from a stream of their own, so a clip
	// without them is drawn exactly as before they existed.
	webcam := rand.New(rand.NewPCG(cfg.Seed, 0x2545f4914f6cdd1d))
	c := &Clip{cfg: cfg}
	c.phys = newPhysiology(rng, cfg.Seconds, newHeartTrend(cfg.Seconds, cfg.HeartRate, cfg.HeartRateEnd), cfg.BreathingRate, cfg.RMSSD)
	c.times = frameTimes(cfg)
	var err error
	if c.scene, err = newScene(cfg, rng, webcam); err != nil {
		return nil, err
	}
	c.noiseK = rng.Uint64()
	c.pose = newPose(cfg, webcam)
	c.camera = newCamera(cfg, webcam)
	c.screen = newScreen(cfg, webcam)
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

// Truth is the ground truth written beside a clip.
type Truth struct {
	File   string `json:"file,omitempty"`
	Format string `json:"format,omitempty"`
	Codec  string `json:"codec,omitempty"`
	CRF    int    `json:"crf,omitempty"`
	// BitrateKbps is the target of a rate-controlled encoding, kbit/s.
	BitrateKbps int `json:"bitrateKbps,omitempty"`
	// KeyFrameEvery is the fixed key-frame interval in frames, 0 when the
	// encoder chose.
	KeyFrameEvery int `json:"keyFrameEvery,omitempty"`
	// Transcoded: the bit rate was reached as by a file made afterwards
	// (Encoding.Transcoded), not by a real-time encoder.
	Transcoded bool    `json:"transcoded,omitempty"`
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	FPS        float64 `json:"fps"` // nominal
	Frames     int     `json:"frames"`
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
	PulseRed       float64 `json:"pulseRed"`
	PulseBlue      float64 `json:"pulseBlue"`
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
	Melanin        float64 `json:"melanin,omitempty"`
	Pitch          float64 `json:"pitchDegrees,omitempty"`
	Glasses        bool    `json:"glasses,omitempty"`
	Fringe         float64 `json:"fringe,omitempty"`
	Drift          float64 `json:"driftFaceHeights,omitempty"`
	ScreenLight    float64 `json:"screenLight,omitempty"`
	AutoExposure   float64 `json:"autoExposure,omitempty"`
	ShotNoise      bool    `json:"shotNoise,omitempty"`
	// SkinPulse is the peak-to-peak relative change of green on the
	// skin after the skin tone's dilution (tone.go): PulseAmplitude for
	// the photo's own skin.
	SkinPulse float64 `json:"skinPulseGreen"`
}

// Truth returns the clip's ground truth (without the encoding fields).
func (c *Clip) Truth() Truth {
	beats, hr, rm := c.phys.truthWindow(c.cfg.Seconds)
	t := Truth{
		Width: c.cfg.Width, Height: c.cfg.Height, FPS: c.cfg.FPS, Frames: len(c.times),
		Seconds: c.cfg.Seconds, Seed: c.cfg.Seed,
		HeartRate: hr, BreathingRate: c.phys.meanBreathing(c.cfg.Seconds), RMSSD: rm,
		HRCourse:  c.phys.course(c.cfg.Seconds),
		BeatTimes: beats,
		Conditions: Conditions{
			PulseAmplitude: c.cfg.PulseAmplitude, PulseRed: c.cfg.PulseRed, PulseBlue: c.cfg.PulseBlue,
			Motion: c.cfg.Motion, Brightness: c.cfg.Brightness,
			Gain:      exposureGain(c.cfg.Brightness),
			FlickerHz: c.cfg.FlickerHz, FlickerDepth: c.cfg.FlickerDepth, Noise: c.cfg.Noise,
			FaceScale: c.cfg.FaceScale, Jitter: c.cfg.Jitter, DropEvery: c.cfg.DropEvery,
			HeartRateEnd: c.cfg.HeartRateEnd, Melanin: c.cfg.Melanin, Pitch: c.cfg.Pitch,
			Glasses: c.cfg.Glasses, Fringe: c.cfg.Fringe, Drift: c.cfg.Drift,
			ScreenLight: c.cfg.ScreenLight, AutoExposure: c.cfg.AutoExposure, ShotNoise: c.cfg.ShotNoise,
			SkinPulse: c.cfg.PulseAmplitude * c.scene.pulseScale[1],
		},
	}
	return t
}

// Len is the number of frames.
func (c *Clip) Len() int { return len(c.times) }

// Time is frame i's capture time.
func (c *Clip) Time(i int) time.Duration {
	return time.Duration(c.times[i] * float64(time.Second))
}
