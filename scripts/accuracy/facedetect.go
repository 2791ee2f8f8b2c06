package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	_ "image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	pigo "github.com/esimov/pigo/core"

	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// faceDir holds the labelled photos (faces/SOURCES.md says where each comes
// from, faces/labels.txt holds the boxes).
const faceDir = "scripts/accuracy/faces"

// labelled is one test frame and the faces in it.
type labelled struct {
	name  string
	img   *image.RGBA
	faces []image.Rectangle
	group string // the row of the table it counts in
}

// detector finds faces in a frame.
type detector struct {
	name string
	find func(*image.RGBA) []image.Rectangle
}

// faceDetection scores the face detectors on labelled frames: the photos
// themselves, webcam-like 640x480 frames cut around each labelled face at
// four sizes, turned, darkened, blurred and compressed, the faceless
// photos, and still frames of the synthetic generator. A face counts as
// found when a detection's centre lies in its box and the detection's side
// is between half and twice the box's; every other detection is false.
func faceDetection(verbose bool) (string, error) {
	c, err := face.LoadCascade()
	if err != nil {
		return "", err
	}
	frames, err := faceFrames()
	if err != nil {
		return "", err
	}
	pg, err := loadPigo()
	if err != nil {
		return "", err
	}
	dets := []detector{
		{"cascade, as the tracker ran it alone (upright)", func(m *image.RGBA) []image.Rectangle { return pigoFaces(pg, m, []float64{0}, 20) }},
		{"cascade tuned: 5 turns to +-30 deg, score 10", func(m *image.RGBA) []image.Rectangle {
			return pigoFaces(pg, m, []float64{0, 15, -15, 30, -30}, 10)
		}},
		{"BlazeFace (whole frame)", func(m *image.RGBA) []image.Rectangle { return c.FindFaces(m) }},
		{"tracker's search (BlazeFace, then cascade)", func(m *image.RGBA) []image.Rectangle {
			o := face.NewTracker(c).Observe(m)
			if !o.Face {
				return nil
			}
			return []image.Rectangle{o.Box}
		}},
	}
	groups := []string{"photos", "webcam-like: plain", "webcam-like: turned 15-30 deg", "webcam-like: dim, blurred, JPEG q15", "synthetic", "faceless"}
	var b strings.Builder
	fmt.Fprintf(&b, "Face detection: %d labelled frames (scripts/accuracy/faces; found / faces, false detections per frame)\n", len(frames))
	fmt.Fprintf(&b, "%-48s", "detector")
	for _, g := range groups {
		fmt.Fprintf(&b, " | %-22s", g)
	}
	fmt.Fprintf(&b, " | %s\n", "CPU per frame")
	for _, d := range dets {
		type tally struct{ faces, found, falses, frames int }
		t := map[string]*tally{}
		for _, g := range groups {
			t[g] = &tally{}
		}
		start := time.Now()
		for _, fr := range frames {
			got := d.find(fr.img)
			matched := make([]bool, len(fr.faces))
			falses := 0
			for _, r := range got {
				hit := false
				for i, want := range fr.faces {
					if !matched[i] && matches(r, want) {
						matched[i], hit = true, true
						break
					}
				}
				if !hit {
					falses++
				}
			}
			tl := t[fr.group]
			tl.frames++
			tl.faces += len(fr.faces)
			tl.falses += falses
			for _, m := range matched {
				if m {
					tl.found++
				}
			}
			if verbose {
				fmt.Fprintf(os.Stderr, "%s\t%s\tfound %d/%d\tfalse %d\n", d.name, fr.name, count(matched), len(fr.faces), falses)
			}
		}
		fmt.Fprintf(&b, "%-48s", d.name)
		for _, g := range groups {
			tl := t[g]
			if tl.faces == 0 {
				fmt.Fprintf(&b, " | %-22s", fmt.Sprintf("- , %.2f false", float64(tl.falses)/float64(max(tl.frames, 1))))
				continue
			}
			fmt.Fprintf(&b, " | %-22s", fmt.Sprintf("%3.0f%% , %.2f false", 100*float64(tl.found)/float64(tl.faces), float64(tl.falses)/float64(tl.frames)))
		}
		fmt.Fprintf(&b, " | %.1f ms (wall)\n", float64(time.Since(start).Microseconds())/1000/float64(len(frames)))
	}
	b.WriteString("The cascade rows call pigo itself with the tracker's settings (a 240-row grayscale frame, faces from a tenth of it,\n")
	b.WriteString("shift 0.1, scale 1.1). Per-frame time is wall time on a shared machine; BenchmarkObserve gives the streaming cost.\n")
	return b.String(), nil
}

func count(b []bool) (n int) {
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// matches reports whether detection d finds the labelled face want.
func matches(d, want image.Rectangle) bool {
	c := image.Pt((d.Min.X+d.Max.X)/2, (d.Min.Y+d.Max.Y)/2)
	side := float64(max(want.Dx(), want.Dy()))
	return c.In(want) && float64(d.Dx()) >= 0.5*side && float64(d.Dx()) <= 2*side
}

// faceFrames builds the labelled frames.
func faceFrames() ([]labelled, error) {
	f, err := os.Open(filepath.Join(faceDir, "labels.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	labels := map[string][]image.Rectangle{}
	var order []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		name := fields[0]
		if _, ok := labels[name]; !ok {
			order = append(order, name)
			labels[name] = nil
		}
		if len(fields) >= 2 && fields[1] == "-" {
			continue
		}
		if len(fields) < 5 {
			return nil, fmt.Errorf("labels.txt:%d: want file x0 y0 x1 y1", line)
		}
		var v [4]int
		for i := range v {
			if v[i], err = strconv.Atoi(fields[1+i]); err != nil {
				return nil, fmt.Errorf("labels.txt:%d: %w", line, err)
			}
		}
		labels[name] = append(labels[name], image.Rect(v[0], v[1], v[2], v[3]))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var frames []labelled
	for _, name := range order {
		img, err := readRGBA(filepath.Join(faceDir, name))
		if err != nil {
			return nil, err
		}
		faces := labels[name]
		if len(faces) == 0 {
			frames = append(frames, labelled{name, fit(img, 640, 480), nil, "faceless"})
			for _, angle := range []float64{20, -20} {
				m, _ := warp(img, nil, image.Pt(img.Rect.Dx()/2, img.Rect.Dy()/2), 640.0/float64(img.Rect.Dx()), angle)
				frames = append(frames, labelled{fmt.Sprintf("%s turned %.0f", name, angle), m, nil, "faceless"})
			}
			frames = append(frames, labelled{name + " dim", degrade(fit(img, 640, 480), "dim"), nil, "faceless"})
			continue
		}
		frames = append(frames, labelled{name, img, faces, "photos"})
		for i, fc := range faces {
			centre := image.Pt((fc.Min.X+fc.Max.X)/2, (fc.Min.Y+fc.Max.Y)/2)
			for _, size := range []float64{0.15, 0.3, 0.5, 0.7} {
				scale := size * 480 / float64(fc.Dy())
				for _, angle := range []float64{0, 15, -30} {
					m, boxes := warp(img, faces, centre, scale, angle)
					group := "webcam-like: plain"
					if angle != 0 {
						group = "webcam-like: turned 15-30 deg"
					}
					frames = append(frames, labelled{fmt.Sprintf("%s face %d at %.0f%% turned %.0f", name, i, 100*size, angle), m, boxes, group})
					if angle == 0 {
						for _, how := range []string{"dim", "blur", "jpeg"} {
							frames = append(frames, labelled{fmt.Sprintf("%s face %d at %.0f%% %s", name, i, 100*size, how), degrade(m, how), boxes, "webcam-like: dim, blurred, JPEG q15"})
						}
					}
				}
			}
		}
	}
	synth, err := synthFrames()
	if err != nil {
		return nil, err
	}
	return append(frames, synth...), nil
}

// synthFrames renders still frames of the generator and labels its face:
// the generator scales its photo to FaceScale of the frame height and
// centres it, a tenth of its height low (scripts/synth/clip's scene).
func synthFrames() ([]labelled, error) {
	photo, err := clip.FacePhoto()
	if err != nil {
		return nil, err
	}
	faceInPhoto := image.Rect(75, 110, 235, 345) // as labels.txt labels face.jpg
	var out []labelled
	for i, cfg := range []clip.Config{
		{FaceScale: 0.5, Brightness: 1}, {FaceScale: 0.65, Brightness: 1}, {FaceScale: 0.9, Brightness: 1},
		{FaceScale: 0.65, Brightness: 0.4}, {FaceScale: 0.65, Brightness: 0.3, Noise: 3},
	} {
		cfg.Seconds, cfg.Seed = 1, uint64(i+1)
		cl, err := clip.New(cfg)
		if err != nil {
			return nil, err
		}
		m := image.NewRGBA(image.Rect(0, 0, clip.DefaultWidth, clip.DefaultHeight))
		cl.Render(0, m)
		pb := photo.Bounds()
		ph := int(cfg.FaceScale * clip.DefaultHeight)
		pw := ph * pb.Dx() / pb.Dy()
		k := float64(ph) / float64(pb.Dy())
		x0, y0 := (clip.DefaultWidth-pw)/2, (clip.DefaultHeight-ph)/2+ph/10
		box := image.Rect(x0+int(k*float64(faceInPhoto.Min.X)), y0+int(k*float64(faceInPhoto.Min.Y)),
			x0+int(k*float64(faceInPhoto.Max.X)), y0+int(k*float64(faceInPhoto.Max.Y)))
		out = append(out, labelled{fmt.Sprintf("synthetic scale %.2f light %.1f", cfg.FaceScale, cfg.Brightness), m, []image.Rectangle{box}, "synthetic"})
	}
	return out, nil
}

func readRGBA(path string) (*image.RGBA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(m, m.Rect, img, img.Bounds().Min, draw.Src)
	return m, nil
}

// fit scales img to cover a w x h frame.
func fit(img *image.RGBA, w, h int) *image.RGBA {
	s := max(float64(w)/float64(img.Rect.Dx()), float64(h)/float64(img.Rect.Dy()))
	m, _ := warpTo(img, nil, image.Pt(img.Rect.Dx()/2, img.Rect.Dy()/2), s, 0, w, h)
	return m
}

// warp makes a 640x480 frame showing img scaled by scale and turned by
// angle degrees (clockwise) about centre, which lands at the frame's
// centre, and returns the labelled faces' boxes in it (the box around each
// turned box).
func warp(img *image.RGBA, faces []image.Rectangle, centre image.Point, scale, angle float64) (*image.RGBA, []image.Rectangle) {
	return warpTo(img, faces, centre, scale, angle, 640, 480)
}

func warpTo(img *image.RGBA, faces []image.Rectangle, centre image.Point, scale, angle float64, w, h int) (*image.RGBA, []image.Rectangle) {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	sin, cos := math.Sincos(angle * math.Pi / 180)
	cx, cy := float64(centre.X), float64(centre.Y)
	grey := color.RGBA{90, 90, 90, 255}
	for y := range h {
		for x := range w {
			// Inverse map: frame -> photo.
			dx, dy := (float64(x)+0.5-float64(w)/2)/scale, (float64(y)+0.5-float64(h)/2)/scale
			sx, sy := cx+dx*cos+dy*sin-0.5, cy-dx*sin+dy*cos-0.5
			m.SetRGBA(x, y, bilinear(img, sx, sy, grey))
		}
	}
	var boxes []image.Rectangle
	for _, fc := range faces {
		var r image.Rectangle
		for i, p := range [4][2]float64{{float64(fc.Min.X), float64(fc.Min.Y)}, {float64(fc.Max.X), float64(fc.Min.Y)}, {float64(fc.Min.X), float64(fc.Max.Y)}, {float64(fc.Max.X), float64(fc.Max.Y)}} {
			dx, dy := p[0]-cx, p[1]-cy
			q := image.Pt(int(float64(w)/2+scale*(dx*cos-dy*sin)), int(float64(h)/2+scale*(dx*sin+dy*cos)))
			if i == 0 {
				r = image.Rectangle{q, q}
			}
			r = r.Union(image.Rectangle{q, q.Add(image.Pt(1, 1))})
		}
		// A turned face's square box is the turned box's size, not its hull.
		side := scale * float64(max(fc.Dx(), fc.Dy()))
		mid := image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
		half := int(side / 2)
		if r = image.Rect(mid.X-half, mid.Y-half, mid.X+half, mid.Y+half); r.Overlaps(m.Rect) {
			boxes = append(boxes, r)
		}
	}
	return m, boxes
}

func bilinear(img *image.RGBA, x, y float64, outside color.RGBA) color.RGBA {
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	if x0 < 0 || y0 < 0 || x0+1 >= img.Rect.Dx() || y0+1 >= img.Rect.Dy() {
		return outside
	}
	fx, fy := x-float64(x0), y-float64(y0)
	var out [3]float64
	for _, t := range [4]struct {
		dx, dy int
		w      float64
	}{{0, 0, (1 - fx) * (1 - fy)}, {1, 0, fx * (1 - fy)}, {0, 1, (1 - fx) * fy}, {1, 1, fx * fy}} {
		p := img.Pix[img.PixOffset(x0+t.dx, y0+t.dy):]
		for c := range out {
			out[c] += t.w * float64(p[c])
		}
	}
	return color.RGBA{uint8(out[0] + 0.5), uint8(out[1] + 0.5), uint8(out[2] + 0.5), 255}
}

// degrade models a poor webcam: "dim" is a dark room (a third of the light,
// gamma-lifted, with noise-free banding from 8-bit levels), "blur" a soft
// lens or motion, "jpeg" heavy compression at quality 15.
func degrade(src *image.RGBA, how string) *image.RGBA {
	m := image.NewRGBA(src.Rect)
	copy(m.Pix, src.Pix)
	switch how {
	case "dim":
		for i := range m.Pix {
			if i%4 != 3 {
				m.Pix[i] = uint8(float64(m.Pix[i]) * 0.3)
			}
		}
	case "blur":
		for range 2 {
			boxBlur(m)
		}
	case "jpeg":
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 15}); err == nil {
			if img, err := jpeg.Decode(io.Reader(&buf)); err == nil {
				draw.Draw(m, m.Rect, img, image.Point{}, draw.Src)
			}
		}
	}
	return m
}

// boxBlur applies a 3x3 box filter in place.
func boxBlur(m *image.RGBA) {
	src := append([]uint8(nil), m.Pix...)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			for c := range 3 {
				var s int
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						s += int(src[(y+dy)*m.Stride+4*(x+dx)+c])
					}
				}
				m.Pix[y*m.Stride+4*x+c] = uint8(s / 9)
			}
		}
	}
}

// loadPigo unpacks pigo's face cascade, the one dsp/face embeds.
func loadPigo() (*pigo.Pigo, error) {
	b, err := os.ReadFile("dsp/face/cascade/facefinder")
	if err != nil {
		return nil, err
	}
	return pigo.NewPigo().Unpack(b)
}

// pigoFaces runs the cascade as the tracker's search does (a grayscale
// frame averaged down to about 240 rows, windows from a tenth of it, shift
// 0.1, scale 1.1), at each in-plane turn (degrees), merges overlapping
// windows and keeps clusters scoring at least minScore.
func pigoFaces(pg *pigo.Pigo, m *image.RGBA, turns []float64, minScore float32) []image.Rectangle {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	k := max(1, (min(w, h)+120)/240)
	gw, gh := w/k, h/k
	gray := make([]uint8, gw*gh)
	for y := range gh {
		for x := range gw {
			var s int
			for dy := range k {
				for dx := range k {
					p := m.Pix[(y*k+dy)*m.Stride+4*(x*k+dx):]
					s += (19595*int(p[0]) + 38470*int(p[1]) + 7471*int(p[2]) + 1<<15) >> 16
				}
			}
			gray[y*gw+x] = uint8((s + k*k/2) / (k * k))
		}
	}
	params := pigo.CascadeParams{
		MinSize: max(20, min(gw, gh)/10), MaxSize: min(gw, gh) - 2, ShiftFactor: 0.1, ScaleFactor: 1.1,
		ImageParams: pigo.ImageParams{Pixels: gray, Rows: gh, Cols: gw, Dim: gw},
	}
	var all []pigo.Detection
	for _, t := range turns {
		a := t / 360
		if a < 0 {
			a++
		}
		all = append(all, pg.RunCascade(params, a)...)
	}
	var out []image.Rectangle
	for _, d := range pg.ClusterDetections(all, 0.2) {
		if d.Q < minScore {
			continue
		}
		half := d.Scale * k / 2
		out = append(out, image.Rect(d.Col*k-half, d.Row*k-half, d.Col*k+half, d.Row*k+half))
	}
	return out
}
