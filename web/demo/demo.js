// The demo page: mounts the widget with the settings of the form, and a
// token route that only the development server has. The query may preset
// the form (?chain=realtime&transport=webrtc&externalId=p1&age=40) and start
// at once (&autostart=1).

import PulseWire from '/widget/pulsewire.js';

const form = document.getElementById('settings');
const slot = document.getElementById('widget');
const raw = document.getElementById('raw');
// A person who asked for less motion is moved to the widget at once.
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');

// What the page saw, for a person reading the console and for the
// end-to-end test that drives this page.
const demo = { state: 'idle', result: null, error: null, vitals: 0, calibrated: false, widget: null };
window.pulsewireDemo = demo;

const query = new URLSearchParams(location.search);
for (const name of ['chain', 'transport']) {
  const v = query.get(name);
  const input = v && form.querySelector(`input[name="${name}"][value="${CSS.escape(v)}"]`);
  if (input) input.checked = true;
}
// A choice other than the defaults is shown, not hidden under Advanced.
if (!form.elements.chain[0].checked || !form.elements.transport[0].checked) {
  document.getElementById('advanced').open = true;
}
for (const name of ['externalId', 'age', 'sex', 'weight', 'height']) {
  if (query.has(name)) form.elements[name].value = query.get(name);
}

// measureInputs reads the optional person fields into the measure's inputs.
function measureInputs() {
  const f = new FormData(form);
  const userData = {};
  for (const name of ['externalId', 'sex']) {
    const v = String(f.get(name) || '').trim();
    if (v) userData[name] = v;
  }
  for (const name of ['age', 'weight', 'height']) {
    const v = String(f.get(name) || '').trim();
    if (v) userData[name] = Number(v);
  }
  return Object.keys(userData).length ? { userData, tags: ['demo'] } : { tags: ['demo'] };
}

function mount(autoStart) {
  if (demo.widget) demo.widget.unmount();
  const f = new FormData(form);
  const chain = f.get('chain');
  Object.assign(demo, { state: 'idle', result: null, error: null, vitals: 0, calibrated: false });
  raw.hidden = true;
  const options = {
    // The widget asks this route for a new token at every start.
    tokenUrl: `/demo/access-tokens?chain=${encodeURIComponent(chain)}`,
    chain,
    transport: f.get('transport'),
    measure: measureInputs, // read at every start, so later edits count
    autoStart,
    onState: (s) => {
      demo.state = s;
      // Measuring: the camera, the guidance and the live values in view.
      if (s === 'camera') slot.scrollIntoView({ block: 'start', behavior: reducedMotion.matches ? 'auto' : 'smooth' });
    },
    onVitals: (v) => { demo.vitals++; demo.lastVitals = v; },
    onResult: (measure) => {
      demo.result = measure;
      raw.querySelector('pre').textContent = JSON.stringify(measure, null, 2);
      raw.hidden = false;
    },
    onCalibrated: () => { demo.calibrated = true; },
    onError: (err) => {
      demo.error = { code: err.code, message: err.message, detail: err.detail };
      console.warn('PulseWire:', err.code, err.detail);
    },
  };
  demo.widget = PulseWire.mount(slot, options);
}

form.addEventListener('change', (ev) => {
  if (ev.target.name === 'chain' || ev.target.name === 'transport') mount(false);
});
mount(query.get('autostart') === '1');
