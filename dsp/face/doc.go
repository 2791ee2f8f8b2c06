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
// Two detectors find the face. BlazeFace (MediaPipe's short-range model,
// Apache-2.0, model/PROVENANCE.md; blazeface.go and cnn.go run it in pure
// Go, checked against TensorFlow Lite's own outputs) finds faces behind
// glasses, turned, tilted or bowed over a screen and gives the eyes, nose
// and mouth; it costs about 15-25 ms of CPU a run. pigo's PICO cascade
// (github.com/esimov/pigo, MIT licence, copied under cascade/) costs a
// fraction of a millisecond but sees mainly upright, frontal faces, and
// finds faces smaller than BlazeFace's 128-pixel view of the frame does.
// The choice was measured on labelled photos (make accuracy, face
// detection): the tracker searches with BlazeFace, then the cascade, and
// with BlazeFace on one tile of the frame at a time for faces too small
// for its view of the whole frame; re-checks a tracked face with the cascade every 5 frames and with
// BlazeFace when the cascade misses (then every 10 frames); and re-reads
// the landmarks with BlazeFace once a second, which turns and moves the
// regions of interest with the head. Between detections block matching
// follows the face, so the regions move with the head instead of
// jittering with the detector.
// Frames are read in place: RGBA, JPEG frames' full-range YCbCr and video's
// limited-range YCbCr (LimitedRange), BT.601 or BT.709, whose levels are
// expanded through tables as they are read. The skin model and the
// detector see BT.601 values whatever the frame: a BT.709 frame's pixels
// are converted to RGB and their BT.601 chroma and luma computed from it
// (the luma as BT.709's plus two chroma lookups), about 0.55 ms per 480x270
// frame against 0.49 ms for BT.601 (BenchmarkObserve, same run). Measured as CPU time on the development machine
// before BlazeFace: about 0.73 ms per 640x480 RGBA frame, 0.58 ms per
// 640x480 YCbCr frame, and per 480x270 frame 0.49 ms limited-range against
// 0.55 ms as RGBA (same run), with a face, detection amortised, and no
// allocation per frame (BenchmarkObserve). BlazeFace's once-a-second run
// adds about 0.5-0.8 ms a frame on average (BenchmarkObserve's cpu-ns/op,
// measured on a heavily shared machine: 1.30 to 2.0 ms for RGBA 640x480,
// 0.77 to 1.4-1.8 ms for YCbCr), still with no allocation per frame; a
// frame without a face costs more, as every sixth frame is searched by
// both detectors (about 2 ms a frame on a plain scene, 1 ms once idle).
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
