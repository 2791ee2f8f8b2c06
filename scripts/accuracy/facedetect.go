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
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	// For the webcam-like frames: the photo, and the height of the face
	// the frame is cut around as a share of the frame's.
	photo string
	size  float64
}

// detector finds faces in the i-th frame.
type detector struct {
	name string
	find func(i int, m *image.RGBA) []image.Rectangle
}

// tally counts one group's faces, the faces found and the false
// detections, and the frames with a face and those where one was found.
type tally struct{ faces, found, falses, frames, faceFrames, hitFrames int }

// faceGroups are the rows' columns, in order.
var faceGroups = []string{"photos", "webcam-like: plain", "webcam-like: turned 15-30 deg", "webcam-like: dim, blurred, JPEG q15", "synthetic", "faceless"}

// curveFloor is the lowest BlazeFace cut-off the curves show: BlazeFace runs
// once per frame at it, and each cut-off keeps the detections scoring at
// least that much.
const curveFloor = 0.3

// faceDetection scores the face detectors on labelled frames: the photos
// themselves, webcam-like 640x480 frames cut around each labelled face at
// four sizes, turned, darkened, blurred and compressed, the faceless
// photos, and still frames of the synthetic generator. A face counts as
// found when a detection's centre lies in its box and the detection's side
// is between half and twice the box's; every other detection is false. It
// then prints BlazeFace's curves over its cut-offs, and how much of the
// regions of interest lands on skin.
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
	// BlazeFace's detections, with their closer looks, once per frame.
	start := cpuTime()
	blaze := make([][]face.Detection, len(frames))
	for i, fr := range frames {
		blaze[i] = c.FindFaces(fr.img, curveFloor)
	}
	blazeCPU := (cpuTime() - start) / time.Duration(len(frames))
	alone := func(cut float64) func(int, *image.RGBA) []image.Rectangle {
		return func(i int, _ *image.RGBA) []image.Rectangle {
			var out []image.Rectangle
			for _, d := range blaze[i] {
				if d.Score >= cut {
					out = append(out, d.Box)
				}
			}
			return out
		}
	}
	confirmed := func(cut, closer float64) func(int, *image.RGBA) []image.Rectangle {
		return func(i int, _ *image.RGBA) []image.Rectangle {
			var out []image.Rectangle
			for _, d := range blaze[i] {
				if d.Score >= cut && d.CloserScore >= closer {
					out = append(out, d.CloserBox)
				}
			}
			return out
		}
	}
	dets := []detector{
		{"cascade, as the tracker ran it alone (upright)", func(_ int, m *image.RGBA) []image.Rectangle { return pigoFaces(pg, m, []float64{0}, 20) }},
		{"cascade tuned: 5 turns to +-30 deg, score 10", func(_ int, m *image.RGBA) []image.Rectangle {
			return pigoFaces(pg, m, []float64{0, 15, -15, 30, -30}, 10)
		}},
		{"BlazeFace, whole frame, cut-off 0.5 (MediaPipe)", alone(0.5)},
		{fmt.Sprintf("BlazeFace, %.1f then %.1f on a closer look", face.CandidateScore, face.ConfirmScore), confirmed(face.CandidateScore, face.ConfirmScore)},
		{"tracker's search (BlazeFace, then cascade)", tracked(c, 1)},
		{"tracker's searches over 5 s (and tiles)", tracked(c, sweepFrames)},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Face detection: %d labelled frames (scripts/accuracy/faces; found / faces, false detections per frame)\n", len(frames))
	fmt.Fprintf(&b, "%-48s", "detector")
	for _, g := range faceGroups {
		fmt.Fprintf(&b, " | %-22s", g)
	}
	fmt.Fprintf(&b, " | %s\n", "CPU per frame")
	for _, d := range dets {
		start := cpuTime()
		t := score(frames, d, verbose)
		cpu := fmt.Sprintf("%.1f ms", float64((cpuTime()-start).Microseconds())/1000/float64(len(frames)))
		if strings.HasPrefix(d.name, "BlazeFace") {
			cpu = fmt.Sprintf("%.1f ms (with closer looks)", float64(blazeCPU.Microseconds())/1000)
		}
		fmt.Fprintf(&b, "%-48s", d.name)
		for _, g := range faceGroups {
			fmt.Fprintf(&b, " | %-22s", t[g].String())
		}
		fmt.Fprintf(&b, " | %s\n", cpu)
		if strings.HasPrefix(d.name, "tracker") {
			var hit, of int
			for _, tl := range t {
				hit, of = hit+tl.hitFrames, of+tl.faceFrames
			}
			fmt.Fprintf(&b, "The tracker follows one face, the largest: it finds one of the labelled faces in %d of the %d frames that hold one (%.0f%%).\n",
				hit, of, 100*float64(hit)/float64(of))
			if d.name == dets[len(dets)-2].name {
				b.WriteString(wayUp(c, frames))
			}
		}
	}
	b.WriteString("The cascade rows call pigo itself with the tracker's settings (a 240-row grayscale frame, faces from a tenth of it,\n")
	b.WriteString("shift 0.1, scale 1.1). CPU time is the process's, on a shared machine; BenchmarkObserve gives the streaming cost.\n\n")
	b.WriteString(blazeCurves(frames, alone, confirmed))
	b.WriteString("\n")
	b.WriteString(regionSkin(c, frames))
	return b.String(), nil
}

// sweepFrames is how long, in frames of a 30 fps stream, the tracker
// searches one still frame in the second tracker row: time to look at
// every tile of a 4:3 frame (15 tiles, two searches in three, five
// searches a second).
const sweepFrames = 150

// tracked returns the detector of the tracker searching the frame for at
// most n frames: its box once it finds a face.
func tracked(c *face.Cascade, n int) func(int, *image.RGBA) []image.Rectangle {
	return func(_ int, m *image.RGBA) []image.Rectangle {
		tr := face.NewTracker(c)
		for range n {
			if o := tr.Observe(m); o.Face {
				return []image.Rectangle{o.Box}
			}
		}
		return nil
	}
}

// wayUp measures how the tracker reads which way up a face is: on every
// frame with a labelled face, as it is and turned upside down, the frames
// where its box finds a labelled face (after two frames, the second for
// the landmarks of a face the cascade found), and those of them whose eye
// line it reads the way up the face is.
func wayUp(c *face.Cascade, frames []labelled) string {
	var b strings.Builder
	for _, turned := range []bool{false, true} {
		var n, found, right int
		for _, fr := range frames {
			if len(fr.faces) == 0 {
				continue
			}
			n++
			img, faces := fr.img, fr.faces
			if turned {
				img, faces = halfTurn(fr.img, fr.faces)
			}
			tr := face.NewTracker(c)
			tr.Observe(img)
			o := tr.Observe(img)
			if !slices.ContainsFunc(faces, func(want image.Rectangle) bool { return o.Face && matches(o.Box, want) }) {
				continue
			}
			found++
			if upright := math.Abs(o.Roll) < math.Pi/2; upright != turned {
				right++
			}
		}
		way := "upright"
		if turned {
			way = "upside down"
		}
		fmt.Fprintf(&b, "The same frames %s: the tracker finds the face in %d of %d and reads %d of those the right way up.\n", way, found, n, right)
	}
	return b.String()
}

// halfTurn turns a frame and its labelled faces upside down.
func halfTurn(m *image.RGBA, faces []image.Rectangle) (*image.RGBA, []image.Rectangle) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	out := image.NewRGBA(m.Rect)
	for y := range h {
		for x := range w {
			out.SetRGBA(w-1-x, h-1-y, m.RGBAAt(x, y))
		}
	}
	var turned []image.Rectangle
	for _, f := range faces {
		turned = append(turned, image.Rect(w-f.Max.X, h-f.Max.Y, w-f.Min.X, h-f.Min.Y))
	}
	return out, turned
}

// regionSkin measures where the regions of interest land: on each
// webcam-like frame whose face fills at least 30% of the frame (the
// tracker's own box must find the labelled face), the share of the
// regions' pixels the skin model accepts (Observation.SkinFraction), with
// the regions placed from BlazeFace's landmarks and by the box alone.
func regionSkin(c *face.Cascade, frames []labelled) string {
	type sums struct {
		n                 int
		with, byBox       float64
		minWith, minByBox float64
		worseBy10         int
	}
	add := func(m map[string]*sums, key string, with, byBox float64) {
		s := m[key]
		if s == nil {
			s = &sums{minWith: 1, minByBox: 1}
			m[key] = s
		}
		s.n++
		s.with += with
		s.byBox += byBox
		s.minWith, s.minByBox = min(s.minWith, with), min(s.minByBox, byBox)
		if with < byBox-0.1 {
			s.worseBy10++
		}
	}
	perPhoto, perGroup := map[string]*sums{}, map[string]*sums{}
	var photos []string
	looked := map[string]int{}
	for _, fr := range frames {
		if fr.size < 0.3 {
			continue
		}
		if looked[fr.photo] == 0 {
			photos = append(photos, fr.photo)
		}
		looked[fr.photo]++
		var o [2]face.Observation
		for i, byBox := range []bool{false, true} {
			tr := face.NewTracker(c)
			tr.PlaceByBox(byBox)
			o[i] = tr.Observe(fr.img)
		}
		found := false
		for _, want := range fr.faces {
			found = found || o[0].Face && matches(o[0].Box, want)
		}
		if !found {
			continue
		}
		add(perPhoto, fr.photo, o[0].SkinFraction, o[1].SkinFraction)
		add(perGroup, fr.group, o[0].SkinFraction, o[1].SkinFraction)
	}
	var b strings.Builder
	b.WriteString("Regions of interest on skin: share of their pixels the skin model accepts, webcam-like frames with the face\n")
	b.WriteString("at 30-70% of the frame height that the tracker's search finds; mean (lowest), regions placed from\n")
	b.WriteString("BlazeFace's landmarks and by the box alone, and the frames where the landmarks lose more than 0.1:\n")
	fmt.Fprintf(&b, "%-36s | %-13s | %-13s | %-13s | %s\n", "photo or group", "frames found", "landmarks", "box alone", "landmarks worse")
	line := func(name string, s *sums, of int) {
		if s == nil {
			fmt.Fprintf(&b, "%-36s | %-13s |\n", name, fmt.Sprintf("0 of %d", of))
			return
		}
		fmt.Fprintf(&b, "%-36s | %-13s | %-13s | %-13s | %d\n", name, fmt.Sprintf("%d of %d", s.n, of),
			fmt.Sprintf("%.2f (%.2f)", s.with/float64(s.n), s.minWith), fmt.Sprintf("%.2f (%.2f)", s.byBox/float64(s.n), s.minByBox), s.worseBy10)
	}
	for _, p := range photos {
		line(p, perPhoto[p], looked[p])
	}
	all := &sums{minWith: 1, minByBox: 1}
	for _, g := range faceGroups {
		s := perGroup[g]
		if s == nil {
			continue
		}
		of := 0
		for _, fr := range frames {
			if fr.group == g && fr.size >= 0.3 {
				of++
			}
		}
		line(g, s, of)
		all.n, all.with, all.byBox, all.worseBy10 = all.n+s.n, all.with+s.with, all.byBox+s.byBox, all.worseBy10+s.worseBy10
		all.minWith, all.minByBox = min(all.minWith, s.minWith), min(all.minByBox, s.minByBox)
	}
	n := 0
	for _, v := range looked {
		n += v
	}
	line("all", all, n)
	return b.String()
}

// String prints the share found and the false detections per frame.
func (t *tally) String() string {
	if t.faces == 0 {
		return fmt.Sprintf("- , %.2f false", float64(t.falses)/float64(max(t.frames, 1)))
	}
	return fmt.Sprintf("%3.0f%% , %.2f false", 100*float64(t.found)/float64(t.faces), float64(t.falses)/float64(t.frames))
}

// score runs d on every frame and tallies its hits and false detections
// per group.
func score(frames []labelled, d detector, verbose bool) map[string]*tally {
	t := map[string]*tally{}
	for _, g := range faceGroups {
		t[g] = &tally{}
	}
	for i, fr := range frames {
		got := d.find(i, fr.img)
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
		tl.found += count(matched)
		if len(fr.faces) > 0 {
			tl.faceFrames++
			if count(matched) > 0 {
				tl.hitFrames++
			}
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "%s\t%s\tfound %d/%d\tfalse %d\n", d.name, fr.name, count(matched), len(fr.faces), falses)
		}
	}
	return t
}

// blazeCurves prints the share of faces BlazeFace finds and its false
// detections over its cut-off, alone and confirmed by a closer look, and
// over the closer look's cut-off: the curves the tracker's operating point
// (face.CandidateScore, face.ConfirmScore) was chosen on.
func blazeCurves(frames []labelled, alone func(float64) func(int, *image.RGBA) []image.Rectangle,
	confirmed func(float64, float64) func(int, *image.RGBA) []image.Rectangle) string {
	var b strings.Builder
	total := func(t map[string]*tally, skip string) (found, faces, falses, frames int) {
		for g, tl := range t {
			if g == skip {
				continue
			}
			found, faces, falses, frames = found+tl.found, faces+tl.faces, falses+tl.falses, frames+tl.frames
		}
		return
	}
	row := func(label string, t map[string]*tally, mark bool) {
		found, faces, falses, n := total(t, "faceless")
		fl := t["faceless"]
		m := ""
		if mark {
			m = "  <- the tracker's"
		}
		fmt.Fprintf(&b, "%-10s | %5.1f%%        | %.3f                  | %.3f (%d of %d)%s\n", label, 100*float64(found)/float64(faces),
			float64(falses)/float64(n), float64(fl.falses)/float64(fl.frames), fl.falses, fl.frames, m)
	}
	head := func(what string) {
		fmt.Fprintf(&b, "%-10s | faces found   | false per frame w/ faces | false per faceless frame\n", what)
	}
	cuts := []float64{0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8}
	b.WriteString("BlazeFace's cut-off, whole frame alone (MediaPipe uses 0.5):\n")
	head("cut-off")
	for _, cut := range cuts {
		row(fmt.Sprintf("%.2f", cut), score(frames, detector{find: alone(cut)}, false), false)
	}
	fmt.Fprintf(&b, "\n... confirmed by a closer look (2.2 box sides around the face) scoring %.2f:\n", face.ConfirmScore)
	head("cut-off")
	for _, cut := range cuts {
		row(fmt.Sprintf("%.2f", cut), score(frames, detector{find: confirmed(cut, face.ConfirmScore)}, false), math.Abs(cut-face.CandidateScore) < 1e-9)
	}
	fmt.Fprintf(&b, "\n... at cut-off %.2f, over the closer look's cut-off:\n", face.CandidateScore)
	head("closer")
	for _, closer := range []float64{0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9} {
		row(fmt.Sprintf("%.2f", closer), score(frames, detector{find: confirmed(face.CandidateScore, closer)}, false), math.Abs(closer-face.ConfirmScore) < 1e-9)
	}
	b.WriteString("Detections of one BlazeFace run per frame at 0.3, kept by score; false detections on frames with faces are\n")
	b.WriteString("mostly faces under a fifth of the frame, boxed at the wrong size.\n")
	return b.String()
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
	labels, order, err := readLabels()
	if err != nil {
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
			frames = append(frames, labelled{name: name, img: fit(img, 640, 480), group: "faceless"})
			for _, angle := range []float64{20, -20} {
				m, _ := warp(img, nil, image.Pt(img.Rect.Dx()/2, img.Rect.Dy()/2), 640.0/float64(img.Rect.Dx()), angle)
				frames = append(frames, labelled{name: fmt.Sprintf("%s turned %.0f", name, angle), img: m, group: "faceless"})
			}
			frames = append(frames, labelled{name: name + " dim", img: degrade(fit(img, 640, 480), "dim"), group: "faceless"})
			// Closer views, where a part of the picture fills the
			// frame as a face in front of a webcam would.
			for _, q := range [][2]int{{1, 1}, {3, 1}, {1, 3}, {3, 3}} {
				centre := image.Pt(q[0]*img.Rect.Dx()/4, q[1]*img.Rect.Dy()/4)
				scale := 2 * max(640/float64(img.Rect.Dx()), 480/float64(img.Rect.Dy()))
				m, _ := warp(img, nil, centre, scale, 0)
				frames = append(frames, labelled{name: fmt.Sprintf("%s zoomed at (%d, %d)", name, centre.X, centre.Y), img: m, group: "faceless"})
			}
			continue
		}
		frames = append(frames, labelled{name: name, img: img, faces: faces, group: "photos"})
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
					frames = append(frames, labelled{fmt.Sprintf("%s face %d at %.0f%% turned %.0f", name, i, 100*size, angle), m, boxes, group, name, size})
					if angle == 0 {
						for _, how := range []string{"dim", "blur", "jpeg"} {
							frames = append(frames, labelled{fmt.Sprintf("%s face %d at %.0f%% %s", name, i, 100*size, how), degrade(m, how), boxes, "webcam-like: dim, blurred, JPEG q15", name, size})
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

// readLabels reads faces/labels.txt: each file's labelled face boxes (none
// for a faceless one), and the files in their order there.
func readLabels() (map[string][]image.Rectangle, []string, error) {
	f, err := os.Open(filepath.Join(faceDir, "labels.txt"))
	if err != nil {
		return nil, nil, err
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
			return nil, nil, fmt.Errorf("labels.txt:%d: want file x0 y0 x1 y1", line)
		}
		var v [4]int
		for i := range v {
			if v[i], err = strconv.Atoi(fields[1+i]); err != nil {
				return nil, nil, fmt.Errorf("labels.txt:%d: %w", line, err)
			}
		}
		labels[name] = append(labels[name], image.Rect(v[0], v[1], v[2], v[3]))
	}
	return labels, order, sc.Err()
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
		m, err := firstFrame(cfg, uint64(i+1))
		if err != nil {
			return nil, err
		}
		pb := photo.Bounds()
		ph := int(cfg.FaceScale * clip.DefaultHeight)
		pw := ph * pb.Dx() / pb.Dy()
		k := float64(ph) / float64(pb.Dy())
		x0, y0 := (clip.DefaultWidth-pw)/2, (clip.DefaultHeight-ph)/2+ph/10
		box := image.Rect(x0+int(k*float64(faceInPhoto.Min.X)), y0+int(k*float64(faceInPhoto.Min.Y)),
			x0+int(k*float64(faceInPhoto.Max.X)), y0+int(k*float64(faceInPhoto.Max.Y)))
		out = append(out, labelled{name: fmt.Sprintf("synthetic scale %.2f light %.1f", cfg.FaceScale, cfg.Brightness), img: m, faces: []image.Rectangle{box}, group: "synthetic"})
	}
	return out, nil
}

// firstFrame renders the first frame of a clip of the generator made with
// cfg and seed.
func firstFrame(cfg clip.Config, seed uint64) (*image.RGBA, error) {
	cfg.Seconds, cfg.Seed = 1, seed
	cl, err := clip.New(cfg)
	if err != nil {
		return nil, err
	}
	m := image.NewRGBA(image.Rect(0, 0, clip.DefaultWidth, clip.DefaultHeight))
	cl.Render(0, m)
	return m, nil
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
