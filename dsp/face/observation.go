package face

import "image"

// Region is one skin region of interest on the face.
type Region int

// The regions of interest: the forehead between the eyebrows and the
// hairline, and the two cheeks below the eyes beside the nose. They carry the
// strongest pulse and move least with expression (Kwon et al., "ROI analysis
// for remote photoplethysmography on facial video", EMBC 2015). A later
// comparison of 28 facial regions on four public data sets (its tables in
// the GitHub repository shuoli199909/optimal_roi_rppg) ranks the glabella
// and the cheekbones first, the lower forehead close behind, and the sides
// of the nose, the lips, the temples and the lower cheeks far behind; in
// dim light (10-25 lux) the glabella and the cheekbones kept their lead
// where the forehead fell back. On one real face of that data
// (docs/accuracy.md) the forehead's and the cheekbones' colours read the
// same rate within 0.2 bpm.
// Left and right are as seen in the image.
const (
	Forehead Region = iota
	LeftCheek
	RightCheek
	NumRegions
)

func (r Region) String() string {
	switch r {
	case Forehead:
		return "forehead"
	case LeftCheek:
		return "left cheek"
	case RightCheek:
		return "right cheek"
	}
	return "region?"
}

// Colour is the robust mean colour of skin pixels: each channel's 20% trimmed
// mean (10% cut from each end), in 8-bit levels 0-255 of the decoded frame
// (sRGB-encoded, not linearised). Pixels is how many skin pixels it averages;
// with none, R, G and B are 0.
type Colour struct {
	R, G, B float64
	Pixels  int
}

// Observation is what the tracker sees in one frame. Lengths are in frame
// pixels unless a field says otherwise; colours and lumas in 8-bit levels.
type Observation struct {
	// Face is true when a face is being tracked in this frame. When false,
	// only SceneLuma is set.
	Face bool
	// Detected is true when the detector ran in this frame and confirmed
	// the face; between detections the box follows the measured motion.
	Detected bool
	// Box is the tracked face square, about eyebrows-to-chin tall, in the
	// image's own coordinates (image.Image Bounds).
	Box image.Rectangle
	// FaceFraction is Box's height over the frame height (dimensionless,
	// 0-1+): how much of the picture the face fills.
	FaceFraction float64
	// CentreX, CentreY and Side are Box's centre and side in the image's
	// coordinates before rounding to whole pixels: the face's position and
	// size to a fraction of a pixel, the motion references of the pulse.
	CentreX, CentreY, Side float64
	// Landmarks is true when the regions of interest were placed from the
	// eyes and mouth that the neural detector found (the last time it ran
	// on this face), false when they were placed by the box alone.
	Landmarks bool
	// Roll is the turn of the eye line from horizontal, radians, positive
	// clockwise in the image (the image-right eye lower), -π to π (near ±π
	// for a face upside down); 0 without landmarks.
	Roll float64

	// R, G, B are the robust means over the skin pixels of all regions of
	// interest together: the regions' means weighted by their skin pixels.
	R, G, B float64
	// SkinPixels counts the pixels the means are taken over.
	SkinPixels int
	// SkinFraction is SkinPixels over all pixels of the regions of interest
	// (0-1); a low value means hair, a hand or shadow covers them.
	SkinFraction float64
	// Regions holds the same means per region of interest.
	Regions [NumRegions]Colour
	// Outlines are the corners of each region of interest in the image's
	// coordinates (a pixel's centre is half a pixel in from its corner), in
	// order around it: where the means of Regions were read, from the skin
	// pixels within.
	Outlines [NumRegions][4][2]float64
	// Luma is the BT.601 luma of the skin mean, 0.299R+0.587G+0.114B, 0-255:
	// how well the face is lit.
	Luma float64

	// SceneLuma is the mean BT.601 luma of the whole frame (sampled on a
	// 4-pixel grid), 0-255, set even without a face: flicker of the room
	// light shows here.
	SceneLuma float64
	// BackgroundLuma is the mean BT.601 luma, 0-255, of the frame outside
	// the face, its hair and the body below it (the face box widened to
	// 1.6 box sides, from 0.9 box sides above its centre down to the
	// bottom of the frame), on the same grid as SceneLuma: the light on the
	// room without the pulse, the reference that tells a change of light
	// from a change of skin colour. 0 when less than a tenth of the frame
	// lies outside, or without a face.
	BackgroundLuma float64
	// Motion is how far the face moved since the previous frame, in face
	// heights (Box heights): the length of the measured displacement of the
	// face's texture. It is 0 on the frame a face is (re)acquired.
	Motion float64
}
