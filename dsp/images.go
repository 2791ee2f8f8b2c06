package dsp

import (
	"errors"
	"image"
	"iter"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/internal/stats"
)

// AnalyzeImages analyses still images (the images route): faceBmi
// from the face geometry, the median over the images that give an estimate
// (face.EstimateBMI documents the method and its limits), and bmi from the
// person's weight and height. Every other variable answers MISSING_CAPTURES,
// bpClass and healthScore included though the person's data alone could
// estimate them: the API computes only faceBmi and bmi from stills.
// signal is null. Decoding the files,
// and the codes for files that cannot be decoded (INVALID_IMAGE_TYPE,
// EXCEEDING_MAX_IMAGE, INVALID_IMAGE_SIZE), belong to the caller.
func AnalyzeImages(c *face.Cascade, imgs []image.Image, in Inputs) Result {
	return AnalyzeImageSeq(c, slices.Values(imgs), in)
}

// AnalyzeImageSeq is AnalyzeImages over images given one at a time, so
// that a caller can decode each only when it is needed and let it go after:
// one decoded picture at a time is in memory. imgs is not read when
// faceBmi is not wanted.
func AnalyzeImageSeq(c *face.Cascade, imgs iter.Seq[image.Image], in Inputs) Result {
	res := Result{Variables: map[string]Variable{}, Summary: Summary{Conformity: MissingCaptures}}
	for _, name := range AllVariables {
		if in.wants(name) {
			res.Variables[name] = fail(MissingCaptures)
		}
	}
	if in.wants(BMI) {
		res.Variables[BMI] = bmiVariable(in.Person)
	}
	if !in.wants(FaceBMI) {
		return res
	}
	var values []float64
	reason := Code("")
	for img := range imgs {
		if img == nil {
			continue
		}
		v, _, err := face.EstimateBMI(c, img)
		if err == nil {
			values = append(values, v)
			continue
		}
		if r := faceBMICode(err); rank(r) > rank(reason) {
			reason = r
		}
	}
	switch {
	case len(values) > 0:
		res.Variables[FaceBMI] = ok(round(stats.Median(values), 1))
	case reason == "":
		res.Variables[FaceBMI] = fail(MissingImage)
	default:
		res.Variables[FaceBMI] = fail(reason)
	}
	return res
}

// faceBMICode maps why face.EstimateBMI gave no value to a variable code:
// no face and a face too small are capture problems the person can fix; a
// face the method cannot read (turned, outline lost in the background) is
// a failure of the processor; an implausible result is out of range.
func faceBMICode(err error) Code {
	switch {
	case errors.Is(err, face.ErrNoFace):
		return ConformityFacePresence
	case errors.Is(err, face.ErrFaceTooSmall):
		return ConformityFaceSize
	case errors.Is(err, face.ErrOutOfRange):
		return OutOfRange
	}
	return ProcessorFail
}

// rank orders the faceBmi failure codes by how far the estimate got, so
// that with several images the most telling reason is reported.
func rank(c Code) int {
	return slices.Index([]Code{"", ConformityFacePresence, ConformityFaceSize, ProcessorFail, OutOfRange}, c)
}
