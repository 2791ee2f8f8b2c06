package clip

import (
	"image/color"
	"math"
)

// Skin tone from melanin. Skin reflects light in two ways (the dichromatic
// model of skin used by rPPG methods: Wang, den Brinker, Stuijk and de
// Haan, "Algorithmic principles of remote PPG", IEEE TBME 2017): at its
// surface, a colourless reflection of 4-7% of the light at every
// wavelength that carries no pulse (Anderson and Parrish, "The optics of
// human skin", J Invest Dermatol 1981), and from inside, light that has
// crossed the epidermis, been scattered in the dermis, where the blood
// pulses, and crossed the epidermis again. Melanin sits in the epidermis,
// so it filters the inner light twice and leaves the surface reflection:
//
//	R_c = S + D_c·T_c²,  T_c = exp(-f·μ_mel(λ_c)·d)
//
// with S the surface reflectance, D_c the inner (body) reflectance of
// skin without melanin in channel c, f the melanosome volume fraction of
// the epidermis, d its thickness and μ_mel(λ) = 6.6·10¹¹·λ^-3.33 cm⁻¹ (λ
// in nm) the absorption of a melanosome (Jacques, "Skin optics", Oregon
// Medical Laser Center News 1998, which gives f as 1.3-6.3% for lightly
// pigmented adults, 11-16% for moderately and 18-43% for darkly
// pigmented ones).
//
// A darker skin is the photo's skin with its level scaled by R_c(f) over
// R_c(f₀) in each channel. The pulse changes the inner light only, so the
// relative pulse a pixel shows is the inner light's relative change
// diluted by the surface reflection, D_c·T_c²/R_c: as melanin darkens the
// inner light, the surface reflection takes a larger share and the pulse
// shrinks, most in blue and green, least in red. The absolute pulse,
// what the camera must resolve against its noise and the encoder's
// quantisation, shrinks with the level as well: the reason camera pulse
// measurement is known to do worse on dark skin (Nowara, McDuff and
// Veeraraghavan, "A meta-analysis of the impact of skin type and gender
// on non-contact photoplethysmography measurements", CVPR Workshops 2020;
// Dasari et al., "Evaluation of biases in remote photoplethysmography
// methods", npj Digital Medicine 2021).
const (
	// photoMelanin is the melanosome fraction taken for the photo's light
	// skin.
	photoMelanin = 0.04
	// surfaceReflectance is S, the middle of Anderson and Parrish's 4-7%.
	surfaceReflectance = 0.05
	// epidermisCM is d, the epidermis's thickness on the face, cm (60 µm).
	epidermisCM = 0.006
)

// channelNM are the effective wavelengths of a colour camera's red, green
// and blue filters, nm.
var channelNM = [3]float64{600, 540, 460}

// bodyReflectance is D_c·T_c(f₀)², the inner reflectance of the photo's
// light skin: with S it makes 0.55, 0.38 and 0.33, the red, green and
// blue reflectance of lightly pigmented skin in published spectra
// (Anderson and Parrish 1981), whose ratios match the photo's skin
// (about 225, 160 and 140 levels).
var bodyReflectance = [3]float64{0.50, 0.33, 0.28}

// melaninAbsorption is μ_mel at nm, per cm.
func melaninAbsorption(nm float64) float64 { return 6.6e11 * math.Pow(nm, -3.33) }

// skinTone returns, per channel, the factor on the photo skin's level and
// the factor on its relative pulse for a melanosome fraction f.
func skinTone(f float64) (level, pulse [3]float64) {
	for ch := range level {
		t2 := math.Exp(-2 * (f - photoMelanin) * melaninAbsorption(channelNM[ch]) * epidermisCM)
		d0 := bodyReflectance[ch]
		d := d0 * t2
		level[ch] = (surfaceReflectance + d) / (surfaceReflectance + d0)
		pulse[ch] = (d / (surfaceReflectance + d)) / (d0 / (surfaceReflectance + d0))
	}
	return level, pulse
}

// tone darkens the photo's skin to melanosome fraction f and scales the
// pulse to match. The skin mask leaves holes at shadows and marks (the
// nose's side) and leaves out the lips and the ears' rims, redder than
// its box; where most of the neighbourhood is skin the pixel is toned
// fully, which closes the holes, and reddish pixels near skin
// (YCbCr chroma Cr above 140 with Cb below 130) are toned too, so no patch
// of the old tone is left. Eyes, hair and the wall keep their colour.
func (s *scene) tone(f float64) {
	level, pulse := skinTone(f)
	s.pulseScale = pulse
	w := boxBlur(s.skin, s.pw, s.ph, max(1, s.pw/80))
	for i, v := range w {
		k := s.skin[i] // the mask's own soft edge,
		if v > 0.5 {   // and its holes closed
			k = 1
		}
		_, cb, cr := color.RGBToYCbCr(uint8(s.r[i]), uint8(s.g[i]), uint8(s.b[i]))
		if cr > 140 && cb < 130 && v > 0.1 {
			k = 1
		}
		s.r[i] *= float32(1 + float64(k)*(level[0]-1))
		s.g[i] *= float32(1 + float64(k)*(level[1]-1))
		s.b[i] *= float32(1 + float64(k)*(level[2]-1))
	}
}
