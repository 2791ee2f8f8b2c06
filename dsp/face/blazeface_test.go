package face

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// blazeReference is testdata/blazeface-reference.json: the original
// TensorFlow Lite model's outputs on the PNG inputs beside it, made by
// scripts/blazeface/reference (which says how).
type blazeReference struct {
	Model, Sha256, Runtime string
	Inputs                 []struct {
		File   string
		Scores []float64
		Best   []struct {
			Anchor int
			Box    []float64
		}
	}
}

// TestBlazeFaceMatchesTFLite runs the converted network on the reference
// inputs and compares every anchor's score and the best anchors' boxes and
// keypoints with what TensorFlow Lite computed from the original file. The
// weights are the same float16 values in both, so the differences are the
// order of float32 additions: well under 0.01 in a logit and in a pixel.
func TestBlazeFaceMatchesTFLite(t *testing.T) {
	b, err := os.ReadFile("testdata/blazeface-reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref blazeReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Inputs) < 3 {
		t.Fatalf("%d reference inputs", len(ref.Inputs))
	}
	c := cascade(t)
	s := newBlazeState(c.blaze)
	for _, in := range ref.Inputs {
		t.Run(in.File, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", in.File))
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			x := c.blaze.tensor(s.net, 0)
			for i := range 128 * 128 {
				r, g, b, _ := img.At(i%128, i/128).RGBA()
				x[3*i], x[3*i+1], x[3*i+2] = float32(r>>8)/127.5-1, float32(g>>8)/127.5-1, float32(b>>8)/127.5-1
			}
			c.blaze.run(s.net)
			scores := append(c.blaze.tensor(s.net, c.blaze.outputs[0]), c.blaze.tensor(s.net, c.blaze.outputs[2])...)
			boxes := append(c.blaze.tensor(s.net, c.blaze.outputs[1]), c.blaze.tensor(s.net, c.blaze.outputs[3])...)
			if len(scores) != len(in.Scores) || len(scores) != len(blazeAnchors) {
				t.Fatalf("%d scores, reference %d", len(scores), len(in.Scores))
			}
			var worst float64
			for i, want := range in.Scores {
				worst = max(worst, math.Abs(float64(scores[i])-want))
			}
			if worst > 0.01 {
				t.Errorf("scores differ by up to %.4f", worst)
			}
			worst = 0
			for _, best := range in.Best {
				for j, want := range best.Box {
					worst = max(worst, math.Abs(float64(boxes[16*best.Anchor+j])-want))
				}
			}
			if worst > 0.01 {
				t.Errorf("boxes and keypoints differ by up to %.4f input pixels", worst)
			}
			t.Logf("best logit %.4f (reference %.4f)", scores[in.Best[0].Anchor], in.Scores[in.Best[0].Anchor])
		})
	}
}

func TestParseNetworkRejectsMalformed(t *testing.T) {
	good := blazeFile
	cases := map[string][]byte{
		"empty":          nil,
		"wrong magic":    append([]byte("XXXX"), good[4:]...),
		"truncated":      good[:len(good)-1],
		"trailing bytes": append(append([]byte{}, good...), 0),
		"bad version":    append(append([]byte{}, good[:4]...), append([]byte{2, 0}, good[6:]...)...),
		"header only":    good[:8],
	}
	for name, b := range cases {
		if _, err := parseNetwork(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := parseNetwork(good); err != nil {
		t.Fatalf("the embedded model: %v", err)
	}
}

func FuzzParseNetwork(f *testing.F) {
	f.Add(blazeFile[:2000])
	f.Add(blazeFile)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseNetwork(b)
		if err != nil {
			return
		}
		// A network that parses runs without panicking.
		n.run(n.newState())
	})
}

// TestBlazeFaceFindsPhoto finds the photo's face in a 640x480 frame and
// puts its keypoints where the face is: the eyes at y=183 of the photo, the
// person's right eye on the left of the image, the mouth below the nose.
func TestBlazeFaceFindsPhoto(t *testing.T) {
	at := photoFaceCentre.Sub(photoFaceCentre).Add(photoFaceCentre) // photo's top-left corner
	img := scene(t, 640, 480, at, 1)
	c := cascade(t)
	s := newBlazeState(c.blaze)
	faces := c.detectBlaze(wrap(img, nil), s, 0, -80, 640, keepScore, false)
	if len(faces) != 1 {
		t.Fatalf("%d faces, want 1", len(faces))
	}
	d := faces[0]
	eyeY := float64(at.Y + 183)
	re, le, mouth := d.keys[keyRightEye], d.keys[keyLeftEye], d.keys[keyMouth]
	if math.Abs(re[1]-eyeY) > 8 || math.Abs(le[1]-eyeY) > 8 || re[0] >= le[0] {
		t.Errorf("eyes at %v and %v, want both near y=%.0f, right eye on the left", re, le, eyeY)
	}
	if mouth[1] < d.keys[keyNose][1] {
		t.Errorf("mouth %v above nose %v", mouth, d.keys[keyNose])
	}
	if cx := (d.x0 + d.x1) / 2; math.Abs(cx-float64(at.X+155)) > 10 {
		t.Errorf("box centre x %.0f, face at %d", cx, at.X+155)
	}
}

// TestBlazeFaceUpsideDown: the photo turned upside down, looked at turned
// back, is found as well as upright, with the box and the keypoints where
// they are in the turned frame: the person's right eye now on the image's
// right, the mouth above the nose. Looked at as it is, it scores less.
func TestBlazeFaceUpsideDown(t *testing.T) {
	c := cascade(t)
	s := newBlazeState(c.blaze)
	img := scene(t, 640, 480, image.Point{}, 1)
	up := c.detectBlaze(wrap(img, nil), s, 0, -80, 640, keepScore, false)
	if len(up) != 1 {
		t.Fatalf("%d faces upright, want 1", len(up))
	}
	u := up[0]
	// Turned by half a circle about the frame's centre, (x, y) goes to
	// (640-x, 480-y); the region (0, -80, 640) goes to (0, 560-640).
	f := wrap(turned(img, 180), nil)
	down := c.detectBlaze(f, s, 0, -80, 640, keepScore, true)
	if len(down) != 1 {
		t.Fatalf("%d faces upside down, looked at turned back, want 1", len(down))
	}
	d := down[0]
	if math.Abs(d.score-u.score) > 0.05 {
		t.Errorf("score %.2f turned back, %.2f upright", d.score, u.score)
	}
	near := func(name string, got, want [2]float64) {
		if math.Hypot(got[0]-want[0], got[1]-want[1]) > 6 {
			t.Errorf("%s at %.0f, want near %.0f", name, got, want)
		}
	}
	turn := func(p [2]float64) [2]float64 { return [2]float64{640 - p[0], 480 - p[1]} }
	near("box's top-left corner", [2]float64{d.x0, d.y0}, turn([2]float64{u.x1, u.y1}))
	near("box's bottom-right corner", [2]float64{d.x1, d.y1}, turn([2]float64{u.x0, u.y0}))
	for k := range numKeys {
		near(fmt.Sprintf("keypoint %d", k), d.keys[k], turn(u.keys[k]))
	}
	if as := c.detectBlaze(f, s, 0, -80, 640, 0.01, false); len(as) > 0 && as[0].score > d.score-upsideDownMargin {
		t.Errorf("upside down, looked at as it is: score %.2f, want under %.2f", as[0].score, d.score-upsideDownMargin)
	}
}

func BenchmarkBlazeFace(b *testing.B) {
	c := cascade(b)
	s := newBlazeState(c.blaze)
	f := wrap(scene(b, 640, 480, photoFaceCentre, 1), nil)
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if len(c.detectBlaze(f, s, 0, -80, 640, keepScore, false)) != 1 {
			b.Fatal("no face")
		}
	}
	reportCPU(b, start)
}
