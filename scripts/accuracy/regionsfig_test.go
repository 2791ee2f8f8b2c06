package main

import (
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// TestRegionsFigure draws the regions picture and checks that every panel
// holds a tracked face: the forehead's and the cheeks' outlines are drawn
// in each, the forehead's above the cheeks'.
func TestRegionsFigure(t *testing.T) {
	t.Chdir("../..") // faceDir is relative to the repository
	m, err := drawRegions()
	if err != nil {
		t.Fatal(err)
	}
	if want := image.Rect(0, 0, 3*figurePanel+2*figureGap, 2*figurePanel+figureGap); m.Rect != want {
		t.Fatalf("picture %v, want %v", m.Rect, want)
	}
	for i := range 6 {
		at := image.Pt(i%figureCols*(figurePanel+figureGap), i/figureCols*(figurePanel+figureGap))
		var fore, cheek, foreY, cheekY int
		for y := at.Y; y < at.Y+figurePanel; y++ {
			for x := at.X; x < at.X+figurePanel; x++ {
				switch m.RGBAAt(x, y) {
				case foreheadInk:
					fore++
					foreY += y
				case cheekInk:
					cheek++
					cheekY += y
				}
			}
		}
		if fore < 100 || cheek < 200 {
			t.Errorf("panel %d: %d forehead and %d cheek outline pixels", i+1, fore, cheek)
			continue
		}
		if foreY/fore >= cheekY/cheek {
			t.Errorf("panel %d: the forehead's outline (row %d) is not above the cheeks' (row %d)", i+1, foreY/fore, cheekY/cheek)
		}
	}
	path := filepath.Join(t.TempDir(), "regions.jpg")
	if err := regionsFigure(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := jpeg.DecodeConfig(f); err != nil || cfg.Width != m.Rect.Dx() || cfg.Height != m.Rect.Dy() {
		t.Errorf("written picture: %+v, %v; want a %v JPEG", cfg, err, m.Rect.Size())
	}
}
