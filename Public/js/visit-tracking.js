// Following the visitor on the trail: the Start button, the screen kept awake, the position watched, and the stop
// whose trigger zone the visitor walks into opened and played once. Which stop the visitor is at, and the words for
// it, are plain functions here (no DOM), so Node imports this module as it is (Tests/js) and tests them.
import { distanceMeters, DEFAULT_RADIUS } from './visit-map.js';

// MARK: Where the visitor is (no DOM)

/** The stops whose trigger zone holds `here` ({latitude, longitude}): `inside`, the nearest open one, and
 * `closedHere`, the nearest one an alert closes (`closureOf(waypoint)`, the closure or null), each as
 * `{waypoint, distance}` (with `closure` for the closed one), or null. A closed stop does not open or play when the
 * visitor walks into its zone. */
export function stopsAround(here, waypoints, closureOf) {
  let inside = null;
  let closedHere = null;
  for (const waypoint of waypoints || []) {
    const distance = distanceMeters(here, waypoint.coordinates);
    if (distance > (waypoint.triggerRadiusMeters || DEFAULT_RADIUS)) continue;
    const closure = closureOf(waypoint);
    if (closure) {
      if (!closedHere || distance < closedHere.distance) closedHere = { waypoint, distance, closure };
    } else if (!inside || distance < inside.distance) {
      inside = { waypoint, distance };
    }
  }
  return { inside, closedHere };
}

/** Where the visitor stands, in words: at the open stop `inside`, else in the zone of the closed stop `closedHere`,
 * else near none (as `stopsAround` answers). `nameOf(waypoint)` is the stop's name in the chosen language. */
export function positionText({ inside, closedHere }, nameOf) {
  if (inside) return `You are at stop ${inside.waypoint.order}, ${nameOf(inside.waypoint)}.`;
  if (closedHere) return `Stop ${closedHere.waypoint.order}, ${nameOf(closedHere.waypoint)}, is closed: ${closedHere.closure.title}.`;
  return 'Location is on: stops open as you reach them.';
}

// MARK: Following the position

export class Tracking {
  /** `button` is the Start button (the page calls `toggle` when it is pressed) and `status` the line that says where the visitor is. `waypoints()` answers the
   * stops on screen; `played` holds the orders of the stops already played on this visit; `openStop(order, play)`
   * opens one; `onPosition(here, accuracy)` shows the position (on the map and the profile). */
  constructor(button, status, { waypoints, closureOf, nameOf, played, openStop, onPosition }) {
    Object.assign(this, { button, status, waypoints, closureOf, nameOf, played, openStop, onPosition });
    this.wakeLock = null;
    this.watchId = null;
    document.addEventListener('visibilitychange', async () => {
      // The browser lets the screen's wake lock go when the page is hidden: asked again when it is back.
      if (this.wakeLock && document.visibilityState === 'visible' && 'wakeLock' in navigator) {
        try { this.wakeLock = await navigator.wakeLock.request('screen'); } catch { /* not granted again */ }
      }
    });
  }

  // The Start button is also the way to stop: while the player follows the visitor's position it says so on the
  // button (`data-tracking="on"`) and a second press stops following, lets the screen sleep again, and leaves the
  // stops to taps.
  show(on) {
    this.button.dataset.tracking = on ? 'on' : 'off';
    this.button.textContent = on ? 'Stop following my position' : 'Start the tour';
  }

  async toggle() {
    if (this.watchId !== null) this.stop(); else await this.start();
  }

  stop() {
    if (this.watchId !== null) navigator.geolocation.clearWatch(this.watchId);
    this.watchId = null;
    this.wakeLock?.release().catch(() => {});
    this.wakeLock = null;
    this.show(false);
    this.status.textContent = 'Location is off: tap a stop to hear it, or start again.';
  }

  async start() {
    if ('wakeLock' in navigator) {
      try { this.wakeLock = await navigator.wakeLock.request('screen'); } catch { this.wakeLock = null; }
    }
    if (!navigator.geolocation) {
      this.status.textContent = 'This browser cannot tell where you are. Tap a stop to hear it.';
      return;
    }
    this.status.textContent = 'Finding where you are…';
    this.show(true);
    this.watchId = navigator.geolocation.watchPosition((position) => this.moved(position), (error) => {
      this.status.textContent = error.code === error.PERMISSION_DENIED
        ? 'Location is turned off for this page, so stops do not open by themselves. Tap a stop to hear it.'
        : 'Your position is not known right now. Tap a stop to hear it.';
      if (error.code === error.PERMISSION_DENIED) {
        // Nothing to follow: the button offers to start again (after the visitor allowed location).
        navigator.geolocation.clearWatch(this.watchId);
        this.watchId = null;
        this.show(false);
      }
    }, { enableHighAccuracy: true, maximumAge: 5000 });
  }

  moved(position) {
    const here = { latitude: position.coords.latitude, longitude: position.coords.longitude };
    this.onPosition(here, position.coords.accuracy);
    const around = stopsAround(here, this.waypoints(), this.closureOf);
    const { inside } = around;
    this.status.textContent = positionText(around, this.nameOf);
    for (const item of document.querySelectorAll('[data-stop]')) {
      if (inside && item.dataset.stopOrder === String(inside.waypoint.order)) item.dataset.active = ''; else delete item.dataset.active;
    }
    if (inside && !this.played.has(inside.waypoint.order)) {
      this.played.add(inside.waypoint.order);
      this.openStop(inside.waypoint.order, true);
    }
  }
}
