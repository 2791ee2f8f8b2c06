// Package filter designs and applies the digital filters of the pulse
// pipeline: Butterworth low-, high- and band-pass filters as cascades of
// second-order sections, zero-phase (forward-backward) filtering, moving
// averages and smoothness-priors detrending.
//
// gonum has FFTs and windows but no filter design, so the designs live here,
// each with its formula and source. Functions follow gonum's convention: a nil
// dst allocates, a non-nil dst of the wrong length panics, and no function
// allocates when given its buffers.
package filter
