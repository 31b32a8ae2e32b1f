// The tour page's panel beside the map: a stop's texts and its files' texts, saved through the management API with no
// page load.
import { sendJSON } from './panel.js';
import { escapeText, mapStatus, refreshStatus, showMessage, uploadTarget } from './tour-waypoints.js';
import { uploadFiles } from './uploader.js';

/// The panel beside the map (`form[data-edit-waypoint]`): a stop's name and description, its files with their
/// title, alt text, captions and transcript, more files, and "Next stop". It reads the tour from the management API
/// and saves through its waypoint and asset routes, with no page load; the waypoint's own page stays for the rest
/// (translations, the trigger radius, the files' order).
export function waypointEditor(data, markers) {
  const box = document.getElementById('waypoint-editor');
  if (!box) return null;
  let current = null;
  let tour = null;

  async function load() {
    const result = await sendJSON('GET', data.apiTourURL);
    if (!result.ok) { showMessage(result.message); return null; }
    tour = result.data;
    return tour;
  }

  function orderedIds() {
    return [...document.querySelectorAll('#waypoint-list > li[data-id]')].map((li) => li.dataset.id);
  }

  async function open(id, { focus = true } = {}) {
    if (!(await load())) return;
    const waypoint = tour.waypoints.find((w) => String(w.id) === String(id));
    if (!waypoint) return;
    current = waypoint;
    render(waypoint);
    box.hidden = false;
    if (focus) {
      box.scrollIntoView({ block: 'nearest' });
      box.querySelector('input[name="name"]').focus({ preventScroll: true });
    }
  }

  function render(waypoint) {
    const ids = orderedIds();
    const index = ids.indexOf(String(waypoint.id));
    const nextId = index >= 0 && index < ids.length - 1 ? ids[index + 1] : null;
    const files = (waypoint.assets || []).filter((asset) => asset.companionOf == null);
    box.innerHTML = `<div class="card-body">
      <div class="d-flex align-items-start gap-2 mb-2">
        <h2 class="h5 mb-0 me-auto" id="waypoint-editor-title">Stop ${Number(index + 1)}: <span data-editor-name>${escapeText(waypoint.name)}</span></h2>
        <button type="button" class="btn-close" data-action="close-editor" aria-label="Close the stop's panel"></button>
      </div>
      <form data-edit-waypoint novalidate>
        <div class="mb-2">
          <label class="form-label" for="edit-waypoint-name">Name</label>
          <input class="form-control" id="edit-waypoint-name" name="name" maxlength="120" required value="${escapeText(waypoint.name)}">
        </div>
        <div class="mb-2">
          <label class="form-label" for="edit-waypoint-description">Description</label>
          <textarea class="form-control" id="edit-waypoint-description" name="description" rows="5">${escapeText(waypoint.description)}</textarea>
        </div>
        <h3 class="h6 mt-3">Files</h3>
        ${files.length ? files.map(fileFields).join('') : '<p class="small text-muted" data-no-files>No files yet.</p>'}
        <div class="mb-2">
          <label class="form-label small mb-0" for="edit-waypoint-files">Add files (audio, video, images; up to ${escapeText(data.maxUploadSize || '')} each)</label>
          <input class="form-control form-control-sm" type="file" id="edit-waypoint-files" name="file" multiple>
        </div>
        <div class="small mb-2" data-editor-status role="status" aria-live="polite"></div>
        <div class="d-flex flex-wrap gap-2">
          <button type="submit" class="btn btn-primary btn-sm">Save stop</button>
          <button type="button" class="btn btn-outline-primary btn-sm" data-action="next-waypoint" ${nextId ? '' : 'disabled'}>${nextId ? 'Save and open the next stop' : 'This is the last stop'}</button>
          <a class="btn btn-link btn-sm" href="${escapeText(data.newWaypointURL)}/${Number(waypoint.id)}">Its page: languages, trigger zone, file order</a>
        </div>
      </form>
      <ul class="list-unstyled mt-2 mb-0" data-editor-uploads aria-label="Uploads of this stop's files"></ul>
    </div>`;
    const form = box.querySelector('form[data-edit-waypoint]');
    box.querySelector('[data-action="close-editor"]').addEventListener('click', close);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      await save(form);
    });
    box.querySelector('[data-action="next-waypoint"]').addEventListener('click', async () => {
      if (nextId && await save(form)) await open(nextId);
    });
  }

  /// One file's texts: its title; an image's alt text; a video's captions (WebVTT); an audio or video file's transcript.
  function fileFields(asset) {
    const id = Number(asset.id);
    const name = escapeText(asset.originalName);
    const takesTranscript = asset.kind === 'audio' || asset.kind === 'video';
    const companion = (file) => file ? `${escapeText(file.originalName ?? 'a file')} (${escapeText(file.scanStatus ?? '')})` : 'none yet';
    return `<fieldset class="border rounded p-2 mb-2" data-asset-id="${id}">
      <legend class="fs-6 mb-1 text-break">${name} <span class="badge bg-light text-dark border">${escapeText(asset.kind)}</span>
        <span class="badge text-bg-${asset.scanStatus === 'clean' ? 'success' : asset.scanStatus === 'pending' ? 'secondary' : 'danger'}" data-scan-status>${escapeText(asset.scanStatus)}</span></legend>
      <label class="form-label small mb-0" for="edit-title-${id}">Title shown in the app</label>
      <input class="form-control form-control-sm mb-1" id="edit-title-${id}" name="title" maxlength="200" value="${escapeText(asset.title ?? '')}" data-saved="${escapeText(asset.title ?? '')}">
      ${asset.kind === 'image' ? `<label class="form-label small mb-0" for="edit-alt-${id}">Alt text (what the image shows)</label>
      <textarea class="form-control form-control-sm mb-1" id="edit-alt-${id}" name="altText" rows="2" maxlength="1000" data-saved="${escapeText(asset.altText ?? '')}">${escapeText(asset.altText ?? '')}</textarea>` : ''}
      ${asset.kind === 'video' ? `<label class="form-label small mb-0" for="edit-captions-${id}">Captions (WebVTT, .vtt): ${companion(asset.captions)}</label>
      <input class="form-control form-control-sm mb-1" type="file" id="edit-captions-${id}" name="captions" accept=".vtt,text/vtt">` : ''}
      ${takesTranscript ? `<label class="form-label small mb-0" for="edit-transcript-${id}">Transcript: ${companion(asset.transcript)}. Type or paste ${asset.transcript ? 'a new one' : 'it'}</label>
      <textarea class="form-control form-control-sm mb-1" id="edit-transcript-${id}" name="transcript" rows="2"></textarea>` : ''}
    </fieldset>`;
  }

  /// Saves what changed: the waypoint, then each file's texts, then starts the new files' uploads. True when all saved.
  async function save(form) {
    const status = form.querySelector('[data-editor-status]');
    const say = (text, failed = false) => {
      status.textContent = text;
      status.classList.toggle('text-danger', failed);
      if (failed) { status.tabIndex = -1; status.focus(); }
    };
    const name = form.elements.name.value.trim();
    if (!name) { say('Enter a name.', true); form.elements.name.focus(); return false; }
    const waypointURL = `${data.apiTourURL}/waypoints/${current.id}`;
    const saved = await sendJSON('PATCH', waypointURL, { name, description: form.elements.description.value });
    if (!saved.ok) { say(saved.message, true); return false; }
    for (const fieldset of form.querySelectorAll('fieldset[data-asset-id]')) {
      const assetURL = `/api/v1/manage/assets/${fieldset.dataset.assetId}`;
      const patch = {};
      for (const field of fieldset.querySelectorAll('[name="title"], [name="altText"]')) {
        if (field.value !== field.dataset.saved) patch[field.name] = field.value;
      }
      if (Object.keys(patch).length) {
        const result = await sendJSON('PATCH', assetURL, patch);
        if (!result.ok) { say(result.message, true); return false; }
        for (const field of fieldset.querySelectorAll('[data-saved]')) field.dataset.saved = field.value;
      }
      const transcript = fieldset.querySelector('[name="transcript"]');
      if (transcript?.value.trim()) {
        const result = await sendJSON('POST', `${assetURL}/transcript`, { text: transcript.value });
        if (!result.ok) { say(result.message, true); return false; }
        transcript.value = '';
      }
      const captions = fieldset.querySelector('[name="captions"]');
      if (captions?.files.length) {
        const body = new FormData();
        body.append('file', captions.files[0]);
        const result = await sendJSON('POST', `${assetURL}/captions`, body);
        if (!result.ok) { say(result.message, true); return false; }
        captions.value = '';
      }
    }
    current = { ...current, ...saved.data };
    renamed(saved.data);
    const files = [...form.querySelector('input[name="file"]').files];
    form.querySelector('input[name="file"]').value = '';
    if (files.length) {
      const waypointId = current.id;
      uploadFiles(files, uploadTarget(data, waypointId, box.querySelector('[data-editor-uploads]')), () => {
        refreshStatus();
        refreshFiles(waypointId);
      });
    }
    say(`“${saved.data.name}” saved.`);
    mapStatus(`“${saved.data.name}” saved.`);
    refreshStatus();
    return true;
  }

  /// The new name on the marker, its row and the panel's heading.
  function renamed(waypoint) {
    const marker = markers.get(String(waypoint.id));
    if (marker) {
      marker.waypoint.name = waypoint.name;
      marker.setTooltipContent(escapeText(waypoint.name));
      marker.getElement()?.setAttribute('title', waypoint.name);
      marker.getElement()?.setAttribute('alt', waypoint.name);
    }
    const link = document.querySelector(`#waypoint-${waypoint.id} a.waypoint-name`);
    if (link) link.textContent = waypoint.name;
    const heading = box.querySelector('[data-editor-name]');
    if (heading) heading.textContent = waypoint.name;
  }

  /// After an upload ends: the open panel lists the stop's files again, with what was typed and the focus kept.
  async function refreshFiles(waypointId) {
    if (box.hidden || !current || String(current.id) !== String(waypointId)) return;
    const typed = new Map([...box.querySelectorAll('input[id]:not([type=file]), textarea[id]')].map((field) => [field.id, field.value]));
    const focused = box.contains(document.activeElement) ? document.activeElement.id : null;
    const uploads = [...box.querySelector('[data-editor-uploads]').children];
    await open(waypointId, { focus: false });
    for (const [id, value] of typed) {
      const field = document.getElementById(id);
      if (field && box.contains(field)) field.value = value;
    }
    if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
    box.querySelector('[data-editor-uploads]').append(...uploads);
  }

  function close() {
    const id = current?.id;
    box.hidden = true;
    box.replaceChildren();
    current = null;
    document.querySelector(`#waypoint-${id} [data-action="edit-waypoint"]`)?.focus();
  }

  function addButton(li) {
    if (li.querySelector('[data-action="edit-waypoint"]')) return;
    const name = li.querySelector('.waypoint-name')?.textContent ?? '';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-sm btn-outline-primary';
    button.dataset.action = 'edit-waypoint';
    button.textContent = 'Edit here';
    button.setAttribute('aria-label', `Edit ${name} beside the map`);
    button.addEventListener('click', () => open(li.dataset.id));
    li.querySelector(':scope > .me-auto')?.insertAdjacentElement('afterend', button);
  }

  return { open, refreshFiles, addButton };
}
