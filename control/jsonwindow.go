package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonWindow feeds a json.Decoder from r while bounding how far the decoder
// may read ahead of what it has consumed: window bytes. A json.Decoder
// buffers a whole value (a string, a number, or a member read into a
// json.RawMessage) before returning it, and the blanks before a token too,
// so without a window one huge token could take any amount of memory. The
// window can change as the parse moves between parts of different bounds.
//
// How far ahead the decoder must read differs between implementations of
// encoding/json (the one built on encoding/json/v2, the default from Go
// 1.27, holds the colon before a member's value too), so a bound the API
// promises is checked on InputOffset, which they agree on, and the window
// only keeps memory bounded.
type jsonWindow struct {
	r      io.Reader
	dec    *json.Decoder
	read   int64 // bytes handed to the decoder
	ended  bool  // r has reported io.EOF
	window int64
}

// newWindowedDecoder returns a decoder of r (its dec) whose look-ahead
// window starts at window bytes.
func newWindowedDecoder(r io.Reader, window int64) *jsonWindow {
	w := &jsonWindow{r: r, window: window}
	w.dec = json.NewDecoder(w)
	return w
}

// errWindow is a single value (or run of blanks) over its window.
type errWindow struct{ window int64 }

func (e errWindow) Error() string {
	return fmt.Sprintf("a value is over %d bytes", e.window)
}

func (w *jsonWindow) Read(p []byte) (int, error) {
	room := w.window - (w.read - w.dec.InputOffset())
	if room <= 0 {
		return 0, errWindow{w.window}
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := w.r.Read(p)
	w.read += int64(n)
	w.ended = w.ended || errors.Is(err, io.EOF)
	return n, err
}

// cutShort reports whether err is the decoder meeting the end of the input
// inside a value. encoding/json said so with io.EOF or io.ErrUnexpectedEOF;
// built on encoding/json/v2, it may say it with a syntax error at the
// offset where the input ended.
func (w *jsonWindow) cutShort(err error) bool {
	var syntax *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		w.ended && errors.As(err, &syntax) && syntax.Offset >= w.read
}
