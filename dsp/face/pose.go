package face

import (
	"image"
	"math"
)

// pose is where the face's parts lie in the tracked box, read from
// BlazeFace's landmarks: how far the eye line is turned (roll), where the
// eyes and the nose lie along it and how far the mouth is below them,
// relative to the same face seen from the front. Without landmarks it is the zero pose,
// which places the regions as on a frontal, upright face.
type pose struct {
	landmarks bool
	roll      float64 // radians, clockwise in the image
	// eyeX are the eyes' positions along the eye line from the box centre,
	// in box sizes: the image-left and the image-right eye.
	eyeX [2]float64
	// nose is the nose tip's position along the eye line from the box
	// centre, in box sizes: it moves towards the far side as the head
	// turns.
	nose float64
	// mouth is the distance from the eye line down to the mouth, in box
	// sizes.
	mouth float64
}

// Proportions of the tracker's box (the cascade's: centred just below the
// eyes, eyebrows to chin) against BlazeFace's landmarks, measured on the
// frontal test photo at six positions and two sizes: the box side is 1.18
// times BlazeFace's box width, its centre 0.065 sides below the eyes' midpoint;
// the eyes are 0.35 sides apart and the mouth 0.377 sides below them.
const (
	boxOverBlaze  = 1.18
	centreBelow   = 0.065
	frontalEyes   = 0.35
	frontalMouth  = 0.377
	poseRollStep  = 3 * math.Pi / 180 // setPose's threshold on roll
	poseShapeStep = 0.03              // and on eyes and mouth, box sizes
)

// blazeBox is a BlazeFace detection in the tracker's terms.
type blazeBox struct {
	cx, cy, size float64
	pose         pose
}

// rect is the box rounded to whole pixels.
func (b blazeBox) rect() image.Rectangle {
	h := b.size / 2
	return image.Rect(int(b.cx-h+0.5), int(b.cy-h+0.5), int(b.cx+h+0.5), int(b.cy+h+0.5))
}

// toBox converts a detection: the box from the eyes' midpoint and the
// detector's width, the pose from the eyes and the mouth.
func (d blazeFace) toBox() blazeBox {
	re, le, nose, mouth := d.keys[keyRightEye], d.keys[keyLeftEye], d.keys[keyNose], d.keys[keyMouth]
	roll := math.Atan2(le[1]-re[1], le[0]-re[0])
	ux, uy := math.Cos(roll), math.Sin(roll) // along the eye line
	vx, vy := -uy, ux                        // down the face
	mx, my := (re[0]+le[0])/2, (re[1]+le[1])/2
	s := boxOverBlaze * (d.x1 - d.x0)
	b := blazeBox{cx: mx + centreBelow*s*vx, cy: my + centreBelow*s*vy, size: s}
	along := func(p [2]float64) float64 { return ((p[0]-b.cx)*ux + (p[1]-b.cy)*uy) / s }
	b.pose = pose{
		landmarks: true,
		roll:      roll,
		eyeX:      [2]float64{along(re), along(le)},
		nose:      along(nose),
		mouth:     ((mouth[0]-mx)*vx + (mouth[1]-my)*vy) / s,
	}
	return b
}

// differs reports whether q moved far enough from p to re-place the
// regions.
func (p pose) differs(q pose) bool {
	return p.landmarks != q.landmarks || math.Abs(math.Remainder(p.roll-q.roll, 2*math.Pi)) > poseRollStep ||
		math.Abs(p.eyeX[0]-q.eyeX[0]) > poseShapeStep || math.Abs(p.eyeX[1]-q.eyeX[1]) > poseShapeStep ||
		math.Abs(p.nose-q.nose) > poseShapeStep || math.Abs(p.mouth-q.mouth) > poseShapeStep
}

// roi returns region r of the box (cx, cy, s) in frame pixels. On a
// frontal, upright face (and without landmarks) the forehead spans 0.34
// box sizes across, 0.20 to 0.36 above the centre, and each cheek 0.18
// across and 0.02 to 0.18 below it, centred 0.21 from the middle: below
// the eyes, beside the nose. With landmarks the regions turn with the eye
// line, as whole rectangles, so the forehead's corners stay off the hair
// and eyebrows however far the head leans; the forehead narrows as the
// eyes come closer; each cheek sits beside the nose, 1.2 times as far from
// it as its own eye, and narrows with that distance, which is where a
// rigid head turned sideways puts it (the far cheek comes in towards the
// nose, foreshortened, instead of onto the edge of the face); and the
// cheeks keep their place between the eyes and the mouth when the head
// bows and that distance shrinks, instead of sliding onto the mouth and
// chin.
func (p pose) roi(r Region, cx, cy, s float64) area {
	eyes := [2]float64{-frontalEyes / 2, frontalEyes / 2}
	mouth, narrow, nose := frontalMouth, 1.0, 0.0
	if p.landmarks {
		eyes = p.eyeX
		mouth = min(p.mouth, frontalMouth)
		narrow = min(1, (p.eyeX[1]-p.eyeX[0])/frontalEyes)
		nose = p.nose
	}
	// Centre (x, y) and half sizes in box sizes, in the face's own frame:
	// x along the eye line, y down from the box centre.
	var x, y, hw, hh float64
	switch r {
	case Forehead:
		x, y, hw, hh = (eyes[0]+eyes[1])/2, -0.28, 0.17*narrow, 0.08
	case LeftCheek, RightCheek:
		// 0.225 to 0.65 of the way from the eyes to the mouth.
		top, bottom := -centreBelow+0.225*mouth, -centreBelow+0.65*mouth
		// Beside the nose, 1.2 times as far from it as the eye, and as
		// wide as that distance allows: a turned head brings the far
		// cheek towards the nose and foreshortens it.
		e := eyes[r-LeftCheek]
		x, y, hw, hh = nose+1.2*(e-nose), (top+bottom)/2, 0.09*min(1, 2*math.Abs(e-nose)/frontalEyes), (bottom-top)/2
	}
	sin, cos := math.Sincos(p.roll)
	return area{cx: cx + s*(x*cos-y*sin), cy: cy + s*(x*sin+y*cos), hw: hw * s, hh: hh * s, sin: sin, cos: cos}
}
