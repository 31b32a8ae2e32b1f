// A stop's words in the visitor player (Public/js/visit-stops.js): the transcript as the visitor reads it (WebVTT
// without its header, cue ids, timings and block lines; plain text as it is), a stop's texts in the chosen language,
// and the assets shown in it. Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { assetsIn, localizedText, plainCues, transcriptText } from '../../Public/js/visit-stops.js';

const VTT = [
  'WEBVTT - the river walk',
  '',
  'NOTE written by the ranger',
  '',
  'intro',
  '00:00:00.000 --> 00:00:02.500',
  'The river runs high in spring.',
  '',
  '2',
  '00:00:02.500 --> 00:00:05.000 align:start',
  'Listen for the dipper',
  'on the stones.',
  '',
  '00:00:05.000 --> 00:00:07.000',
  'Wait here.',
  '',
].join('\n');

test('a WebVTT transcript reads as its cues\' words alone, one line each, in order', () => {
  assert.equal(plainCues(VTT), 'The river runs high in spring.\nListen for the dipper\non the stones.\nWait here.');
  assert.equal(plainCues(VTT.replace(/\n/g, '\r\n')), plainCues(VTT), 'Windows line ends read the same');
  assert.equal(plainCues('WEBVTT\n\n'), '', 'a file without cues has no words');
});

test('a word alone on a line stays unless a timing follows it (then it is a cue id)', () => {
  assert.equal(plainCues('WEBVTT\n\n00:00.000 --> 00:01.000\nHello\nthere\n'), 'Hello\nthere');
  assert.equal(plainCues('WEBVTT\n\nid-1\n00:00.000 --> 00:01.000\nHello\n'), 'Hello');
});

test('lines that open a STYLE or REGION block are left out; a cue that only starts with such a word is kept', () => {
  assert.equal(plainCues('WEBVTT\n\nSTYLE\n\nREGION\n\n00:00.000 --> 00:01.000\nNOTES on the bridge\n'), 'NOTES on the bridge');
});

test('a transcript is formatted by its file: WebVTT as its cues, plain text exactly as written', () => {
  assert.equal(transcriptText('files/t1.vtt', VTT), plainCues(VTT));
  const plain = 'WEBVTT is only a word here.\n\n00:00 --> not a timing either';
  assert.equal(transcriptText('files/t1.txt', plain), plain);
  assert.equal(transcriptText('files/t1.txt', ''), '');
});

test('a stop\'s texts in the chosen language, falling back to the manifest\'s own', () => {
  const waypoint = { name: 'Bridge', description: 'Old stones.', localized: { es: { name: 'Puente' } } };
  assert.equal(localizedText(waypoint, 'name', 'es'), 'Puente');
  assert.equal(localizedText(waypoint, 'description', 'es'), 'Old stones.', 'a text not translated');
  assert.equal(localizedText(waypoint, 'name', null), 'Bridge', 'the first language');
  assert.equal(localizedText(waypoint, 'name', 'fr'), 'Bridge', 'a language the stop does not have');
  assert.equal(localizedText({ name: 'Gate' }, 'name', 'es'), 'Gate');
});

test('a stop shows its assets in the chosen language and those in none', () => {
  const waypoint = { assets: [{ path: 'a-en', language: 'en' }, { path: 'a-es', language: 'es' }, { path: 'photo' }] };
  const paths = (assets) => assets.map((asset) => asset.path);
  assert.deepEqual(paths(assetsIn(waypoint, ['en', 'es'], null)), ['a-en', 'photo'], 'the first language at first');
  assert.deepEqual(paths(assetsIn(waypoint, ['en', 'es'], 'es')), ['a-es', 'photo']);
  assert.deepEqual(paths(assetsIn(waypoint, undefined, null)), ['a-en', 'a-es', 'photo'], 'a tour without languages shows all');
});
