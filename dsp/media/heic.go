package media

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// decodeHEIC decodes a HEIC image with libheif's heif-convert. The image
// sizes declared in the file (its ispe properties) are checked against the
// pixel limit first; heif-convert then writes a JPEG at quality 95 (its PNG
// writer refuses some embedded colour profiles) into a private temporary
// directory that is removed before returning.
func decodeHEIC(ctx context.Context, data []byte, opt ImageOptions) (image.Image, error) {
	w, h, err := heifSize(data)
	if err != nil {
		return nil, err
	}
	if err := checkPixels(w, h, opt.MaxPixels); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pulsewire-heic-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in.heic"), filepath.Join(dir, "out.jpg")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, opt.HeifConvert, "--quiet", "-q", "95", in, out)
	msg, err := cmd.CombinedOutput()
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %v", ErrDecoderMissing, err)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: heif-convert: %v", ErrTimeout, ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("%w: heif-convert: %v: %.200s", ErrCorrupt, err, msg)
	}
	jpg, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("%w: heif-convert wrote no image: %v", ErrCorrupt, err)
	}
	return decodeWith(codecs[JPEG], jpg, opt.MaxPixels)
}

// heifSize returns the largest image size any ispe (image spatial extents)
// property of a HEIF file declares: the primary image, or the whole of a
// tiled (grid) image. ISO/IEC 23008-12: meta > iprp > ipco > ispe, where
// ispe is a full box holding width and height as 32-bit big-endian values.
func heifSize(data []byte) (w, h int64, err error) {
	found := false
	var walk func(b []byte, depth int) error
	walk = func(b []byte, depth int) error {
		for len(b) >= 8 {
			size := int64(binary.BigEndian.Uint32(b))
			typ := string(b[4:8])
			hdr := int64(8)
			switch size {
			case 0: // extends to the end
				size = int64(len(b))
			case 1: // 64-bit size follows
				if len(b) < 16 {
					return errHEIF
				}
				size = int64(binary.BigEndian.Uint64(b[8:]))
				hdr = 16
			}
			if size < hdr || size > int64(len(b)) {
				return errHEIF
			}
			body := b[hdr:size]
			switch typ {
			case "meta":
				// A full box: 4 bytes of version and flags before children.
				if len(body) < 4 || depth > 0 {
					return errHEIF
				}
				if err := walk(body[4:], depth+1); err != nil {
					return err
				}
			case "iprp", "ipco":
				if depth > 3 {
					return errHEIF
				}
				if err := walk(body, depth+1); err != nil {
					return err
				}
			case "ispe":
				if len(body) < 12 {
					return errHEIF
				}
				iw, ih := int64(binary.BigEndian.Uint32(body[4:])), int64(binary.BigEndian.Uint32(body[8:]))
				if float64(iw)*float64(ih) > float64(w)*float64(h) {
					w, h = iw, ih
				}
				found = true
			}
			b = b[size:]
		}
		return nil
	}
	if err := walk(data, 0); err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, fmt.Errorf("%w: no image size declared", errHEIF)
	}
	return w, h, nil
}

var errHEIF = fmt.Errorf("%w: malformed HEIF boxes", ErrCorrupt)
