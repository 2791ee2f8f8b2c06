package clip

import (
	"bytes"
	_ "embed"
	"image"
	"image/color"
	"image/jpeg"
	"iter"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/image/draw"
)

// facePhoto is pigo's sample portrait (320x400, MIT licence: photo/LICENSE).
//
//go:embed photo/face.jpg
var facePhoto []byte

// FacePhoto returns the decoded portrait the clips animate, for tests that
// need a still face.
func FacePhoto() (image.Image, error) { return photoOnce() }

var photoOnce = sync.OnceValues(func() (image.Image, error) {
	return jpeg.Decode(bytes.NewReader(facePhoto))
})

// maskOnce is the photo's skin mask, computed once (after photoOnce
// succeeded).
var maskOnce = sync.OnceValue(func() *image.Gray {
	photo, _ := photoOnce()
	return skinMask(photo)
})

// pulseRatio is the relative strength of the pulse in R, G and B over skin
// unless a Config says otherwise: the normalised blood-volume signature of
// skin under white light, (0.33, 0.77, 0.53) (de Haan and van Leest,
// "Improved motion robustness of remote-PPG by using the blood volume pulse
// signature", Physiol. Meas. 2014), divided by green's so PulseAmplitude is
// green's.
var pulseRatio = [3]float64{0.33 / 0.77, 1, 0.53 / 0.77}

// faceHeightOfPhoto is the face's height (eyebrows to chin) as a fraction of
// the photo's height.
const faceHeightOfPhoto = 0.48

// scene is the photo scaled and placed on the canvas, with its skin mask.
type scene struct {
	w, h           int
	pw, ph         int       // scaled photo size
	x0, y0         int       // photo's top-left corner at rest
	r, g, b        []float32 // scaled photo, 8-bit levels
	skin           []float32 // 0-1: how much of each pixel is skin
	alpha          []float32 // 0-1: the photo's edges fade into the wall
	bg             [3]float32
	faceHeight     float64 // pixels
	phaseX, phaseY float64
	gauss          [1024]float32 // standard normal samples for the camera noise
	sigma          *[256]float32 // the camera noise at each output level (noiseSigma)

	// The webcam effects; nil planes are absent.
	head  []float32 // 0-1: how much of each pixel is the head, not the wall
	glare []float32 // light the glasses' lenses reflect, 8-bit levels
	// pulseScale scales the pulse per channel for the skin tone (tone.go).
	pulseScale [3]float64
}

// newScene lays out the photo; rng draws what every clip has, webcam the
// webcam effects.
func newScene(c Config, rng, webcam *rand.Rand) (*scene, error) {
	photo, err := photoOnce()
	if err != nil {
		return nil, err
	}
	sb := photo.Bounds()
	ph := int(c.FaceScale * float64(c.Height))
	pw := ph * sb.Dx() / sb.Dy()
	scaled := image.NewRGBA(image.Rect(0, 0, pw, ph))
	draw.CatmullRom.Scale(scaled, scaled.Rect, photo, sb, draw.Src, nil)
	mask := maskOnce()
	scaledMask := image.NewGray(scaled.Rect)
	draw.CatmullRom.Scale(scaledMask, scaledMask.Rect, mask, mask.Rect, draw.Src, nil)

	s := &scene{
		w: c.Width, h: c.Height, pw: pw, ph: ph,
		x0: (c.Width - pw) / 2, y0: (c.Height-ph)/2 + ph/10,
		r: make([]float32, pw*ph), g: make([]float32, pw*ph), b: make([]float32, pw*ph),
		skin: make([]float32, pw*ph), alpha: make([]float32, pw*ph),
		faceHeight: faceHeightOfPhoto * float64(ph),
		phaseX:     2 * math.Pi * rng.Float64(),
		phaseY:     2 * math.Pi * rng.Float64(),
	}
	// The wall: the photo's top corners.
	var n float32
	for _, p := range []image.Point{{2, 2}, {sb.Dx() - 3, 2}, {2, 20}, {sb.Dx() - 3, 20}} {
		r, g, b, _ := photo.At(sb.Min.X+p.X, sb.Min.Y+p.Y).RGBA()
		s.bg[0] += float32(r >> 8)
		s.bg[1] += float32(g >> 8)
		s.bg[2] += float32(b >> 8)
		n++
	}
	for i := range s.bg {
		s.bg[i] /= n
	}
	const feather = 12.0
	for y := 0; y < ph; y++ {
		for x := 0; x < pw; x++ {
			i := y*pw + x
			o := scaled.PixOffset(x, y)
			s.r[i], s.g[i], s.b[i] = float32(scaled.Pix[o]), float32(scaled.Pix[o+1]), float32(scaled.Pix[o+2])
			s.skin[i] = float32(scaledMask.Pix[scaledMask.PixOffset(x, y)]) / 255
			edge := math.Min(math.Min(float64(x), float64(pw-1-x)), math.Min(float64(y), float64(ph-1-y)))
			s.alpha[i] = float32(math.Min(1, edge/feather))
		}
	}
	for i := range s.gauss {
		s.gauss[i] = float32(rng.NormFloat64())
	}
	s.sigma = noiseSigma(c)
	s.pulseScale = [3]float64{1, 1, 1}
	if c.Pitch != 0 || c.ScreenLight > 0 {
		s.head = s.headMask()
	}
	if c.Melanin > 0 {
		s.tone(c.Melanin)
	}
	if c.Fringe > 0 {
		s.addFringe(c.Fringe, webcam)
	}
	if c.Glasses {
		s.addGlasses()
	}
	return s, nil
}

// skinMask marks the photo's skin: chroma inside the skin box of Chai and
// Ngan ("Face segmentation using skin-color map in videophone
// applications", IEEE TCSVT 1999: Cb 77-127, Cr 133-173) and luma 40-240,
// softened by a 5x5 box blur so the pulse fades out at the skin's edge
// instead of stopping at a pixel boundary. It is independent of the
// service's own skin detection, which the clips are meant to test.
func skinMask(photo image.Image) *image.Gray {
	b := photo.Bounds()
	w, h := b.Dx(), b.Dy()
	hard := make([]float32, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := photo.At(b.Min.X+x, b.Min.Y+y).RGBA()
			yy, cb, cr := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(bl>>8))
			if yy >= 40 && yy <= 240 && cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173 {
				hard[y*w+x] = 1
			}
		}
	}
	out := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s float32
			var n int
			for dy := -2; dy <= 2; dy++ {
				for dx := -2; dx <= 2; dx++ {
					if xx, yy := x+dx, y+dy; xx >= 0 && yy >= 0 && xx < w && yy < h {
						s += hard[yy*w+xx]
						n++
					}
				}
			}
			out.Pix[y*out.Stride+x] = uint8(255 * s / float32(n))
		}
	}
	return out
}

// offset is the head's displacement at t, pixels: two incommensurate sways
// per axis scaled by Motion, plus the small nod breathing gives the head.
func (c *Clip) offset(t float64) (dx, dy float64) {
	s := c.scene
	m := c.cfg.Motion * s.faceHeight
	dx = m * (0.6*math.Sin(2*math.Pi*0.13*t+s.phaseX) + 0.4*math.Sin(2*math.Pi*0.37*t+s.phaseY))
	dy = m * (0.5*math.Sin(2*math.Pi*0.11*t+s.phaseY) + 0.3*math.Sin(2*math.Pi*0.29*t+s.phaseX))
	dy += 0.003 * s.faceHeight * c.phys.br.value(t)
	if c.cfg.Drift > 0 {
		dx += s.faceHeight * sampleAt(c.pose.dx, t)
		dy += s.faceHeight * sampleAt(c.pose.dy, t)
	}
	return dx, dy
}

// Render draws frame i into dst, which must be Width x Height.
func (c *Clip) Render(i int, dst *image.RGBA) {
	s := c.scene
	t := c.times[i]
	light := c.lighting(t)
	faceLight, screen := c.screen.face(t)
	p, resp := c.phys.pulse(t), c.phys.br.value(t)
	// Skin gain per channel: blood absorbs, so the skin darkens as the
	// pulse rises; breathing moves the skin's brightness a little too.
	var gain [3]float32
	ratio := [3]float64{c.cfg.PulseRed, 1, c.cfg.PulseBlue}
	for ch := range gain {
		gain[ch] = float32((c.cfg.PulseAmplitude*ratio[ch]*-p + c.phys.riiv*resp) * s.pulseScale[ch])
	}
	dx, dy := c.offset(t)
	ox, oy := float64(s.x0)+dx, float64(s.y0)+dy
	ix := int(math.Floor(ox))
	fx := float32(ox - float64(ix))
	// Canvas pixel x shows photo coordinate x-ox, between photo pixels
	// x-ix-1 (weight fx) and x-ix (weight 1-fx); rows likewise, through
	// the head's pose (scene.rows).
	rows := make([]rowSource, s.h)
	s.rows(oy, c.cfg.Pitch+sampleAt(c.pose.pitch, t), rows)

	noise := rand.New(rand.NewPCG(c.noiseK, uint64(i)))
	var bits uint64
	nbits := 0
	next := func() float32 { // a standard normal sample
		if nbits < 10 {
			bits, nbits = noise.Uint64(), 64
		}
		v := s.gauss[bits&1023]
		bits >>= 10
		nbits -= 10
		return v
	}
	shot, sigma := c.cfg.ShotNoise, s.sigma[0]
	put := func(o int, v float32) {
		sg := sigma
		if shot {
			sg = s.sigma[min(255, max(0, int(v)))]
		}
		v += next() * sg
		dst.Pix[o] = uint8(min(255, max(0, v+0.5)))
	}
	planes := [3][]float32{s.r, s.g, s.b}
	for y := 0; y < s.h; y++ {
		row := dst.Pix[y*dst.Stride : y*dst.Stride+4*s.w]
		// Photo row py (and py+1) lies behind canvas row y.
		py, fy := rows[y].py, rows[y].fy
		bl := bilinear{fx * fy, (1 - fx) * fy, fx * (1 - fy), (1 - fx) * (1 - fy), s.pw}
		// The head's light this row: its shading and the screen's light.
		var headLight [3]float32
		for ch := range headLight {
			headLight[ch] = rows[y].shade*faceLight[ch] - 1
		}
		for x := 0; x < s.w; x++ {
			o := 4 * x
			px := x - ix - 1
			if py < 0 || py >= s.ph-1 || px < 0 || px >= s.pw-1 {
				for ch := range 3 {
					put(y*dst.Stride+o+ch, light[ch]*s.bg[ch])
				}
				row[o+3] = 255
				continue
			}
			j := py*s.pw + px
			a, m := bl.at(s.alpha, j), bl.at(s.skin, j)
			var hd, gl float32
			if s.head != nil {
				hd = bl.at(s.head, j)
			}
			if s.glare != nil {
				gl = screen * bl.at(s.glare, j)
			}
			for ch, plane := range planes {
				v := bl.at(plane, j) * (1 + m*gain[ch])
				if s.head != nil {
					v *= 1 + hd*headLight[ch]
				}
				v += gl
				put(y*dst.Stride+o+ch, light[ch]*(a*v+(1-a)*s.bg[ch]))
			}
			row[o+3] = 255
		}
	}
}

// bilinear holds the weights of the four photo pixels behind a canvas
// pixel: (px, py), (px+1, py), (px, py+1), (px+1, py+1); pw is the
// photo's width.
type bilinear struct {
	w00, w01, w10, w11 float32
	pw                 int
}

func (b bilinear) at(plane []float32, j int) float32 {
	return b.w00*plane[j] + b.w01*plane[j+1] + b.w10*plane[j+b.pw] + b.w11*plane[j+b.pw+1]
}

// Frames renders the clip frame by frame with each frame's capture time. The
// image is reused: it is valid until the next iteration.
func (c *Clip) Frames() iter.Seq2[time.Duration, image.Image] {
	return func(yield func(time.Duration, image.Image) bool) {
		img := image.NewRGBA(image.Rect(0, 0, c.cfg.Width, c.cfg.Height))
		for i := range c.times {
			c.Render(i, img)
			if !yield(c.Time(i), img) {
				return
			}
		}
	}
}
