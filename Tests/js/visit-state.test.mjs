// The web player's offline states (Public/js/visit-state.js) under Node's own test runner: the states the page can
// show are the ones docs/visitors.md documents, each is reachable, and a move the table does not list is refused.
// Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { START, STATES, StateError, TRANSITIONS, eventsFrom, transition } from '../../Public/js/visit-state.js';

/** The values docs/visitors.md lists for #player[data-offline-state], read from its "Hooks for tests and scripts". */
function documentedStates() {
  const docs = readFileSync(new URL('../../docs/visitors.md', import.meta.url), 'utf8');
  const item = docs.split('\n- ').find((part) => part.startsWith('`#player[data-offline-state]`'));
  assert.ok(item, 'docs/visitors.md documents #player[data-offline-state]');
  const sentence = item.slice(0, item.indexOf('; a `<progress>`'));
  return [...sentence.matchAll(/`([a-z-]+)`/g)].map((match) => match[1]);
}

test('the states are exactly the documented data-offline-state values, and the page starts in the first', () => {
  assert.deepEqual([...STATES].sort(), [...new Set(documentedStates())].sort());
  assert.equal(START, 'checking');
  assert.equal(documentedStates()[0], START, 'the docs name the start state first');
  const template = readFileSync(new URL('../../Templates/visit.mustache', import.meta.url), 'utf8');
  assert.match(template, new RegExp(`data-offline-state="${START}"`), 'the page is served in the start state');
});

test('no move leads to, or starts from, a state that is not listed', () => {
  assert.deepEqual(Object.keys(TRANSITIONS).sort(), [...STATES].sort());
  for (const [from, row] of Object.entries(TRANSITIONS)) {
    for (const [event, to] of Object.entries(row)) assert.ok(STATES.includes(to), `${from} --${event}--> ${to}`);
  }
});

test('every state is reachable from the start state through the listed moves', () => {
  const reached = new Set([START]);
  const queue = [START];
  while (queue.length) {
    const from = queue.shift();
    for (const event of eventsFrom(from)) {
      const to = transition(from, event);
      if (!reached.has(to)) { reached.add(to); queue.push(to); }
    }
  }
  assert.deepEqual([...reached].sort(), [...STATES].sort());
});

test('the moves a visitor makes: save, update, a failure and Try again', () => {
  const walk = (events, from = START) => events.reduce((state, event) => transition(state, event), from);
  assert.equal(walk(['shown', 'save', 'saved']), 'ready');
  assert.equal(walk(['held-found', 'held-checked', 'update-found', 'save', 'saved']), 'ready');
  assert.equal(walk(['shown', 'save', 'save-failed', 'save', 'saved']), 'ready');
  assert.equal(walk(['held-found', 'held-checked', 'update-found', 'update-failed', 'save']), 'saving');
  // A saved manifest that fails its signature: the server's copy is offered instead.
  assert.equal(walk(['held-refused', 'shown']), 'online-only');
});

test('an undefined move is refused, and so is a state that does not exist', () => {
  assert.throws(() => transition('ready', 'shown'), StateError);
  assert.throws(() => transition('saving', 'save'), /does not move on "save" when it is "saving"/);
  assert.throws(() => transition('checking', 'saved'), StateError);
  assert.throws(() => transition('downloading', 'save'), /"downloading" is not a state/);
  assert.throws(() => transition('ready', 'toString'), StateError, 'an inherited name is no move');
  assert.throws(() => transition('constructor', 'save'), StateError, 'nor an inherited state');
});

test('the table cannot be changed at run time', () => {
  assert.ok(Object.isFrozen(STATES) && Object.isFrozen(TRANSITIONS));
  for (const row of Object.values(TRANSITIONS)) assert.ok(Object.isFrozen(row));
});
