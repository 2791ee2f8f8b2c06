// Every word the widget shows, in English. A page may replace any of them
// with mount's `text` option (for another language, say).

export const defaultText = {
  title: 'Vital signs measurement',
  intro: 'Sit still, face the camera in even light and keep your face inside the oval.',
  start: 'Start measurement',
  cancel: 'Cancel',
  finish: 'Finish',
  again: 'Measure again',
  close: 'Close',
  preview: 'Camera preview',
  progress: 'Measurement progress',
  wave: 'Live pulse wave',
  camera: 'Starting the camera…',
  connecting: 'Connecting…',
  measuring: 'Measuring. Keep still.',
  computing: 'Computing your results…',
  cancelled: 'Measurement cancelled.',
  results: 'Your results',
  notMeasured: 'not measured',
  calibrationTitle: 'Reference blood pressure',
  calibrationHelp: 'If you have just measured your blood pressure with a cuff, enter it to calibrate your future measurements.',
  systole: 'Systolic (mmHg)',
  diastole: 'Diastolic (mmHg)',
  save: 'Save',
  skip: 'Skip',
  calibrated: 'Saved. Thank you.',

  // Live guidance, by capture-quality code.
  guidance: {
    CONFORMITY_FACE_PRESENCE: 'Keep your face in the oval',
    CONFORMITY_FACE_SIZE: 'Move closer',
    CONFORMITY_POOR_LIGHT: 'More light, please',
    CONFORMITY_MUCH_VARIATIONS: 'Hold still',
    CONFORMITY_ONDULATIONS: 'Avoid flickering light',
    CONFORMITY_LOW_FPS: 'The camera is too slow: close other applications',
    CONFORMITY_INITIALISATION: 'Measuring. Keep still.',
    CONFORMITY_MISSING_SIGNAL: 'Hold still in even light',
  },

  // The variables of a result, with their units.
  variables: {
    hr: ['Heart rate', 'bpm'],
    br: ['Breathing rate', 'breaths/min'],
    hrv: ['Heart rate variability (RMSSD)', 'ms'],
    strs: ['Stress level', ''],
    bp: ['Blood pressure', 'mmHg'],
    bpClass: ['Blood pressure class', ''],
    physicalAge: ['Physical age', 'years'],
    bmi: ['Body mass index', 'kg/m²'],
    faceBmi: ['Body mass index from the face', 'kg/m²'],
    healthScore: ['Health score', ''],
  },
  of: 'of', // "2 of 5"

  // Why a variable has no value, by error code group.
  reasons: {
    CONFORMITY: 'the capture was not good enough',
    MISSING_USER_DATA: 'needs more about you',
    NOT_CALIBRATED: 'needs a reference blood pressure first',
    CREDIT_EXCEEDED: 'not available this month',
    MISSING_IMAGE: 'needs a photo, not a video',
    other: 'could not be measured',
  },
};

/** withText merges a page's replacements into the defaults, one level deep. */
export function withText(given) {
  const t = { ...defaultText };
  for (const [k, v] of Object.entries(given || {})) {
    t[k] = v && typeof v === 'object' && !Array.isArray(v) ? { ...defaultText[k], ...v } : v;
  }
  return t;
}
