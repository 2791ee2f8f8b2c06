package face

import "math"

// pose is where the face's parts lie in the tracked box, read from
// BlazeFace's landmarks: how far the eye line is turned (roll), how far
// the eyes are apart and how far the mouth is below them, relative to the
// same face seen from the front. Without landmarks it is the zero pose,
// which places the regions as on a frontal, upright face.
type pose struct {
	landmarks bool
	roll      float64 // radians, clockwise in the image
	// eyeX are the eyes' positions along the eye line from the box centre,
	// in box sizes: the image-left and the image-right eye.
	eyeX [2]float64
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

// toBox converts a detection: the box from the eyes' midpoint and the
// detector's width, the pose from the eyes and the mouth.
func (d blazeFace) toBox() blazeBox {
	re, le, mouth := d.keys[keyRightEye], d.keys[keyLeftEye], d.keys[keyMouth]
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
		mouth:     ((mouth[0]-mx)*vx + (mouth[1]-my)*vy) / s,
	}
	return b
}

// differs reports whether q moved far enough from p to re-place the
// regions.
func (p pose) differs(q pose) bool {
	return p.landmarks != q.landmarks || math.Abs(p.roll-q.roll) > poseRollStep ||
		math.Abs(p.eyeX[0]-q.eyeX[0]) > poseShapeStep || math.Abs(p.eyeX[1]-q.eyeX[1]) > poseShapeStep ||
		math.Abs(p.mouth-q.mouth) > poseShapeStep
}

// roi returns region r of the box (cx, cy, s) in frame pixels, clipped to
// the frame. On a frontal, upright face (and without landmarks) the
// forehead spans 0.34 box sizes across, 0.20 to 0.36 above the centre, and
// each cheek 0.18 across and 0.02 to 0.18 below it, centred 0.21 from the
// middle: below the eyes, beside the nose. With landmarks the regions turn
// with the eye line, each cheek sits under its own eye (a turned head
// brings the far eye and cheek in) and narrows as the eyes come closer, and
// the cheeks keep their place between the eyes and the mouth when the head
// bows and that distance shrinks, instead of sliding onto the mouth and
// chin. The regions stay upright rectangles: at the 30 degrees of roll the
// tracker is built for, their centres move with the turn and their corners
// stay on skin.
func (p pose) roi(r Region, cx, cy, s float64, w, h int) area {
	eyes := [2]float64{-frontalEyes / 2, frontalEyes / 2}
	mouth, narrow := frontalMouth, 1.0
	if p.landmarks {
		eyes = p.eyeX
		mouth = min(p.mouth, frontalMouth)
		narrow = min(1, (p.eyeX[1]-p.eyeX[0])/frontalEyes)
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
		x, y, hw, hh = 1.2*eyes[r-LeftCheek], (top+bottom)/2, 0.09*narrow, (bottom-top)/2
	}
	sin, cos := math.Sincos(p.roll)
	fx, fy := cx+s*(x*cos-y*sin), cy+s*(x*sin+y*cos)
	clip := func(v float64, hi int) float64 { return min(max(v, 0), float64(hi)) }
	return area{
		x0: clip(fx-hw*s, w), x1: clip(fx+hw*s, w),
		y0: clip(fy-hh*s, h), y1: clip(fy+hh*s, h),
	}
}
