// The player's offline states and the moves between them, as data. The page shows the state in
// #player[data-offline-state] (docs/visitors.md lists the values for tests and scripts), so every value the page can
// take is listed here once, and a move nobody planned for is refused instead of leaving the page in a state no one
// documented. No DOM here: Node imports this module as it is (Tests/js).

/** Every state, in the order a visitor usually meets them. */
export const STATES = Object.freeze(['checking', 'online-only', 'saving', 'ready', 'update-available', 'failed']);

/** The page arrives in this state (Templates/visit.mustache writes it before any script ran). */
export const START = 'checking';

/** state → event → next state. An event missing from a state's row is not a move the player makes from there. */
export const TRANSITIONS = Object.freeze({
  checking: Object.freeze({
    unsupported: 'failed',        // the browser cannot check an Ed25519 signature
    'held-found': 'checking',     // the saved manifest's signature held; its files are being hashed
    'held-refused': 'failed',     // the saved manifest could not be checked
    'held-checked': 'ready',      // every saved file matched the signed manifest
    'held-damaged': 'failed',     // a saved file did not
    shown: 'online-only',         // nothing saved: the server's verified manifest is shown
    unavailable: 'failed',        // nothing saved, and nothing current could be verified (offline, refused, stale, withdrawn)
  }),
  'online-only': Object.freeze({ save: 'saving' }),
  saving: Object.freeze({
    saved: 'ready',
    'save-failed': 'failed',
    'update-failed': 'failed',    // the update stopped before its files were fetched
  }),
  ready: Object.freeze({ 'update-found': 'update-available' }),
  'update-available': Object.freeze({
    save: 'saving',
    'update-failed': 'failed',
  }),
  failed: Object.freeze({
    // A saved copy refused at start does not stop the player offering the server's copy.
    shown: 'online-only',
    unavailable: 'failed',
    save: 'saving',               // Try again
    'update-failed': 'failed',    // Try again of an update that stopped again
  }),
});

export class StateError extends Error {
  constructor(message) { super(message); this.name = 'StateError'; }
}

/** The state after `event` in `state`; throws a StateError for a state or a move the table does not list. */
export function transition(state, event) {
  const row = Object.hasOwn(TRANSITIONS, state) ? TRANSITIONS[state] : null;
  if (!row) throw new StateError(`"${state}" is not a state of the player.`);
  if (!Object.hasOwn(row, event)) throw new StateError(`The player does not move on "${event}" when it is "${state}".`);
  return row[event];
}

/** The events the player reacts to in `state` (for tests and messages). */
export function eventsFrom(state) {
  return Object.keys(TRANSITIONS[state] || {});
}
