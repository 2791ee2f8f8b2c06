package spectrum

import "math"

// PulseBand is the range of frequencies a spectral pulse SNR is taken over,
// in Hz: 36-240 bpm, a little wider than the heart-rate search band so the
// noise around its edges counts.
const (
	PulseBandLoHz = 0.6
	PulseBandHiHz = 4.0
)

// PulsePower splits the power of s within the pulse band into the part that
// belongs to a pulse at f0Hz (f0 ± 0.1 Hz and its second harmonic
// 2 f0 ± 0.2 Hz, the template of de Haan & Jeanne, "Robust pulse rate from
// chrominance-based rPPG", IEEE TBME 60(10), 2013) and the rest. For windows
// shorter than 20 s the template widens to the Hann main lobe, ± 2/T Hz, so
// a pure tone keeps all its power whatever the window.
func (s *Spectrum) PulsePower(f0Hz float64) (signal, noise float64) {
	hi := min(PulseBandHiHz, float64(len(s.Power)-1)*s.BinHz)
	w := 0.1
	if s.Seconds > 0 {
		w = max(w, 2/s.Seconds)
	}
	for k := s.bin(PulseBandLoHz); k <= s.bin(hi); k++ {
		f := float64(k) * s.BinHz
		if math.Abs(f-f0Hz) <= w || math.Abs(f-2*f0Hz) <= 2*w {
			signal += s.Power[k]
		} else {
			noise += s.Power[k]
		}
	}
	return signal, noise
}

// SNR returns the pulse signal-to-noise ratio of s at f0Hz in decibels,
// 10 log10(signal / noise) with PulsePower's split (de Haan & Jeanne 2013).
func (s *Spectrum) SNR(f0Hz float64) float64 {
	sig, noise := s.PulsePower(f0Hz)
	return 10 * math.Log10(max(sig, 1e-300)/max(noise, 1e-300))
}
