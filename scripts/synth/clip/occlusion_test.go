package clip

import (
	"math/rand/v2"
	"testing"
)

// skinIn sums the skin mask over rows [from, to) of the photo, fractions
// of its height.
func skinIn(s *scene, from, to float64) float64 {
	var sum float64
	for y := int(from * float64(s.ph)); y < int(to*float64(s.ph)); y++ {
		for x := range s.pw {
			sum += float64(s.skin[y*s.pw+x])
		}
	}
	return sum
}

func TestGlasses(t *testing.T) {
	bare, err := New(Config{Seconds: 0.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	glasses, err := New(Config{Seconds: 0.1, Seed: 1, Glasses: true})
	if err != nil {
		t.Fatal(err)
	}
	b, g := bare.scene, glasses.scene
	// The rims cover skin at the eyes and the top of the cheeks, not at
	// the mouth.
	if lost := 1 - skinIn(g, 0.4, 0.55)/skinIn(b, 0.4, 0.55); lost < 0.1 || lost > 0.5 {
		t.Errorf("glasses cover %.0f%% of the skin at the eyes, want 10-50%%", 100*lost)
	}
	if skinIn(g, 0.65, 0.75) != skinIn(b, 0.65, 0.75) {
		t.Error("glasses cover the mouth")
	}
	// Glare only on the lenses, and bright at its peak.
	var peak float32
	for i, v := range g.glare {
		y := i / g.pw
		if v > 0 && (y < int(0.35*float64(g.ph)) || y > int(0.56*float64(g.ph))) {
			t.Fatalf("glare %.1f at photo row %d, outside the lenses", v, y)
		}
		peak = max(peak, v)
	}
	if peak < 0.8*glarePeak {
		t.Errorf("glare peaks at %.0f levels, want about %.0f", peak, glarePeak)
	}
}

func TestFringe(t *testing.T) {
	for _, share := range []float64{0.3, 0.7} {
		bare, err := New(Config{Seconds: 0.1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := bare.scene
		forehead, below := skinIn(s, 0.12, browRow), skinIn(s, browRow, 0.9)
		s.addFringe(share, rand.New(rand.NewPCG(1, 1)))
		// The strands reach share of the forehead's height and thin out
		// over their last third, leaving skin between them: they cover
		// a little less of the skin than their share.
		if covered := 1 - skinIn(s, 0.12, browRow)/forehead; covered < 0.5*share || covered > 1.1*share {
			t.Errorf("fringe of %.1f covers %.2f of the forehead's skin", share, covered)
		}
		if skinIn(s, browRow, 0.9) != below {
			t.Error("the fringe reaches below the eyebrows")
		}
	}
}
