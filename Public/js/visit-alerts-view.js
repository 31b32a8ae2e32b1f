// The alerts on the player's page: the live box of the alerts that apply now, the closed stops in the list, and the
// notice of a stale catalog. Which alerts apply, and their words, are visit-alerts.js's (no DOM, tested under Node);
// this module only puts those words on the page, always as text.
import { alertText, closedStopNote, closureOf, staleCatalogText } from './visit-alerts.js';
import { catalogExpiry } from './visit-trust.js';

/** The box the alerts are shown in, made the first time, just under the tour's description. */
function alertBox() {
  let box = document.getElementById('visit-alerts');
  if (!box) {
    box = document.createElement('section');
    box.id = 'visit-alerts';
    box.className = 'visit-alerts';
    box.setAttribute('aria-label', 'Alerts for this tour');
    box.setAttribute('aria-live', 'polite');
    document.getElementById('tour-description').after(box);
  }
  return box;
}

/** One alert as the visitor sees it. */
function alertItem(alert, checkedAt) {
  const words = alertText(alert, checkedAt);
  const item = document.createElement('div');
  item.className = 'visit-alert';
  item.dataset.alert = String(alert.id);
  item.dataset.severity = words.severity;
  const title = document.createElement('h2');
  title.className = 'visit-alert-title';
  title.textContent = words.heading;
  const message = document.createElement('p');
  message.className = 'visit-alert-message';
  message.textContent = words.message;
  const when = document.createElement('p');
  when.className = 'visit-alert-when';
  when.dataset.asOf = checkedAt;
  when.textContent = words.when;
  item.append(title, message, when);
  return item;
}

/** Shows `alerts` (those that apply now, from the catalog checked at `checkedAt`) in the alert box; `onShown(alert)`
 * is called for each alert each time the box is written. */
export function showAlerts(alerts, checkedAt, onShown) {
  const box = alertBox();
  box.hidden = alerts.length === 0;
  // Only a change is written: the box is a live region, and the half-minute check must not read it out again.
  const shown = JSON.stringify([checkedAt, alerts.map((alert) => alert.id)]);
  if (box.dataset.shown === shown) return;
  box.dataset.shown = shown;
  box.replaceChildren(...alerts.map((alert) => alertItem(alert, checkedAt)));
  for (const alert of alerts) onShown(alert);
}

/** Marks each stop of the list that one of `alerts` closes (`data-closed`, a note under its heading), hides what an
 * open closed stop showed and stops its media; a stop whose closure ended opens again. `waypoints` are the manifest's
 * on screen. */
export function markClosedStops(alerts, waypoints) {
  for (const item of document.querySelectorAll('[data-stop]')) {
    const waypoint = waypoints?.find((w) => String(w.order) === item.dataset.stopOrder);
    const closure = closureOf(alerts, waypoint?.id);
    item.querySelector('.visit-stop-closed')?.remove();
    if (closure) {
      item.dataset.closed = 'true';
      delete item.dataset.active;
      const note = document.createElement('p');
      note.className = 'visit-stop-closed';
      note.textContent = closedStopNote(closure);
      item.querySelector('h3').after(note);
      const body = item.querySelector('.visit-stop-body');
      if (!body.hidden && body.dataset.filledFor !== 'closed') body.hidden = true;
      body.querySelectorAll('audio, video').forEach((media) => media.pause());
    } else {
      delete item.dataset.closed;
    }
  }
}

/** Says, in a visitor's words, that the catalog is past its expiry date and was not used (`saved`: a saved copy plays
 * on), after `anchor`. The notice is made only then, so `[data-notice="stale-catalog"]` exists exactly when the
 * player met a stale catalog. */
export function showStaleCatalog(anchor, catalog, saved) {
  const notice = document.createElement('p');
  notice.className = 'visit-note';
  notice.dataset.notice = 'stale-catalog';
  notice.setAttribute('role', 'status');
  notice.textContent = staleCatalogText(catalogExpiry(catalog), saved);
  document.querySelector('[data-notice="stale-catalog"]')?.remove();
  anchor.after(notice);
}
