package clip

import "testing"

// TestKeyFramePresets checks that each person of the key-frame set comes
// once per interval, the same capture each time, and that the clips are
// valid.
func TestKeyFramePresets(t *testing.T) {
	ps := KeyFramePresets()
	if len(ps) != 8*len(KeyFrameIntervals) {
		t.Fatalf("%d presets, want %d", len(ps), 8*len(KeyFrameIntervals))
	}
	names := map[string]bool{}
	people := map[uint64]map[int]Config{}
	for _, p := range ps {
		checkPreset(t, names, p)
		if people[p.Config.Seed] == nil {
			people[p.Config.Seed] = map[int]Config{}
		}
		people[p.Config.Seed][p.Encoding.KeyFrameEvery] = p.Config
	}
	for seed, byInterval := range people {
		if len(byInterval) != len(KeyFrameIntervals) {
			t.Errorf("seed %d: %d intervals, want %d", seed, len(byInterval), len(KeyFrameIntervals))
		}
		for every, c := range byInterval {
			if c != byInterval[0] {
				t.Errorf("seed %d: the clip with a key frame every %d differs from the encoder's own", seed, every)
			}
		}
	}
}
