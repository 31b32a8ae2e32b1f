// The trail facts in the visitor player: the totals in words, the elevation profile as an SVG, the same numbers as a
// table, the grade bands and the accessibility notes, all drawn from the verified manifest's `trail`, so they show
// offline too. While the player follows the visitor, a dot marks where on the profile they are.
// Hooks for tests: [data-trail-facts], svg[data-elevation-profile], table[data-elevation-table], [data-profile-position].

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 200;
const PAD = { left: 48, right: 12, top: 12, bottom: 32 };
const GRADES = [
  ['flat', 'Flat', 'up to 1 %'], ['gentle', 'Gentle', 'over 1 % to 5 %'], ['moderate', 'Moderate', 'over 5 % to 8.33 % (1:12)'],
  ['steep', 'Steep', 'over 8.33 % to 12 %'], ['verySteep', 'Very steep', 'over 12 %'],
];
const SURFACES = {
  paved: 'paved', boardwalk: 'boardwalk', compacted: 'compacted gravel or earth', natural: 'natural ground', mixed: 'mixed surfaces',
};

/** "2.4 km, 120 m up and 118 m down, between 140 and 260 m above sea level. About 55 min on foot with the stops." */
export function factsSummary(trail) {
  let sentence = `${(trail.lengthMeters / 1000).toFixed(1)} km`;
  if (trail.ascentMeters != null && trail.descentMeters != null) {
    sentence += `, ${Math.round(trail.ascentMeters)} m up and ${Math.round(trail.descentMeters)} m down`;
  }
  if (trail.minElevationMeters != null && trail.maxElevationMeters != null) {
    sentence += `, between ${Math.round(trail.minElevationMeters)} and ${Math.round(trail.maxElevationMeters)} m above sea level`;
  }
  const minutes = trail.walkingMinutes;
  const time = minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
  return `${sentence}. About ${time} on foot with the stops.`;
}

/** The height at `distance` on the profile, by linear interpolation. */
export function heightAt(profile, distance) {
  if (distance <= profile[0][0]) return profile[0][1];
  for (let i = 1; i < profile.length; i++) {
    const [d1, h1] = profile[i];
    if (d1 >= distance) {
      const [d0, h0] = profile[i - 1];
      return d1 > d0 ? h0 + (h1 - h0) * (distance - d0) / (d1 - d0) : h0;
    }
  }
  return profile[profile.length - 1][1];
}

/** Each stop's distance from the start: the sum of the manifest's distances from the stop before. */
export function stopDistances(waypoints) {
  let along = 0;
  return [...waypoints].sort((a, b) => a.order - b.order).map((waypoint) => {
    along += waypoint.distanceFromPreviousMeters || 0;
    return { order: waypoint.order, name: waypoint.name, distance: along, elevation: waypoint.elevationMeters };
  });
}

const RADIUS = 6371008.8;
function metres(a, b) {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Where along the line (the route, else the stops in order) the point nearest to `here` is, in metres. */
export function distanceAlong(manifest, here) {
  // The manifest's route holds GeoJSON positions, [longitude, latitude(, elevation)]; a stop holds its coordinates.
  const line = manifest.route?.length >= 2
    ? manifest.route.map(([longitude, latitude]) => ({ latitude, longitude }))
    : [...manifest.waypoints].sort((a, b) => a.order - b.order).map((w) => ({ latitude: w.coordinates.latitude, longitude: w.coordinates.longitude }));
  let along = 0;
  let best = { distance: Infinity, along: 0 };
  line.forEach((point, index) => {
    if (index > 0) along += metres(line[index - 1], point);
    const distance = metres(point, here);
    if (distance < best.distance) best = { distance, along };
  });
  return best;
}

/** A table with a caption, column headings and rows of text; `hook` names its data attribute (data-elevation-table…). */
function table(hook, caption, headings, rows) {
  const node = document.createElement('table');
  node.dataset[hook] = '';
  const title = node.createCaption();
  title.textContent = caption;
  const head = node.createTHead().insertRow();
  for (const heading of headings) {
    const cell = document.createElement('th');
    cell.scope = 'col';
    cell.textContent = heading;
    head.append(cell);
  }
  const body = node.createTBody();
  for (const row of rows) {
    const line = body.insertRow();
    for (const value of row) line.insertCell().textContent = value;
  }
  return node;
}

function element(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text != null) node.textContent = text;
  return node;
}

export class TrailProfile {
  constructor(holder) {
    this.holder = holder;
    this.scale = null;
    this.marker = null;
  }

  /** Draws the facts of `manifest` (nothing, and the holder hidden, when it has none). */
  render(manifest, nameOf = (waypoint) => waypoint.name) {
    const trail = manifest.trail;
    this.manifest = manifest;
    this.holder.replaceChildren();
    this.marker = null;
    this.scale = null;
    this.holder.hidden = !trail;
    // Named by its heading only once the heading exists: a label pointing at nothing is an error for screen readers.
    this.holder.removeAttribute('aria-labelledby');
    if (!trail) return;
    const heading = document.createElement('h2');
    heading.id = 'facts-heading';
    heading.textContent = 'Trail facts';
    const facts = document.createElement('div');
    facts.dataset.trailFacts = '';
    const summary = document.createElement('p');
    summary.textContent = factsSummary(trail);
    facts.append(summary);
    if (trail.maxGradePercent != null) {
      const steepest = document.createElement('p');
      steepest.textContent = `The steepest 25 m climb or descend at ${trail.maxGradePercent.toFixed(1)} %.`;
      facts.append(steepest);
    }
    if (!trail.elevationSource) {
      const none = document.createElement('p');
      none.className = 'visit-note';
      none.textContent = 'Heights are not known for this tour.';
      facts.append(none);
    }
    this.holder.append(heading, facts);
    this.holder.setAttribute('aria-labelledby', heading.id);
    const stops = stopDistances(manifest.waypoints).map((stop) => ({ ...stop, name: nameOf(manifest.waypoints.find((w) => w.order === stop.order)) }));
    if (trail.profile?.length >= 2) {
      this.holder.append(this.svg(trail, stops), this.table(trail, stops), this.grades(trail));
    }
    const access = this.accessibility(trail.accessibility);
    if (access) this.holder.append(access);
  }

  svg(trail, stops) {
    const profile = trail.profile;
    const length = Math.max(profile[profile.length - 1][0], 1);
    let low = Math.min(...profile.map((p) => p[1]));
    let high = Math.max(...profile.map((p) => p[1]));
    if (high - low < 20) { const middle = (high + low) / 2; low = middle - 10; high = middle + 10; }
    const x = (d) => PAD.left + d / length * (WIDTH - PAD.left - PAD.right);
    const y = (h) => PAD.top + (high - h) / (high - low) * (HEIGHT - PAD.top - PAD.bottom);
    this.scale = { x, y, length, profile };
    const base = HEIGHT - PAD.bottom;
    const points = profile.map(([d, h]) => `${x(d).toFixed(1)},${y(h).toFixed(1)}`).join(' ');
    const svg = element('svg', {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-labelledby': 'visit-profile-title', class: 'elevation-profile',
      'data-elevation-profile': '',
    });
    svg.append(
      element('title', { id: 'visit-profile-title' }, `Elevation profile: ${factsSummary(trail)}`),
      element('polygon', { class: 'profile-area', points: `${x(0)},${base} ${points} ${x(length)},${base}` }),
      element('polyline', { class: 'profile-line', points }),
      element('line', { class: 'profile-axis', x1: PAD.left, y1: base, x2: WIDTH - PAD.right, y2: base }),
      element('line', { class: 'profile-axis', x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: base }),
      element('text', { class: 'profile-label', x: PAD.left - 4, y: y(high) + 4, 'text-anchor': 'end' }, `${Math.round(high)} m`),
      element('text', { class: 'profile-label', x: PAD.left - 4, y: y(low), 'text-anchor': 'end' }, `${Math.round(low)} m`),
      element('text', { class: 'profile-label', x: PAD.left, y: HEIGHT - 10 }, '0 km'),
      element('text', { class: 'profile-label', x: WIDTH - PAD.right, y: HEIGHT - 10, 'text-anchor': 'end' }, `${(length / 1000).toFixed(1)} km`),
    );
    for (const stop of stops) {
      const group = element('g', { class: 'profile-stop' });
      const sx = x(Math.min(stop.distance, length));
      group.append(element('line', { x1: sx, y1: PAD.top, x2: sx, y2: base }), element('text', { x: sx, y: HEIGHT - 20, 'text-anchor': 'middle' }, stop.order));
      svg.append(group);
    }
    this.svgElement = svg;
    return svg;
  }

  table(trail, stops) {
    const profile = trail.profile;
    const length = profile[profile.length - 1][0];
    const rows = [];
    for (let tenth = 0; tenth <= 10; tenth++) {
      const distance = length * tenth / 10;
      rows.push({ place: tenth === 0 ? 'Start' : tenth === 10 ? 'End' : '', distance, height: heightAt(profile, distance) });
    }
    for (const stop of stops) {
      rows.push({ place: `Stop ${stop.order}: ${stop.name}`, distance: stop.distance, height: stop.elevation ?? heightAt(profile, stop.distance) });
    }
    rows.sort((a, b) => a.distance - b.distance);
    return table('elevationTable', 'The profile in numbers', ['Place', 'Distance', 'Height'],
      rows.map((row) => [row.place, `${(row.distance / 1000).toFixed(2)} km`, `${Math.round(row.height)} m`]));
  }

  grades(trail) {
    return table('gradeTable', 'How steep: share of the length', ['Grade', 'Slope', 'Share'],
      GRADES.map(([key, label, range]) => [label, range, `${Math.round((trail.grades?.[key] || 0) * 100)} %`]));
  }

  accessibility(access) {
    if (!access) return null;
    const lines = [];
    if (access.surface) lines.push(`Surface: ${SURFACES[access.surface] || access.surface}.`);
    if (access.minWidthCm != null) lines.push(`Narrowest width: ${access.minWidthCm} cm.`);
    if (access.stepFree != null) lines.push(access.stepFree ? 'Step-free: no steps anywhere.' : 'Not step-free: there are steps.');
    if (access.notes) lines.push(access.notes);
    if (!lines.length) return null;
    const holder = document.createElement('div');
    holder.dataset.accessibility = '';
    const heading = document.createElement('h3');
    heading.textContent = 'Accessibility';
    const list = document.createElement('ul');
    for (const line of lines) {
      const item = document.createElement('li');
      item.textContent = line;
      list.append(item);
    }
    holder.append(heading, list);
    return holder;
  }

  /** Marks where on the profile the visitor is: the point of the line nearest to them, if they are within 200 m. */
  markPosition(here) {
    if (!this.scale || !this.svgElement || !this.manifest) return;
    const { along, distance } = distanceAlong(this.manifest, here);
    if (distance > 200) { this.marker?.remove(); this.marker = null; return; }
    const { x, y, length, profile } = this.scale;
    const d = Math.min(along, length);
    if (!this.marker) {
      this.marker = element('circle', { class: 'profile-position', r: 6, 'data-profile-position': '' });
      this.marker.append(element('title', {}, 'You are here'));
      this.svgElement.append(this.marker);
    }
    this.marker.setAttribute('cx', x(d).toFixed(1));
    this.marker.setAttribute('cy', y(heightAt(profile, d)).toFixed(1));
    this.marker.dataset.distance = String(Math.round(d));
  }
}
