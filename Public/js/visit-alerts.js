// Alerts and closures from the signed catalog: which apply to this tour now, and which stops they close. No DOM
// here: Node imports this module as it is (Tests/js), so the rules are tested without a browser. The catalog given
// here has had its signature checked already (visit-trust.js).

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
