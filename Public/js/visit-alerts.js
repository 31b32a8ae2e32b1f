// Alerts and closures from the signed catalog: which apply to this tour now, which stops they close, and the words the
// visitor reads about them. No DOM here: Node imports this module as it is (Tests/js), so the rules and the wording are
// tested without a browser; visit-alerts-view.js puts the words on the page. The catalog given here has had its
// signature checked already (visit-trust.js).

const SEVERITY_ORDER = { closure: 0, warning: 1, info: 2 };

/** Milliseconds since 1970 of an RFC 3339 time with a zone (as the server writes it), or NaN. */
export function parseTime(text) {
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return NaN;
  return Date.parse(text);
}

/** Whether `alert` holds at `now` (milliseconds): started and not past its end. An alert past its end is ignored even
 * when the catalog that lists it is an older one kept for offline use; one whose times cannot be read is ignored. */
export function inEffect(alert, now = Date.now()) {
  const starts = parseTime(alert?.startsAt);
  const ends = parseTime(alert?.endsAt);
  return starts <= now && now < ends;
}

/** A severity this player does not know (one added later) is shown as a warning. */
export function severityOf(alert) {
  return Object.hasOwn(SEVERITY_ORDER, alert?.severity) ? alert.severity : 'warning';
}

/** The alerts of `catalog` that apply to the package `packageId` at `now`: its own, and those about every tour of
 * its site (the site is the catalog entry's). Closures first, then warnings, then information; soonest start first. */
export function alertsFor(catalog, packageId, now = Date.now()) {
  const site = (catalog?.packages || []).find((entry) => entry.id === packageId)?.site;
  return (Array.isArray(catalog?.alerts) ? catalog.alerts : [])
    .filter((alert) => alert && typeof alert === 'object' && inEffect(alert, now))
    .filter((alert) => alert.packageId === packageId || (alert.packageId == null && site != null && alert.site === site))
    .sort((a, b) => SEVERITY_ORDER[severityOf(a)] - SEVERITY_ORDER[severityOf(b)] || parseTime(a.startsAt) - parseTime(b.startsAt));
}

/** The first of `alerts` that closes the waypoint with id `waypointId` (the manifest's waypoint `id`), or null. A
 * waypoint without an id (a package made before alerts) is never closed. */
export function closureOf(alerts, waypointId) {
  if (waypointId == null) return null;
  return alerts.find((alert) => Array.isArray(alert.closedWaypoints) && alert.closedWaypoints.includes(waypointId)) || null;
}

// MARK: What the visitor reads

const SEVERITY_LABEL = { closure: 'Closure', warning: 'Warning', info: 'Information' };

/** A time as the visitor's phone writes dates, in its own language and zone ("27 Nov 2026, 13:00"). */
export function formatTime(ms, locale = undefined, style = 'medium') {
  return new Date(ms).toLocaleString(locale, { dateStyle: style, timeStyle: 'short' });
}

/** One alert in the visitor's words, `{severity, heading, message, when}`: the severity (as `severityOf`) for the
 * page's styling, the heading ("Closure: <title>"), the ranger's message, and until when it holds and as of which
 * check (`checkedAt`, when this phone last read the catalog). Plain strings, always set as text: the title and the
 * message are the ranger's plain text, never markup. `format` writes a time (milliseconds). */
export function alertText(alert, checkedAt, format = formatTime) {
  const severity = severityOf(alert);
  return {
    severity,
    heading: `${SEVERITY_LABEL[severity]}: ${alert.title}`,
    message: alert.message,
    when: `Until ${format(Date.parse(alert.endsAt))}. As of ${format(Date.parse(checkedAt))}, when this phone last checked with the park.`,
  };
}

/** The note under a closed stop's heading; the stop's panel then shows the closure's message alone, not the title
 * again. */
export function closedStopNote(closure) {
  return `Closed: ${closure.title}`;
}

/** The notice of a catalog past its expiry (`expiry`, milliseconds, or NaN when it has none), which was not used:
 * `saved` says whether a saved copy plays on. `format` writes the expiry. */
export function staleCatalogText(expiry, saved, format = (ms) => formatTime(ms, undefined, 'long')) {
  const when = Number.isNaN(expiry) ? 'has no expiry date' : `ran out on ${format(expiry)}`;
  return `The list of tours this phone received from the park's server is out of date (it ${when}), so it may be an old copy. `
    + (saved
      ? 'It was not used to look for updates. Your saved tour still works.'
      : 'The tour was not saved from it.')
    + ' If this keeps happening, check that the phone\'s date and time are right, then reload the page where there is signal.';
}
