// Package media decodes what users upload or stream: videos through ffmpeg
// and still images in pure Go (HEIC through libheif's heif-convert). It is the
// only code of the service that runs ffmpeg or decodes image files, and it
// imports only the standard library and golang.org/x/image.
//
// Every entry point bounds what outside data can cost before paying it: a byte
// limit on the input, a pixel limit read from the header before an image is
// decoded, a deadline and a frame-count limit on videos. Containers and image
// formats are recognised by their content, never by a file name or a declared
// type, and ffmpeg is told which demuxer to use and may open nothing but the
// one input, so a crafted file cannot make it read other files or URLs.
//
// Videos are delivered frame by frame to a callback as *image.RGBA, averaged
// down by ffmpeg with area-accurate scaling (the tiny skin colour changes of
// the pulse survive it, where nearest or bilinear scaling adds aliasing), with
// each frame's presentation time from the container, so variable frame rates
// keep their real timing. Memory stays bounded: three frame buffers are
// reused, so ffmpeg can decode ahead while the caller works on a frame.
package media
