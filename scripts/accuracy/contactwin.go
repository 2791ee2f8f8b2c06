package main

// The contact tables in the forms the service meets most: one-minute
// windows, a clinical finger sensor beside an ECG and a respiration belt,
// and a phone's fingertip video reduced to its red channel.

// restingMinutes scores one-minute windows every 15 s of the
// neurokit-resting finger PPG: hr against the ECG, RMSSD against the ECG's
// R peaks, br against the belt.
func restingMinutes(data string, verbose bool) (*table, error) {
	return restingWindows(data, verbose, 60, 15)
}

// phoneRed scores the uw-phone-oximetry windows with the mean red channel
// as the trace: the form a phone app usually sends, the channel the flash
// lights best through a fingertip and the one nearest saturation.
func phoneRed(data string, verbose bool) (*table, error) {
	return oximetryWindows(data, verbose, "Contact PPG: uw-phone-oximetry red channel, 1-minute windows, hr vs oximeters",
		"the fingertip's mean red", func(r, _, _ float64) float64 { return r })
}
