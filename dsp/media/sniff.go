package media

import (
	"bytes"
	"encoding/binary"
)

// SniffLen is how many leading bytes the sniffers need to decide.
const SniffLen = 64

// Container is a video container format, recognised by its content.
type Container string

// The video containers accepted.
const (
	MP4      Container = "mp4"
	MOV      Container = "mov"
	WebM     Container = "webm"
	Matroska Container = "matroska"
	AVI      Container = "avi"
	Y4M      Container = "y4m"
	IVF      Container = "ivf" // VP8/VP9 frames as pion's ivfwriter writes them
)

// demuxer is the ffmpeg input format that reads c; naming it stops ffmpeg
// from probing, so a file cannot pick a demuxer that opens other resources
// (a playlist, a concat list).
func (c Container) demuxer() string {
	switch c {
	case MP4, MOV:
		return "mov"
	case WebM, Matroska:
		return "matroska"
	case AVI:
		return "avi"
	case Y4M:
		return "yuv4mpegpipe"
	case IVF:
		return "ivf"
	}
	return ""
}

// SniffContainer recognises a video container from the first bytes of a file
// (SniffLen are enough).
func SniffContainer(head []byte) (Container, bool) {
	switch {
	case bytes.HasPrefix(head, []byte("YUV4MPEG2 ")):
		return Y4M, true
	case bytes.HasPrefix(head, []byte("DKIF")):
		return IVF, true
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("AVI ")):
		return AVI, true
	case bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		// EBML header: the DocType element (0x42 0x82) names the flavour.
		if i := bytes.Index(head, []byte{0x42, 0x82}); i >= 0 && bytes.HasPrefix(head[i+3:], []byte("webm")) {
			return WebM, true
		}
		return Matroska, true
	}
	if len(head) < 12 {
		return "", false
	}
	switch string(head[4:8]) {
	case "ftyp":
		major, compat := brands(head)
		// HEIF and AVIF images share the ISO base media format.
		if isHEIF(major, compat) || major == "avif" || major == "avis" {
			return "", false
		}
		if major == "qt  " {
			return MOV, true
		}
		return MP4, true
	case "moov", "mdat", "wide", "free", "skip", "pnot":
		// QuickTime files from before the ftyp box.
		return MOV, true
	}
	return "", false
}

// brands reads the major and compatible brands of an ISO base media file's
// leading ftyp box, as far as head holds them.
func brands(head []byte) (major string, compat []string) {
	size := int(binary.BigEndian.Uint32(head))
	if size < 16 || string(head[4:8]) != "ftyp" {
		return "", nil
	}
	major = string(head[8:12])
	end := min(size, len(head))
	for i := 16; i+4 <= end; i += 4 {
		compat = append(compat, string(head[i:i+4]))
	}
	return major, compat
}

// isHEIF reports whether the brands name a HEIF still image with HEVC coding
// (HEIC); AVIF, also HEIF, is not accepted.
func isHEIF(major string, compat []string) bool {
	heic := func(b string) bool { return b == "heic" || b == "heix" || b == "heim" || b == "heis" }
	if heic(major) {
		return true
	}
	if major == "avif" || major == "avis" {
		return false
	}
	for _, b := range compat {
		if heic(b) {
			return true
		}
	}
	return major == "mif1" || major == "msf1"
}

// ImageFormat is a still image format, recognised by its content.
type ImageFormat string

// The image formats accepted.
const (
	JPEG ImageFormat = "jpeg"
	PNG  ImageFormat = "png"
	BMP  ImageFormat = "bmp"
	WebP ImageFormat = "webp"
	HEIC ImageFormat = "heic"
)

// SniffImage recognises an image format from the first bytes of a file.
func SniffImage(head []byte) (ImageFormat, bool) {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG, true
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true
	case bytes.HasPrefix(head, []byte("BM")) && len(head) >= 18:
		return BMP, true
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return WebP, true
	case len(head) >= 16 && string(head[4:8]) == "ftyp":
		if major, compat := brands(head); isHEIF(major, compat) {
			return HEIC, true
		}
	}
	return "", false
}
