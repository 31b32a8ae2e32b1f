// The tour's frame in numbers: its area and sides, the refusals before it is saved, and the tiles' download estimate.


/// Square kilometres of a frame: the same formula as the server's `Frame.areaKm2`.
export function frameAreaKm2(f) {
  const radius = 6371.0088;
  return radius * radius * ((f.east - f.west) * Math.PI / 180) * (Math.sin(f.north * Math.PI / 180) - Math.sin(f.south * Math.PI / 180));
}
/// Width and height in km of a frame, measured across its middle.
export function frameSides(f) {
  const middle = (f.north + f.south) / 2;
  const width = 111.32 * Math.cos(middle * Math.PI / 180) * (f.east - f.west);
  const height = 110.57 * (f.north - f.south);
  return [width, height];
}
/// The frame's reason, beside the fields (an empty message hides it); announced by screen readers.
export function frameMessage(message) {
  let box = document.getElementById('frame-message');
  const anchor = document.getElementById('north')?.closest('fieldset');
  if (!box && anchor) {
    box = document.createElement('div');
    box.id = 'frame-message';
    box.className = 'alert alert-warning mt-2';
    box.setAttribute('role', 'status');
    box.setAttribute('aria-live', 'polite');
    // After the legend, which must stay the fieldset's first child to name it.
    const legend = anchor.querySelector(':scope > legend');
    if (legend) legend.insertAdjacentElement('afterend', box); else anchor.insertAdjacentElement('afterbegin', box);
  }
  if (!box) return;
  box.textContent = message;
  box.hidden = !message;
}
/// Before the frame is saved: one over the limit is refused with its reason; a tiny or sliver-thin one (under
/// 0.05 km² or thinner than 1:20, usually a slip of a handle or a typo) asks first.
export function guardFrameForm(form, inputs, maxAreaKm2) {
  if (!form) return;
  form.addEventListener('submit', (event) => {
    const f = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, parseFloat(el.value)]));
    if (Object.values(f).some(Number.isNaN) || f.north <= f.south || f.east <= f.west) return; // the server explains
    const area = frameAreaKm2(f);
    if (maxAreaKm2 && area > maxAreaKm2) {
      event.preventDefault();
      frameMessage(`This frame is about ${Math.round(area).toLocaleString('en-US')} km², over the ${maxAreaKm2.toLocaleString('en-US')} km² limit: not saved. Make it smaller.`);
      return;
    }
    const [width, height] = frameSides(f);
    const ratio = Math.min(width, height) / Math.max(width, height);
    if (area < 0.05 || ratio < 1 / 20) {
      const size = `${(width * 1000).toFixed(0)} m × ${(height * 1000).toFixed(0)} m`;
      const why = area < 0.05 ? 'very small' : 'very thin';
      if (!window.confirm(`This frame is ${why} (${size}). Save it anyway?`)) {
        event.preventDefault();
        frameMessage(`Not saved: the frame is ${why} (${size}).`);
      }
    }
  });
}
/// The frame editor's tile count and size estimate, live while the rectangle or the zoom fields change.
/// The same Web Mercator arithmetic as the server's `TileMath` (and Python's mercantile).
export function tileRange(frame, zoom) {
  const tile = (lat, lng) => {
    const x = lng / 360 + 0.5;
    const sin = Math.sin(lat * (Math.PI / 180));
    const y = 0.5 - 0.25 * Math.log((1 + sin) / (1 - sin)) / Math.PI;
    const z2 = 2 ** zoom;
    const index = (v) => (v <= 0 ? 0 : v >= 1 ? z2 - 1 : Math.floor((v + 1e-14) * z2));
    return [index(x), index(y)];
  };
  const west = Math.max(-180, frame.west), south = Math.max(-85.051129, frame.south);
  const east = Math.min(180, frame.east), north = Math.min(85.051129, frame.north);
  const [x0, y0] = tile(north, west);
  const [x1, y1] = tile(south + 1e-11, east - 1e-11);
  return x1 < x0 || y1 < y0 ? 0 : (x1 - x0 + 1) * (y1 - y0 + 1);
}
export function setUpTileEstimate() {
  const box = document.getElementById('tile-estimate');
  const text = document.getElementById('tile-estimate-text');
  const warning = document.getElementById('tile-estimate-warning');
  if (!box || !text) return;
  const fields = Object.fromEntries(['north', 'south', 'east', 'west', 'minZoom', 'maxZoom'].map((k) => [k, document.getElementById(k)]));
  const cap = Number(box.dataset.cap);
  const bytesPerTile = Number(box.dataset.bytesPerTile) || 20480;
  const fromUpload = box.dataset.uploadMinZoom !== undefined;
  const update = () => {
    const frame = Object.fromEntries(['north', 'south', 'east', 'west'].map((k) => [k, parseFloat(fields[k]?.value)]));
    let minZoom = fromUpload ? Number(box.dataset.uploadMinZoom) : parseInt(fields.minZoom?.value, 10);
    let maxZoom = fromUpload ? Number(box.dataset.uploadMaxZoom) : parseInt(fields.maxZoom?.value, 10);
    if (Object.values(frame).some(Number.isNaN) || Number.isNaN(minZoom) || Number.isNaN(maxZoom)
        || frame.north <= frame.south || frame.east <= frame.west) return;
    minZoom = Math.max(0, Math.min(20, minZoom));
    maxZoom = Math.max(minZoom, Math.min(20, maxZoom));
    let count = 0;
    for (let z = minZoom; z <= maxZoom; z += 1) count += tileRange(frame, z);
    text.textContent = `${count.toLocaleString('en-US')} tiles at zoom ${minZoom}–${maxZoom}, about ${formatBytes(count * bytesPerTile)}`;
    if (warning) warning.hidden = !(box.dataset.server === 'true' && count > cap);
  };
  for (const field of Object.values(fields)) {
    field?.addEventListener('input', update);
    field?.addEventListener('change', update);
  }
  update();
}
export function formatBytes(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
