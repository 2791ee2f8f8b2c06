package clip

import (
	"math"
	"math/rand/v2"
)

// pose is how the head wanders and bows over the clip, beyond Motion's
// regular sway. A seated person's head drifts by a few millimetres over
// tens of seconds as the trunk sways and the posture settles, and someone
// reading a screen nods a little as the gaze moves down a page. Both are
// modelled as Ornstein-Uhlenbeck processes (random, with a correlation
// time, staying near their mean), sampled every poseStepS and
// interpolated: drift in x and y with standard deviation Drift face
// heights (y at 0.7 of x) and an 8 s correlation time, and a bow of ±1.5°
// (standard deviation) with a 5 s correlation time around Pitch when the
// head is bowed.
type pose struct {
	dx, dy, pitch []float64 // face heights, face heights, degrees
}

const (
	poseStepS          = 0.1
	driftTauS, nodTauS = 8.0, 5.0
	nodDegrees         = 1.5
	driftVertical      = 0.7
	degrees            = math.Pi / 180
	lightElevation     = 30 * degrees // ceiling lights in front of the person
	ambientLight       = 0.4          // share of the light from all around
	hiddenShade        = 0.05         // floor of the shading ratio
)

func newPose(c Config, rng *rand.Rand) pose {
	n := int(c.Seconds/poseStepS) + 2
	var p pose
	if c.Drift > 0 {
		p.dx = ou(rng, n, driftTauS, c.Drift)
		p.dy = ou(rng, n, driftTauS, driftVertical*c.Drift)
	}
	if c.Pitch != 0 {
		p.pitch = ou(rng, n, nodTauS, nodDegrees)
	}
	return p
}

// ou draws n samples, poseStepS apart, of an Ornstein-Uhlenbeck process
// with correlation time tau and standard deviation sd, started from its
// stationary distribution.
func ou(rng *rand.Rand, n int, tau, sd float64) []float64 {
	a := math.Exp(-poseStepS / tau)
	b := math.Sqrt(1 - a*a)
	x := make([]float64, n)
	x[0] = sd * rng.NormFloat64()
	for i := 1; i < n; i++ {
		x[i] = a*x[i-1] + b*sd*rng.NormFloat64()
	}
	return x
}

// sampleAt interpolates a pose series at t (0 for an empty one).
func sampleAt(x []float64, t float64) float64 {
	if len(x) == 0 {
		return 0
	}
	u := max(0, t/poseStepS)
	i := min(int(u), len(x)-2)
	f := u - float64(i)
	return x[i]*(1-f) + x[i+1]*f
}

// rowSource is where a canvas row samples the photo: photo row py with
// weight fy and row py+1 with 1-fy, the head's shading there relative to
// the photo's.
type rowSource struct {
	py    int
	fy    float32
	shade float32
}

// The head in profile, for bowing it: an ellipse centred near the ears
// (headCentre, a fraction of the photo's height from its top) with a
// vertical half-axis of headUp and a depth half-axis of headDepth photo
// heights. The photo shows the head from crown to shoulders, about 30
// cm, and a head is about 19 cm deep: headDepth 0.3. The face's profile
// from brow to chin is flatter than the skull's, hence the long vertical
// axis. Below the chin (chinRow) the neck keeps its shape.
const (
	headCentre, headUp, headDepth = 0.47, 0.55, 0.30
	chinRow                       = 0.865
)

// rows fills dst (one per canvas row) for the photo's top edge at canvas
// row oy and the head bowed by pitch degrees.
//
// Upright, canvas row y shows photo row y-oy. Bowed, the head turns about
// a horizontal axis through the ellipse's centre (x does not change in
// such a turn; the view is orthographic): the point at parameter θ, at
// height headUp·sin θ and depth headDepth·cos θ, is seen at height
//
//	y' = headUp·sin θ·cos φ - headDepth·cos θ·sin φ = R·sin(θ - ψ)
//
// with R = √((headUp·cos φ)² + (headDepth·sin φ)²) and ψ = atan2(headDepth
// sin φ, headUp cos φ). The face moves down (by headDepth·sin φ at the
// eyes), the forehead turns towards the camera and holds its size while
// the cheeks and the chin turn away and shrink, and the crown comes into
// view. Each row inverts the map: it shows θ = ψ + asin(y'/R). Below the
// chin the rows follow the chin down unchanged.
//
// Shading: the room's light comes from ceiling lights at lightElevation
// above the line of sight plus ambientLight from all around, and a
// surface whose normal points at elevation ε gets ambient + (1-ambient)
// cos(ε - elevation) (Lambert). The photo was lit upright, so each row's
// shade is the illumination with its normal turned down by φ over the
// illumination upright: bowing darkens the cheeks and the chin more than
// the forehead.
func (s *scene) rows(oy, pitch float64, dst []rowSource) {
	if pitch == 0 {
		iy := int(math.Floor(oy))
		fy := float32(oy - float64(iy))
		for y := range dst {
			dst[y] = rowSource{py: y - iy - 1, fy: fy, shade: 1}
		}
		return
	}
	ph := float64(s.ph)
	phi := pitch * degrees
	r := math.Hypot(headUp*math.Cos(phi), headDepth*math.Sin(phi))
	psi := math.Atan2(headDepth*math.Sin(phi), headUp*math.Cos(phi))
	seen := func(theta float64) float64 { return r * math.Sin(theta-psi) }
	chin := math.Asin((headCentre - chinRow) / headUp)
	light := func(elevation float64) float64 {
		return ambientLight + (1-ambientLight)*max(0, math.Cos(elevation-lightElevation))
	}
	for y := range dst {
		u := float64(y) - oy    // the photo row shown upright
		up := headCentre - u/ph // its height above the centre, photo heights
		src, shade := u, 1.0
		switch {
		case up < seen(chin):
			// The neck, in the chin's shade.
			src = (chinRow + seen(chin) - up) * ph
			normal := math.Atan2(math.Sin(chin)/headUp, math.Cos(chin)/headDepth)
			shade = max(hiddenShade, light(normal-phi)/light(normal))
		case up < r:
			theta := min(max(psi+math.Asin(up/r), -math.Pi/2), math.Pi/2)
			src = (headCentre - headUp*math.Sin(theta)) * ph
			normal := math.Atan2(math.Sin(theta)/headUp, math.Cos(theta)/headDepth)
			shade = max(hiddenShade, light(normal-phi)/light(normal))
		}
		py := math.Floor(src)
		dst[y] = rowSource{py: int(py), fy: float32(1 - (src - py)), shade: float32(shade)}
	}
}
