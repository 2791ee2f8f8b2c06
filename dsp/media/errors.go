package media

import "errors"

// Why an input was refused. Callers compare with errors.Is; the wrapped
// message adds detail for logs.
var (
	// ErrEmpty: the input has no bytes.
	ErrEmpty = errors.New("media: empty input")
	// ErrTooLarge: the input exceeds its byte limit.
	ErrTooLarge = errors.New("media: input too large")
	// ErrTooManyPixels: the image or video frame exceeds its pixel limit.
	ErrTooManyPixels = errors.New("media: image too large")
	// ErrUnsupported: the content is not one of the accepted formats,
	// whatever its name or declared type says.
	ErrUnsupported = errors.New("media: unsupported or unrecognised format")
	// ErrCorrupt: the format was recognised but the data cannot be decoded
	// (damaged or truncated).
	ErrCorrupt = errors.New("media: corrupt or truncated data")
	// ErrNoVideo: the container holds no video stream.
	ErrNoVideo = errors.New("media: no video stream")
	// ErrNoFrames: the video stream decoded to no frame at all.
	ErrNoFrames = errors.New("media: video has no decodable frame")
	// ErrTooLong: the video has more frames than allowed.
	ErrTooLong = errors.New("media: video too long")
	// ErrTimeout: decoding did not finish before the deadline.
	ErrTimeout = errors.New("media: decoding timed out")
	// ErrDecoderMissing: the external decoder (ffmpeg, heif-convert) is not
	// installed.
	ErrDecoderMissing = errors.New("media: decoder not installed")
)
