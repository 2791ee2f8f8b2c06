package control

import (
	"encoding/json"
	"fmt"
	"io"
)

// jsonWindow feeds a json.Decoder from r while bounding how far the decoder
// may read ahead of what it has consumed: window bytes. A json.Decoder
// buffers a whole value (a string, a number, or a member read into a
// json.RawMessage) before returning it, and the blanks before a token too,
// so without a window one huge token could take any amount of memory. The
// window can change as the parse moves between parts of different bounds.
type jsonWindow struct {
	r      io.Reader
	dec    *json.Decoder
	read   int64 // bytes handed to the decoder
	window int64
}

// newWindowedDecoder returns a decoder of r whose look-ahead window starts
// at window bytes.
func newWindowedDecoder(r io.Reader, window int64) (*json.Decoder, *jsonWindow) {
	w := &jsonWindow{r: r, window: window}
	w.dec = json.NewDecoder(w)
	return w.dec, w
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
	return n, err
}
