// The web player's modules as the server serves them: every module the page loads (visit-player.js and all it
// imports, however deep) is one of PlayerAssets.sources, the list the server serves under the player's version and
// the service worker keeps for offline use. A module left off it would load online and break the player offline. Each
// stays small enough to read: at most 450 lines. Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const read = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const MAX_LINES = 450;

/** The JavaScript names PlayerAssets.sources lists in the folder "js". */
function servedModules() {
  const swift = read('Sources/TrailServer/Visit/PlayerAssets.swift');
  return [...swift.matchAll(/\("([\w.-]+\.js)", "js",/g)].map((match) => match[1]);
}

/** The modules `name` imports by relative URL (static imports and re-exports, and dynamic imports of a literal URL). */
function importsOf(name) {
  const source = read(`Public/js/${name}`);
  return [...source.matchAll(/(?:^(?:import|export)\s[^;]*?from\s*|\bimport\(\s*)'\.\/([\w.-]+\.js)'/gm)].map((match) => match[1]);
}

/** `entry` and every module it reaches through imports. */
function reachedFrom(entry) {
  const reached = new Set([entry]);
  const queue = [entry];
  while (queue.length) {
    for (const name of importsOf(queue.shift())) {
      if (!reached.has(name)) { reached.add(name); queue.push(name); }
    }
  }
  return reached;
}

test('the page loads visit-player.js from the player\'s versioned folder', () => {
  assert.match(read('Templates/visit.mustache'), /<script type="module" src="\{\{page\.assets\}\}visit-player\.js"><\/script>/);
});

test('every module the page loads is served with the player and kept offline, and none is listed twice', () => {
  const served = servedModules();
  assert.ok(served.includes('visit-player.js'), served.join(', '));
  assert.equal(new Set(served).size, served.length, served.join(', '));
  const reached = [...reachedFrom('visit-player.js')];
  assert.ok(reached.length >= 10, `the import scan found the page's modules: ${reached.join(', ')}`);
  assert.deepEqual(reached.filter((name) => !served.includes(name)), [], 'modules missing from PlayerAssets.sources');
  assert.deepEqual(served.filter((name) => !reached.includes(name)), [], 'served modules the page never loads');
});

test(`each of the player's modules has at most ${MAX_LINES} lines`, () => {
  for (const name of servedModules()) {
    const lines = read(`Public/js/${name}`).split('\n').length - 1;
    assert.ok(lines <= MAX_LINES, `${name} has ${lines} lines`);
  }
});

test(`every module in Public/js, the panel's too, has at most ${MAX_LINES} lines`, () => {
  const modules = readdirSync(new URL('../../Public/js/', import.meta.url)).filter((name) => name.endsWith('.js'));
  assert.ok(modules.includes('tour-page.js') && modules.includes('visit-player.js'));
  for (const name of modules) {
    const lines = read(`Public/js/${name}`).split('\n').length - 1;
    assert.ok(lines <= MAX_LINES, `${name} has ${lines} lines`);
  }
});
