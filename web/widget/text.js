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
  reconnecting: 'The connection was lost. Reconnecting…',

  // Live guidance, by capture-quality code.
  guidance: {
    CONFORMITY_FACE_PRESENCE: 'Keep your face in the oval',
    CONFORMITY_FACE_SIZE: 'Move closer',
    CONFORMITY_POOR_LIGHT: 'More light, please',
    CONFORMITY_MUCH_VARIATIONS: 'Hold still',
    CONFORMITY_ONDULATIONS: 'Avoid flickering light',
    CONFORMITY_LOW_FPS: 'The camera is too slow: close other applications',
    CONFORMITY_INITIALISATION: 'Measuring. Keep still.',
    CONFORMITY_MISSING_SIGNAL: 'Pulse too faint: face the light and hold still',
    // Not the server's: the widget's own, while its link lags behind the camera.
    SLOW_LINK: 'The connection is slow: the measurement takes longer',
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

  // Why a variable has no value: its error code in plain words. A code
  // missing here falls back to its group (CONFORMITY, MISSING_USER_DATA),
  // then to `other`.
  reasons: {
    CONFORMITY_FACE_PRESENCE: 'no face was found for long enough',
    CONFORMITY_FACE_SIZE: 'the face was too far from the camera',
    CONFORMITY_INITIALISATION: 'the measurement was too short for it',
    CONFORMITY_LOW_FPS: 'the camera sent too few pictures a second',
    CONFORMITY_MISSING_SIGNAL: 'no pulse could be read (more light, less movement)',
    CONFORMITY_MUCH_VARIATIONS: 'too much movement',
    CONFORMITY_ONDULATIONS: 'the light flickered',
    CONFORMITY_POOR_LIGHT: 'too dark',
    CONFORMITY: 'the capture was not good enough',
    MISSING_USER_DATA_AGE: 'needs your age',
    MISSING_USER_DATA_SEX: 'needs your sex',
    MISSING_USER_DATA_WEIGHT: 'needs your weight',
    MISSING_USER_DATA_HEIGHT: 'needs your height',
    MISSING_USER_DATA_SMOKING_STATUS: 'needs your smoking status',
    MISSING_USER_DATA_EXTERNAL_ID: 'needs an external id for you',
    MISSING_USER_DATA: 'needs more about you',
    MISSING_CAPTURES: 'needs a video, not a photo',
    MISSING_IMAGE: 'needs a photo, not a video',
    MISSING_SIGNAL: 'no signal was recorded',
    EXCEEDING_MAX_IMAGE: 'too many photos',
    INVALID_IMAGE_SIZE: 'the photo is too small or too large',
    INVALID_IMAGE_TYPE: 'the photo could not be read',
    NOT_CALIBRATED: 'needs a reference blood pressure first',
    MISSING_BP_CLASSIFICATION: 'needs the blood pressure class first',
    BAD_RMSSD: 'the beats were not clean enough',
    OUT_OF_RANGE: 'outside what can be measured',
    PROCESSOR_FAIL: 'the computation failed',
    MISSING_PROCESSOR: 'the computation failed',
    UNKNOWN: 'the computation failed',
    CREDIT_EXCEEDED: 'not available this month',
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
