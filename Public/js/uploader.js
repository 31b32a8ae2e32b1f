// Uploads on the waypoint page: several files at once, drag and drop, a progress bar and a cancel
// button per file, over tus 1.0 so a dropped connection resumes from the last stored byte. Unfinished
// uploads are remembered (localStorage) and continue when the same file is chosen again after a reload.
// Without JavaScript the same form posts multipart/form-data. The tour page uploads through `uploadFiles` too
// (files chosen with a new waypoint, or in the panel beside the map).
import { csrfToken } from './panel.js';

// Each PATCH is sized to take about two seconds. It starts at 8 MiB and doubles while PATCHes finish in under one
// second, up to 64 MiB: every PATCH costs the browser a request of its own, which caps a fast link. It halves on a slow
// uplink (a PATCH over four seconds), down to 1 MiB, so a connection cut behind a proxy that buffers bodies loses a
// few seconds of sending, not minutes.
const CHUNK = { start: 8 << 20, min: 1 << 20, max: 64 << 20, seconds: 2 };
const ENDPOINT = '/api/v1/manage/uploads';
const form = document.getElementById('upload-form');
const active = new Set();

if (form) setUp(form);
watchPending();

function setUp(form) {
  const input = document.getElementById('upload-files');
  const drop = document.getElementById('upload-drop');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.files.length) start([...input.files]);
    input.value = '';
  });
  input.addEventListener('change', () => { if (input.files.length) { start([...input.files]); input.value = ''; } });
  // A chosen or dropped file starts at once here, so the Upload button (for browsers without scripts) would only
  // suggest a second step that does not exist.
  const submit = document.getElementById('upload-submit');
  if (submit) submit.hidden = true;
  const help = document.getElementById('upload-help');
  if (help) help.append(' Uploading starts as soon as you choose or drop a file.');
  drop.addEventListener('dragover', (event) => { event.preventDefault(); drop.classList.add('upload-drop-active'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('upload-drop-active'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('upload-drop-active');
    start([...event.dataTransfer.files]);
  });
  listUnfinished();
}

/// The waypoint page's form as an upload target: its tour, waypoint, limit and progress list.
function pageTarget() {
  return {
    tour: form.dataset.tour, waypoint: form.dataset.waypoint, maxBytes: Number(form.dataset.max),
    maxSize: form.dataset.maxSize, list: document.getElementById('upload-progress'),
  };
}

function start(files) {
  uploadFiles(files, pageTarget(), (upload) => {
    listUnfinished();
    if (active.size === 0 && upload.finished) setTimeout(() => location.reload(), 800);
  });
}

/// Uploads files to a waypoint (`target`: tour, waypoint, maxBytes, maxSize in words, and the list that shows each
/// file's progress), each over tus; `settled(upload)` runs when one ends, finished or not. A file over the limit is
/// refused before a byte is sent, with what to do, and that refusal takes the focus.
export function uploadFiles(files, target, settled = () => {}) {
  for (const file of files) {
    if (target.maxBytes && file.size > target.maxBytes) {
      addRow(file.name, target.list).fail(tooLarge(file, target), { focus: true });
      continue;
    }
    const upload = new Upload(file, target);
    active.add(upload);
    upload.run().finally(() => {
      active.delete(upload);
      settled(upload);
    });
  }
}

/// Whether any upload of this page is still sending.
export function uploading() { return active.size > 0; }

/// Both sizes in the same unit the page states its limit in (MiB), and the way out.
function tooLarge(file, target) {
  const limit = target.maxSize || formatBytes(target.maxBytes);
  return `“${file.name}” is ${formatBytes(file.size)}, over the ${limit} limit for one file: not uploaded. `
    + 'Make it smaller (a lower resolution or bitrate, or split it into parts), then choose it again.';
}

function storageKey(target, file) {
  return `trail-upload:${target.tour}:${target.waypoint}:${file.name}:${file.size}:${file.lastModified}`;
}

function listUnfinished() {
  const box = document.getElementById('upload-resume');
  const list = document.getElementById('upload-resume-list');
  list.replaceChildren();
  const prefix = `trail-upload:${form.dataset.tour}:${form.dataset.waypoint}:`;
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key.startsWith(prefix)) continue;
    const entry = JSON.parse(localStorage.getItem(key) || '{}');
    if ([...active].some((u) => u.key === key)) continue;
    const item = document.createElement('li');
    item.textContent = `${entry.name} (${Math.round((entry.offset || 0) / entry.size * 100)} % sent)`;
    list.append(item);
  }
  box.hidden = list.children.length === 0;
}

class Upload {
  constructor(file, target) {
    this.file = file;
    this.target = target;
    this.key = storageKey(target, file);
    this.row = addRow(file.name, target.list, () => this.cancel());
    this.cancelled = false;
    this.chunk = CHUNK.start;
    this.finished = false;
  }

  async run() {
    try {
      let offset = await this.resumeOrCreate();
      let delay = 1000;
      while (offset < this.file.size && !this.cancelled) {
        try {
          offset = await this.send(offset);
          delay = 1000;
        } catch (error) {
          if (this.cancelled) return;
          if (error.fatal) throw error;
          // Network gone: wait, ask the server what it has, and go on from there.
          this.row.status(`Connection lost — retrying in ${Math.round(delay / 1000)} s…`);
          await sleep(delay);
          delay = Math.min(delay * 2, 30000);
          try { offset = await this.head(); } catch (_) { /* still offline: try again */ }
        }
      }
      if (this.cancelled) return;
      this.finished = true;
      localStorage.removeItem(this.key);
      this.row.done('Uploaded — scanning for malware…');
    } catch (error) {
      localStorage.removeItem(this.key);
      this.row.fail(error.message, { focus: true });
    }
  }

  async resumeOrCreate() {
    const saved = JSON.parse(localStorage.getItem(this.key) || 'null');
    if (saved?.url) {
      this.url = saved.url;
      try {
        const offset = await this.head();
        this.row.status(`Resuming at ${Math.round(offset / this.file.size * 100)} %…`);
        return offset;
      } catch (error) {
        if (!error.fatal) throw error;
        localStorage.removeItem(this.key);  // expired or gone: start again
      }
    }
    const metadata = { tour: this.target.tour, waypoint: this.target.waypoint, filename: this.file.name };
    const response = await fetch(ENDPOINT, {
      method: 'POST', credentials: 'same-origin',
      headers: {
        'Tus-Resumable': '1.0.0', 'Upload-Length': String(this.file.size), 'X-CSRF-Token': csrfToken(),
        'Upload-Metadata': Object.entries(metadata).map(([k, v]) => `${k} ${base64(v)}`).join(','),
      },
    });
    if (!response.ok) throw fatal(await errorMessage(response));
    this.url = response.headers.get('Location');
    this.remember(0);
    return 0;
  }

  async head() {
    const response = await fetch(this.url, { method: 'HEAD', credentials: 'same-origin', headers: { 'Tus-Resumable': '1.0.0' }, cache: 'no-store' });
    if (response.status === 404 || response.status === 410) throw fatal('The unfinished upload expired; choose the file again.');
    if (!response.ok) throw new Error(`HEAD answered ${response.status}`);
    return Number(response.headers.get('Upload-Offset'));
  }

  send(offset) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      this.xhr = xhr;
      xhr.open('PATCH', this.url);
      xhr.setRequestHeader('Tus-Resumable', '1.0.0');
      xhr.setRequestHeader('Upload-Offset', String(offset));
      xhr.setRequestHeader('Content-Type', 'application/offset+octet-stream');
      xhr.setRequestHeader('X-CSRF-Token', csrfToken());
      xhr.upload.onprogress = (event) => this.row.progress(offset + event.loaded, this.file.size);
      const end = Math.min(offset + this.chunk, this.file.size);
      const began = performance.now();
      xhr.onload = () => {
        if (xhr.status === 204) {
          // Before resolving: the next PATCH is sent as soon as this one's promise settles.
          if (end < this.file.size) this.resize((performance.now() - began) / 1000);
          const next = Number(xhr.getResponseHeader('Upload-Offset'));
          this.remember(next);
          this.row.progress(next, this.file.size);
          resolve(next);
        } else if (xhr.status === 409) {
          reject(new Error('offset moved'));  // ask HEAD and continue
        } else {
          let message = `The server answered ${xhr.status}.`;
          try { message = JSON.parse(xhr.responseText).error.message; } catch (_) { /* keep the status */ }
          reject(fatal(message));
        }
      };
      xhr.onerror = () => reject(new Error('network'));
      xhr.onabort = () => reject(new Error('aborted'));
      xhr.send(this.file.slice(offset, end));
    });
  }

  // The next PATCH's size from how long a whole one took (the last, shorter one says nothing).
  resize(seconds) {
    if (seconds < CHUNK.seconds / 2) this.chunk = Math.min(this.chunk * 2, CHUNK.max);
    else if (seconds > CHUNK.seconds * 2) this.chunk = Math.max(this.chunk / 2, CHUNK.min);
  }

  remember(offset) {
    localStorage.setItem(this.key, JSON.stringify({ url: this.url, name: this.file.name, size: this.file.size, offset }));
  }

  async cancel() {
    this.cancelled = true;
    this.xhr?.abort();
    localStorage.removeItem(this.key);
    this.row.fail('Cancelled.');
    if (this.url) {
      // The aborted PATCH can hold the upload on the server for a moment (409): ask again until it lets go.
      for (let attempt = 0; attempt < 20; attempt++) {
        const response = await fetch(this.url, { method: 'DELETE', credentials: 'same-origin', headers: { 'Tus-Resumable': '1.0.0', 'X-CSRF-Token': csrfToken() } }).catch(() => null);
        if (response?.status !== 409) break;
        await sleep(250);
      }
    }
  }
}

function addRow(name, list, onCancel) {
  const item = document.createElement('li');
  item.className = 'mb-2 upload-row';
  const label = document.createElement('div');
  label.className = 'd-flex gap-2 align-items-center';
  const title = document.createElement('span');
  title.className = 'me-auto text-break';
  title.textContent = name;
  label.append(title);
  let cancel;
  if (onCancel) {
    cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'btn btn-sm btn-outline-secondary';
    cancel.textContent = 'Cancel';
    cancel.setAttribute('aria-label', `Cancel upload of ${name}`);
    cancel.addEventListener('click', onCancel);
    label.append(cancel);
  }
  const bar = document.createElement('div');
  bar.className = 'progress mt-1';
  bar.setAttribute('role', 'progressbar');
  bar.setAttribute('aria-label', `Upload of ${name}`);
  bar.setAttribute('aria-valuemin', '0');
  bar.setAttribute('aria-valuemax', '100');
  const fill = document.createElement('div');
  fill.className = 'progress-bar';
  bar.append(fill);
  const status = document.createElement('div');
  status.className = 'small text-muted upload-status';
  item.append(label, bar, status);
  list.append(item);
  const setWidth = (percent) => {
    fill.style.width = `${percent}%`;
    bar.setAttribute('aria-valuenow', String(percent));
  };
  return {
    progress(sent, total) {
      const percent = total ? Math.floor(sent / total * 100) : 100;
      setWidth(percent);
      status.textContent = `${percent} % (${formatBytes(sent)} of ${formatBytes(total)})`;
    },
    status(text) { status.textContent = text; },
    done(text) { setWidth(100); fill.classList.add('bg-success'); status.textContent = text; cancel?.remove(); },
    /// With `focus`, a refusal: said at once (an alert), scrolled into view and focused, so nobody misses it.
    fail(text, { focus = false } = {}) {
      fill.classList.add('bg-danger');
      status.textContent = text;
      status.classList.replace('text-muted', 'text-danger');
      cancel?.remove();
      if (focus) {
        status.setAttribute('role', 'alert');
        status.tabIndex = -1;
        status.classList.add('upload-refusal');
        status.scrollIntoView({ block: 'center' });
        status.focus({ preventScroll: true });
      }
    },
  };
}

/// Pending assets refresh by themselves until the scanner has spoken and their phone-sized copy is made; meanwhile the
/// copy's progress bar follows the conversion.
function watchPending() {
  const pending = [...document.querySelectorAll('[data-asset][data-pending="true"]'),
                   ...document.querySelectorAll('[data-asset]:has([data-optimizing="true"])')];
  if (!pending.length) return;
  const timer = setInterval(async () => {
    for (const item of pending) {
      const response = await fetch(`/api/v1/manage/assets/${item.dataset.asset}`, { credentials: 'same-origin' }).catch(() => null);
      const asset = response?.ok ? await response.json() : null;
      if (!asset) continue;
      const progress = item.querySelector('.optimized-progress');
      if (progress && asset.optimized?.state === 'pending') {
        const percent = Math.floor(asset.optimized.progress * 100);
        progress.value = percent;
        progress.textContent = `${percent} %`;
      }
      const scanning = item.dataset.pending === 'true';
      if ((scanning && asset.scanStatus !== 'pending') || (!scanning && asset.optimized?.state !== 'pending')) {
        clearInterval(timer);
        if (active.size === 0) location.reload();
        return;
      }
    }
  }, 3000);
}

function fatal(message) {
  const error = new Error(message);
  error.fatal = true;
  return error;
}

async function errorMessage(response) {
  try { return (await response.json()).error.message; } catch (_) { return `The server answered ${response.status}.`; }
}

function base64(text) {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

function formatBytes(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
