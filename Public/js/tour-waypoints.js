// The tour page's waypoints outside the panel: the small form at a clicked place, the new row in the list, the list's
// reordering and row editing, the uploads' target, the status region, and the page's duration and publishing card
// re-read after each change.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { confirmButtons, postForm } from './panel.js';
import { numberIcon } from './tour-map-layers.js';

/// Where the tour page's uploads go: a waypoint of this tour, with the server's limit, shown in `list`.
export function uploadTarget(data, waypointId, list) {
  const tour = data.apiTourURL.split('/').pop();
  return { tour, waypoint: String(waypointId), maxBytes: data.maxUploadBytes, maxSize: data.maxUploadSize, list };
}
/// The lower "Add a waypoint" form, emptied after an add on the map (its coordinates were the clicked place's).
export function resetWaypointForm() {
  const form = document.getElementById('waypoint-form');
  if (!form) return;
  for (const field of form.querySelectorAll('input:not([type=hidden]), textarea')) {
    field.value = '';
    field.classList.remove('is-invalid');
  }
  form.querySelectorAll('.invalid-feedback').forEach((feedback) => feedback.remove());
}
/// Re-reads the tour page's duration and publishing card (`GET /tours/{id}/status`, rendered by the same server code
/// as the page) and puts them in place of the stale ones.
let statusRequest = Promise.resolve();
export function refreshStatus() {
  const url = JSON.parse(document.getElementById('tour-map')?.dataset.map || '{}').statusURL;
  if (!url) return statusRequest;
  statusRequest = statusRequest.then(async () => {
    const response = await fetch(url, { credentials: 'same-origin', cache: 'no-store' }).catch(() => null);
    if (!response?.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
    for (const selector of ['[data-duration]', '[data-download-size]', '[data-trail-facts-view]', '[data-publishing]']) {
      const next = fresh.querySelector(selector);
      const current = document.querySelector(selector);
      if (next && current) {
        const adopted = document.importNode(next, true);
        current.replaceWith(adopted);
        confirmButtons(adopted);
      }
    }
    document.dispatchEvent(new CustomEvent('tour-status-refreshed'));
  });
  return statusRequest;
}
/// A small form at the clicked place: a name, a description and files, then "Add" saves the waypoint with no page
/// load and uploads its files (each with its progress below the map). The full form below the list (coordinates
/// filled in too, for a ranger who prefers it or has no script) stays.
export function offerNewWaypoint(map, latlng, data, added) {
  fillCoordinates(latlng);
  // The last form's popup fades out for a moment after it closes: its form goes at once, so the page never holds
  // two forms with the same field ids (a screen reader, a label or a test could reach the old one).
  for (const old of document.querySelectorAll('#tour-map form[data-new-waypoint]')) old.remove();
  const form = document.createElement('form');
  form.setAttribute('data-new-waypoint', '');
  form.className = 'd-flex flex-column gap-1';
  form.innerHTML = `<label class="form-label small mb-0" for="new-waypoint-name">New waypoint here</label>
    <input class="form-control form-control-sm" id="new-waypoint-name" name="name" maxlength="120" required autocomplete="off">
    <label class="form-label small mb-0" for="new-waypoint-description">What visitors read here</label>
    <textarea class="form-control form-control-sm" id="new-waypoint-description" name="description" rows="3"></textarea>
    <label class="form-label small mb-0" for="new-waypoint-files">Files (audio, video, images)</label>
    <input class="form-control form-control-sm" type="file" id="new-waypoint-files" name="file" multiple>
    <div class="small text-danger" data-new-waypoint-error role="alert" hidden></div>
    <button type="submit" class="btn btn-primary btn-sm">Add waypoint</button>`;
  // The form is taller than the map's margin above most places, so Leaflet pans the map to show it; once it closes,
  // the map goes back to where the ranger had it (unless they moved it meanwhile), so the next place is where it was.
  const view = map.getCenter();
  let moved = false;
  const movedByHand = () => { moved = true; };
  map.on('dragstart zoomstart', movedByHand);
  // Panned into view at once, not animated: the form stands still from the moment it shows, so typing (or a
  // screen reader's cursor) never chases a moving field.
  const popup = L.popup({ minWidth: 220, maxWidth: 280, autoPan: false }).setLatLng(latlng).setContent(form);
  popup.on('remove', () => {
    map.off('dragstart zoomstart', movedByHand);
    if (!moved) map.panTo(view, { animate: false });
  });
  popup.openOn(map);
  const box = popup.getElement()?.getBoundingClientRect();
  const frameBox = map.getContainer().getBoundingClientRect();
  if (box) {
    const pad = 12;
    const dx = box.left < frameBox.left + pad ? box.left - frameBox.left - pad
      : box.right > frameBox.right - pad ? box.right - frameBox.right + pad : 0;
    const dy = box.top < frameBox.top + pad ? box.top - frameBox.top - pad : 0;
    if (dx || dy) map.panBy([dx, dy], { animate: false });
  }
  const name = form.querySelector('input[name="name"]');
  name.focus({ preventScroll: true });
  // Enter in the name adds at once; in the description it starts a new line, as in any text box.
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const error = form.querySelector('[data-new-waypoint-error]');
    if (!name.value.trim()) { error.textContent = 'Enter a name.'; error.hidden = false; name.focus(); return; }
    const button = form.querySelector('button');
    button.disabled = true;
    const description = form.querySelector('textarea[name="description"]').value;
    const files = [...form.querySelector('input[type="file"]').files];
    const result = await postForm(data.newWaypointURL, {
      name: name.value.trim(), description, latitude: latlng.lat.toFixed(7), longitude: latlng.lng.toFixed(7),
    });
    button.disabled = false;
    if (!result.ok) { error.textContent = result.message; error.hidden = false; name.focus(); return; }
    map.closePopup(popup);
    mapStatus(`Waypoint “${result.data.name}” added${files.length ? `; uploading ${files.length === 1 ? 'its file' : `its ${files.length} files`}` : ''}.`);
    added(result.data, files);
  });
}
/// The new waypoint's row at the end of the list, with the same links and buttons the page renders.
export function addWaypointRow(waypoint, data, editor) {
  const list = document.getElementById('waypoint-list');
  if (!list) return null;
  document.getElementById('no-waypoints')?.remove();
  const csrf = document.querySelector('#waypoint-form input[name="_csrf"]')?.value ?? '';
  const base = data.newWaypointURL;
  const name = escapeText(waypoint.name);
  const form = (action, label, text, extra = '') => `<form method="post" action="${base}/${waypoint.id}/${action}" class="d-inline">
      <input type="hidden" name="_csrf" value="${escapeText(csrf)}">
      <button type="submit" class="btn btn-sm ${action === 'delete' ? 'btn-outline-danger' : 'btn-outline-secondary'}" ${extra} aria-label="${label}">${text}</button></form>`;
  const previous = list.lastElementChild;
  previous?.querySelector('button[aria-label$=" down"]')?.removeAttribute('disabled');
  const li = document.createElement('li');
  li.className = 'list-group-item d-flex align-items-center gap-2';
  li.id = `waypoint-${waypoint.id}`;
  li.dataset.id = String(waypoint.id);
  li.innerHTML = `<span class="drag-handle text-muted" aria-hidden="true" title="Drag to reorder">⠿</span>
    <div class="me-auto">
      <a href="${base}/${waypoint.id}" class="waypoint-name">${name}</a>
      <div class="small text-muted">${waypoint.latitude.toFixed(6)}, ${waypoint.longitude.toFixed(6)}</div>
      <small class="d-block text-muted"><span class="zone-radius">${Number(waypoint.triggerRadiusMeters)} m trigger zone</span></small>
    </div>
    ${form('up', `Move ${name} up`, '↑', previous ? '' : 'disabled')}
    ${form('down', `Move ${name} down`, '↓', 'disabled')}
    ${form('delete', `Delete ${name}`, '✕', `data-confirm="Delete the waypoint “${name}”?"`)}`;
  list.append(li);
  confirmButtons(li);
  editor?.addButton(li);
  return li;
}
/// Each row of the list opens the panel beside the map: a click on the row (not on its link or buttons), or its
/// "Edit here" button for the keyboard. The name's link still opens the waypoint's own page.
export function setUpRowEditing(editor) {
  const list = document.getElementById('waypoint-list');
  if (!list) return;
  list.querySelectorAll(':scope > li[data-id]').forEach((li) => editor.addButton(li));
  list.addEventListener('click', (event) => {
    if (event.target.closest('a, button, form, input, textarea')) return;
    const li = event.target.closest('li[data-id]');
    if (li) editor.open(li.dataset.id);
  });
}
/// One line in the map's status region (read out by screen readers), with an optional action such as "Undo".
export function mapStatus(text, actionLabel, action) {
  const status = document.getElementById('map-status');
  if (!status) return;
  status.replaceChildren(document.createTextNode(text));
  if (actionLabel) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-link btn-sm p-0 ms-2 align-baseline';
    button.dataset.action = 'undo';
    button.textContent = actionLabel;
    button.addEventListener('click', () => { button.disabled = true; action(); });
    status.append(button);
  }
}
export function fillCoordinates({ lat, lng }) {
  document.getElementById('wp-latitude').value = lat.toFixed(6);
  document.getElementById('wp-longitude').value = lng.toFixed(6);
}
/// Text made safe for HTML, in element content and in quoted attribute values alike.
export function escapeText(text) {
  const span = document.createElement('span');
  span.textContent = text;
  return span.innerHTML.replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}
export function showMessage(message) {
  const alert = document.createElement('div');
  alert.className = 'alert alert-danger';
  alert.setAttribute('role', 'alert');
  alert.textContent = message;
  document.getElementById('tour-map').insertAdjacentElement('beforebegin', alert);
  setTimeout(() => alert.remove(), 8000);
}
export function setUpSortable() {
  const list = document.getElementById('waypoint-list');
  if (!list || list.dataset.sortable !== 'true' || !window.Sortable) return;
  const url = JSON.parse(document.getElementById('tour-map')?.dataset.map || '{}').orderURL;
  window.Sortable.create(list, {
    handle: '.drag-handle',
    animation: 150,
    onEnd: async () => {
      const ids = [...list.children].map((li) => li.dataset.id);
      const result = await postForm(url, { ids });
      if (!result.ok) { showMessage(result.message); return; }
      ids.forEach((id, index) => {
        const marker = document.getElementById('tour-map').markers?.get(id);
        if (marker) marker.setIcon(numberIcon(index + 1));
      });
      list.querySelectorAll('li').forEach((li, index, all) => {
        li.querySelector('button[aria-label^="Move"][aria-label$=" up"]')?.toggleAttribute('disabled', index === 0);
        li.querySelector('button[aria-label^="Move"][aria-label$=" down"]')?.toggleAttribute('disabled', index === all.length - 1);
      });
      refreshStatus();
    },
  });
}
