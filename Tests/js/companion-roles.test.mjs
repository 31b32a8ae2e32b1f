// The companion files a manifest lists beside a media file (captions, transcripts): the player's list
// (COMPANION_ROLES in Public/js/visit-trust.js) is the one Public/js/companion-roles.json describes, the description
// the server's CompanionRole is tested against too. Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { COMPANION_ROLES, listedFiles } from '../../Public/js/visit-trust.js';

const described = JSON.parse(readFileSync(new URL('../../Public/js/companion-roles.json', import.meta.url), 'utf8'));

test('the player saves the companion roles companion-roles.json lists, in its order', () => {
  assert.ok(Array.isArray(described.roles) && described.roles.length > 0);
  assert.deepEqual([...COMPANION_ROLES], described.roles);
  assert.ok(Object.isFrozen(COMPANION_ROLES));
});

test('a file of every listed role is saved with its media file', () => {
  const ref = (path) => ({ path, size: 1, sha256: 'b'.repeat(64) });
  const asset = { ...ref('media/a.mp4'), mimeType: 'video/mp4' };
  for (const role of described.roles) asset[role] = ref(`media/a-${role}.vtt`);
  const paths = listedFiles({ waypoints: [{ assets: [asset] }] }).map((file) => file.path);
  assert.deepEqual(paths, ['media/a.mp4', ...described.roles.map((role) => `media/a-${role}.vtt`)]);
});
