package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"

	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// The regions picture: six faces in 640x480 frames, each cut out around
// the face the tracker found, with the regions of interest it placed
// outlined. Two are public-domain portraits of the labelled photos, four
// are the generator's webcam conditions.
const (
	figurePanel = 240 // side of a panel, pixels
	figureGap   = 6
	figureCols  = 3
)

// Outline colours: the forehead and the cheeks.
var (
	foreheadInk = color.RGBA{255, 176, 0, 255}
	cheekInk    = color.RGBA{0, 210, 255, 255}
)

// figureFaces renders the frames of the regions picture, in order.
func figureFaces() ([]*image.RGBA, error) {
	labels, _, err := readLabels()
	if err != nil {
		return nil, err
	}
	var frames []*image.RGBA
	for _, p := range []struct {
		photo string
		angle float64
	}{{"grace_hopper.jpg", 0}, {"astronaut.jpg", 25}} {
		img, err := readRGBA(filepath.Join(faceDir, p.photo))
		if err != nil {
			return nil, err
		}
		if len(labels[p.photo]) == 0 {
			return nil, fmt.Errorf("labels.txt has no face in %s", p.photo)
		}
		fc := labels[p.photo][0]
		m, _ := warp(img, nil, image.Pt((fc.Min.X+fc.Max.X)/2, (fc.Min.Y+fc.Max.Y)/2), 0.5*480/float64(fc.Dy()), p.angle)
		frames = append(frames, m)
	}
	for i, cfg := range []clip.Config{
		{Glasses: true, Fringe: 0.5},
		{Pitch: 25, Melanin: 0.13},
		{Melanin: 0.3, Brightness: 0.5, ShotNoise: true},
		{Melanin: 0.22, Pitch: 15, Glasses: true},
	} {
		m, err := firstFrame(cfg, uint64(i+1))
		if err != nil {
			return nil, err
		}
		frames = append(frames, m)
	}
	return frames, nil
}

// regionsFigure writes the picture of where the regions fall to path, a
// JPEG (a PNG of the photos' grain would be five times the size).
func regionsFigure(path string) error {
	out, err := drawRegions()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := jpeg.Encode(f, out, &jpeg.Options{Quality: 90}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// drawRegions tracks the face in each of figureFaces and draws the
// panels.
func drawRegions() (*image.RGBA, error) {
	c, err := face.LoadCascade()
	if err != nil {
		return nil, err
	}
	frames, err := figureFaces()
	if err != nil {
		return nil, err
	}
	rows := (len(frames) + figureCols - 1) / figureCols
	out := image.NewRGBA(image.Rect(0, 0, figureCols*figurePanel+(figureCols-1)*figureGap, rows*figurePanel+(rows-1)*figureGap))
	draw.Draw(out, out.Rect, image.NewUniform(color.White), image.Point{}, draw.Src)
	for i, m := range frames {
		o := face.NewTracker(c).Observe(m)
		if !o.Face {
			return nil, fmt.Errorf("regions picture: no face found in panel %d", i+1)
		}
		at := image.Pt(i%figureCols*(figurePanel+figureGap), i/figureCols*(figurePanel+figureGap))
		drawPanel(out, at, m, o)
	}
	return out, nil
}

// drawPanel draws into dst at the square of frame m around the tracked
// face, 1.5 times its box, with the regions' outlines.
func drawPanel(dst *image.RGBA, at image.Point, m *image.RGBA, o face.Observation) {
	side := 1.5 * o.Side
	x0, y0 := o.CentreX-side/2, o.CentreY-side/2
	k := side / figurePanel // frame pixels per panel pixel
	grey := color.RGBA{90, 90, 90, 255}
	for y := range figurePanel {
		for x := range figurePanel {
			dst.SetRGBA(at.X+x, at.Y+y, bilinear(m, x0+(float64(x)+0.5)*k-0.5, y0+(float64(y)+0.5)*k-0.5, grey))
		}
	}
	clipTo := image.Rect(at.X, at.Y, at.X+figurePanel, at.Y+figurePanel)
	for r, quad := range o.Outlines {
		ink := cheekInk
		if face.Region(r) == face.Forehead {
			ink = foreheadInk
		}
		for j, c := range quad {
			next := quad[(j+1)%4]
			line(dst, clipTo, float64(at.X)+(c[0]-x0)/k, float64(at.Y)+(c[1]-y0)/k,
				float64(at.X)+(next[0]-x0)/k, float64(at.Y)+(next[1]-y0)/k, ink)
		}
	}
}

// line draws a line 2 pixels wide from (ax, ay) to (bx, by), inside clip.
func line(dst *image.RGBA, clip image.Rectangle, ax, ay, bx, by float64, ink color.RGBA) {
	n := int(math.Ceil(2*math.Hypot(bx-ax, by-ay))) + 1
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		x, y := int(math.Floor(ax+t*(bx-ax)-0.5)), int(math.Floor(ay+t*(by-ay)-0.5))
		for _, p := range [4]image.Point{{x, y}, {x + 1, y}, {x, y + 1}, {x + 1, y + 1}} {
			if p.In(clip) {
				dst.SetRGBA(p.X, p.Y, ink)
			}
		}
	}
}
