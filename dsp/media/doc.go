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
// Videos are delivered frame by frame to a callback as *YCbCr: 4:4:4 in
// limited ("tv") range with the BT.709 matrix when the video is tagged so
// and BT.601 otherwise, a form ffmpeg converts to fast (no RGB, 3 bytes a
// pixel through the pipe instead of 4), which the face tracker reads in
// place and expands itself (face.LimitedRange). Chroma
// keeps full resolution because the skin mask is decided pixel by pixel
// from it: 4:2:0 would halve the pipe again, but on the encoded synthetic
// clips it changed a breathing count (s01, 23.2 to 16.0 /min) that 4:4:4
// keeps. ffmpeg
// averages the frames down with area-accurate scaling (the tiny skin colour
// changes of the pulse survive it, where nearest or bilinear scaling adds
// aliasing), and each frame keeps its presentation time from the container,
// so variable frame rates keep their real timing. Memory stays bounded: three
// frame buffers are reused, so ffmpeg can decode ahead while the caller works
// on a frame.
package media
