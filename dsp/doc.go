// Package dsp turns a capture of a person into vital signs.
//
// It is pure computation: frames or signals with their capture times come in,
// variables with their error codes come out. It never logs, never reads the
// clock, never touches the network, the file system or a database, and starts
// no goroutines; a test keeps it so. Decoding files and running ffmpeg belong
// to dsp/media.
package dsp
