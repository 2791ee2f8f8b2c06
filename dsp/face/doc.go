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
// Measured on one core of the development machine: about 0.8 ms per 640x480
// RGBA frame and 0.6 ms per YCbCr frame with a face, detection amortised, and
// no allocation per frame (BenchmarkObserve).
//
// The package is pure computation like its parent dsp: no I/O, no clock, no
// goroutines, and it never imports dsp.
package face
