package face

import (
	"math"
	"testing"
)

// TestRegionsFollowPose checks where the regions go in a box of side 1 at
// the origin: the frontal layout without landmarks and with a frontal
// face's; turned with the eye line; and for a head turned sideways, the
// far cheek beside the nose and narrow, the near one full width.
func TestRegionsFollowPose(t *testing.T) {
	type want struct{ x, y, hw, hh float64 }
	frontal := [NumRegions]want{
		Forehead:   {0, -0.28, 0.17, 0.08},
		LeftCheek:  {-0.21, -centreBelow + 0.4375*frontalMouth, 0.09, 0.2125 * frontalMouth},
		RightCheek: {0.21, -centreBelow + 0.4375*frontalMouth, 0.09, 0.2125 * frontalMouth},
	}
	front := pose{landmarks: true, eyeX: [2]float64{-frontalEyes / 2, frontalEyes / 2}, mouth: frontalMouth}
	leaning := front
	leaning.roll = 30 * math.Pi / 180
	// Turned to the image-right: the nose tip moves right, the right eye
	// comes towards it.
	sideways := pose{landmarks: true, eyeX: [2]float64{-0.2, 0.1}, nose: 0.06, mouth: frontalMouth}
	turnedFrontal := frontal
	for r, w := range frontal {
		sin, cos := math.Sincos(leaning.roll)
		turnedFrontal[r].x, turnedFrontal[r].y = w.x*cos-w.y*sin, w.x*sin+w.y*cos
	}
	side := frontal
	side[Forehead].x, side[Forehead].hw = -0.05, 0.17*0.3/frontalEyes
	side[LeftCheek].x = 0.06 + 1.2*(-0.26)
	side[RightCheek].x, side[RightCheek].hw = 0.06+1.2*0.04, 0.09*0.08/frontalEyes
	for _, tc := range []struct {
		name string
		p    pose
		want [NumRegions]want
		roll float64
	}{
		{"no landmarks", pose{}, frontal, 0},
		{"frontal", front, frontal, 0},
		{"leaning 30 deg", leaning, turnedFrontal, leaning.roll},
		{"turned sideways", sideways, side, 0},
	} {
		for r := range NumRegions {
			a := tc.p.roi(r, 0, 0, 1)
			w := tc.want[r]
			if math.Hypot(a.cx-w.x, a.cy-w.y) > 1e-9 || math.Abs(a.hw-w.hw) > 1e-9 || math.Abs(a.hh-w.hh) > 1e-9 ||
				math.Abs(math.Atan2(a.sin, a.cos)-tc.roll) > 1e-9 {
				t.Errorf("%s, %v: centre (%.3f, %.3f), half sizes %.3f x %.3f, turned %.2f; want (%.3f, %.3f), %.3f x %.3f, %.2f",
					tc.name, r, a.cx, a.cy, a.hw, a.hh, math.Atan2(a.sin, a.cos), w.x, w.y, w.hw, w.hh, tc.roll)
			}
		}
	}
}

// TestPoseDiffersAcrossHalfTurn: an upside-down face's roll jitters about
// ±π; a step across it is as small as it looks, not a whole turn.
func TestPoseDiffersAcrossHalfTurn(t *testing.T) {
	p := pose{landmarks: true, roll: math.Pi - 0.01}
	q := p
	q.roll = -math.Pi + 0.01
	if p.differs(q) {
		t.Errorf("roll %.3f to %.3f counted as a change", p.roll, q.roll)
	}
	q.roll = -math.Pi + 0.1
	if !p.differs(q) {
		t.Errorf("roll %.3f to %.3f (6 degrees) not counted as a change", p.roll, q.roll)
	}
}
