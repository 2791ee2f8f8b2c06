// Package face finds a face in video frames and measures its skin colour, the
// raw material of remote photoplethysmography.
//
// LoadCascade parses the embedded face model once per process; NewTracker
// follows the largest face of one stream frame by frame and Observe returns,
// per frame, the face box, the robust mean colour of the skin on the forehead
// and cheeks, the lighting and the motion (see Observation for units).
// EstimateBMI estimates body mass index from the geometry of a face in a
// still image (method, source and limits in bmi.go).
//
// Detection uses pigo's PICO cascades (github.com/esimov/pigo, MIT licence,
// copied under cascade/) on a downscaled grayscale image: the whole frame
// while no face is tracked, a window around the face every few frames once it
// is. Between detections block matching follows the face, so the regions of
// interest move with the head instead of jittering with the detector.
// Frames are read in place: RGBA, JPEG frames' full-range YCbCr and video's
// limited-range YCbCr (LimitedRange), BT.601 or BT.709, whose levels are
// expanded through tables as they are read. The skin model and the
// detector see BT.601 values whatever the frame: a BT.709 frame's pixels
// are converted to RGB and their BT.601 chroma and luma computed from it
// (the luma as BT.709's plus two chroma lookups), about 0.55 ms per 480x270
// frame against 0.49 ms for BT.601 (BenchmarkObserve, same run). Measured as CPU time on the development machine:
// about 0.73 ms per 640x480 RGBA frame, 0.58 ms per 640x480 YCbCr frame, and
// per 480x270 frame 0.49 ms limited-range against 0.55 ms as RGBA (same run),
// with a face, detection amortised, and no allocation per frame
// (BenchmarkObserve).
//
// The colour means are built to be smooth: regions of interest with
// fractional edges (edge pixels count by the part inside), a soft skin mask,
// a box that stays put while the detector's re-checks fall within a dead
// band, and motion measured against a key frame so it does not drift. On a
// swaying synthetic face the frame-to-frame wobble of the skin mean is 0.035
// levels, about what the camera noise alone gives, against 0.2 levels (as
// much as a pulse) with whole-pixel regions and a hard mask.
//
// The package is pure computation like its parent dsp: no I/O, no clock, no
// goroutines, and it never imports dsp.
package face
