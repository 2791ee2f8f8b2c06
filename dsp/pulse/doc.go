// Package pulse turns colour or intensity traces into a pulse wave.
//
// Camera traces (mean skin R, G, B per frame) carry the blood-volume pulse as
// a tiny colour change buried under changes of light and motion. POS (Wang
// et al. 2017) and CHROM (de Haan & Jeanne 2013) are two published projections
// of the normalised colour that cancel most of those; FromRGB computes both
// and keeps the one whose spectrum shows the clearer pulse, or the green
// channel alone when it confirms that pulse's rate with a clearer spectrum
// still (under steady light green has the least noise). Contact traces (a
// finger on the lens) need only detrending. Either way the result is oriented
// so that its systolic upstroke rises (Orient).
//
// All inputs are uniformly sampled (see dsp/resample).
package pulse
