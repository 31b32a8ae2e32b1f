// The tour's stops on the player's page: the list, the language choice, and a stop's panel (its description, then
// each asset's media as it passes its check against the signed manifest, with the speed control and the transcript).
// The page's state and the checked files come from visit-player.js. Nothing here touches the DOM until called, so
// Node imports this module as it is (Tests/js) and tests the transcript's formatting without a browser.
import { companionType } from './visit-trust.js';

// MARK: Formatting (no DOM)

/** `key` of a waypoint or of the tour in `language` (null: the tour's first language), or as the manifest has it. */
export function localizedText(waypointOrTour, key, language) {
  const localized = language && waypointOrTour.localized?.[language];
  return (localized && localized[key]) || waypointOrTour[key];
}

/** The assets of `waypoint` in the chosen language (`language`, or the first of `languages`), and those of none. */
export function assetsIn(waypoint, languages, language) {
  const chosen = language || (languages || [])[0];
  return waypoint.assets.filter((asset) => !asset.language || !chosen || asset.language === chosen);
}

/** The text of a WebVTT file without its header, cue ids and timings, and without the lines that open a NOTE, STYLE
 * or REGION block. */
export function plainCues(vtt) {
  return vtt.split(/\r?\n/).filter((line, i, lines) => line && !line.startsWith('WEBVTT') && !line.includes('-->')
    && !(/^\S+$/.test(line) && (lines[i + 1] || '').includes('-->')) && !/^(NOTE|STYLE|REGION)\b/.test(line)).join('\n');
}

/** A transcript as the visitor reads it, from its file at `path` holding `words`: WebVTT as its plain cues, plain
 * text as it is. */
export function transcriptText(path, words) {
  return path.endsWith('.vtt') ? plainCues(words) : words;
}

const SPEEDS = [0.75, 1, 1.25, 1.5, 2];

// MARK: The list and a stop's panel

export class TourStops {
  /** `state` is the page's (visit-player.js): its manifest, language, activeStop are read here, activeStop is set.
   * `media.source(file)` answers a URL to play a checked file, or null when it failed its check; `media.text(file)`
   * its text, or null. `count(type, options)` counts a visitor statistics' event; `closureOf(waypoint)` answers the
   * closure that closes a stop now, or null. */
  constructor(list, { state, media, count, closureOf }) {
    this.list = list;
    this.state = state;
    this.media = media;
    this.count = count;
    this.closureOf = closureOf;
    /** Each stop body's fill in progress or done (fill), by the body. */
    this.fills = new WeakMap();
    /** The stops opened on this visit, by id: the tour is completed once every stop open to visitors has been. */
    this.opened = new Set();
  }

  text(waypointOrTour, key) {
    return localizedText(waypointOrTour, key, this.state.language);
  }

  /** The list of stops of `manifest`, in their order, each closed. */
  render(manifest) {
    this.list.replaceChildren();
    for (const waypoint of [...manifest.waypoints].sort((a, b) => a.order - b.order)) {
      const item = document.createElement('li');
      item.dataset.stop = '';
      item.dataset.stopOrder = String(waypoint.order);
      const heading = document.createElement('h3');
      const open = document.createElement('button');
      open.type = 'button';
      open.className = 'visit-stop-open';
      open.textContent = `${waypoint.order}. ${this.text(waypoint, 'name')}`;
      open.setAttribute('aria-expanded', 'false');
      open.addEventListener('click', () => this.open(waypoint.order, true));
      heading.append(open);
      const body = document.createElement('div');
      body.className = 'visit-stop-body';
      body.hidden = true;
      item.append(heading, body);
      this.list.append(item);
    }
  }

  /** The language choice in `holder` when the tour has two languages or more; `onChoose(tag)` when one is chosen. */
  renderLanguages(holder, manifest, onChoose) {
    const languages = manifest.languages || [];
    if (languages.length < 2) { holder.replaceChildren(); return; }
    if (holder.querySelector('select')) return;
    const label = document.createElement('label');
    label.htmlFor = 'language';
    label.textContent = 'Language';
    const select = document.createElement('select');
    select.name = 'language';
    select.id = 'language';
    const names = new Intl.DisplayNames([navigator.language || 'en'], { type: 'language' });
    for (const tag of languages) {
      const option = document.createElement('option');
      option.value = tag;
      option.lang = tag;
      option.textContent = new Intl.DisplayNames([tag], { type: 'language' }).of(tag) || names.of(tag) || tag;
      select.append(option);
    }
    select.value = this.state.language || languages[0];
    select.addEventListener('change', () => onChoose(select.value));
    holder.replaceChildren(label, select);
  }

  /** Opens the stop of `order` (closing the others) and, when `play`, plays its audio once its media are there. */
  async open(order, play) {
    const waypoint = this.state.manifest?.waypoints.find((w) => w.order === order);
    const item = document.querySelector(`[data-stop-order="${order}"]`);
    if (!waypoint || !item) return;
    for (const other of document.querySelectorAll('[data-stop]')) {
      if (other !== item) {
        other.querySelector('.visit-stop-body').hidden = true;
        other.querySelector('.visit-stop-open').setAttribute('aria-expanded', 'false');
        other.querySelectorAll('audio, video').forEach((media) => media.pause());
      }
    }
    this.state.activeStop = order;
    const body = item.querySelector('.visit-stop-body');
    item.querySelector('.visit-stop-open').setAttribute('aria-expanded', 'true');
    body.hidden = false;
    const closure = this.closureOf(waypoint);
    if (closure) {
      // A closed stop opens only to say why: nothing of it is shown or played.
      body.dataset.filledFor = 'closed';
      const why = document.createElement('p');
      why.className = 'visit-stop-closed-why';
      // The stop's heading already says "Closed: <title>": the message alone, not the title again.
      why.textContent = closure.message;
      body.replaceChildren(why);
      return;
    }
    this.countOpened(waypoint);
    if (body.dataset.filledFor !== (this.state.language || 'default')) this.fills.set(body, this.fill(waypoint, body));
    // A stop opened again while its media are still being checked plays once they are there.
    await this.fills.get(body);
    if (play) {
      const audio = body.querySelector('audio[data-stop-audio]');
      if (audio && audio.src) audio.play().catch(() => {});
    }
  }

  countOpened(waypoint) {
    if (waypoint.id == null) return; // a package made before stops had ids: nothing to name it by
    this.count('stop-opened', { onceKey: `stop-opened:${waypoint.id}`, waypointId: waypoint.id });
    this.opened.add(waypoint.id);
    const all = this.state.manifest.waypoints.filter((w) => w.id != null);
    // A stop closed by an alert cannot be opened: the tour is complete without it.
    if (all.length && all.every((w) => this.opened.has(w.id) || this.closureOf(w))) this.count('completed', { onceKey: 'completed' });
  }

  countPlayed(waypoint) {
    if (waypoint.id != null) this.count('stop-played', { onceKey: `stop-played:${waypoint.id}`, waypointId: waypoint.id });
  }

  /** Fills a stop's body: its description and one figure per asset are on screen at once; each figure's media follow
   * as their checks pass. Answers when every figure is filled (so a stop that should play has its audio then). */
  fill(waypoint, body) {
    body.dataset.filledFor = this.state.language || 'default';
    const description = document.createElement('p');
    description.textContent = this.text(waypoint, 'description');
    body.replaceChildren(description);
    return Promise.all(assetsIn(waypoint, this.state.manifest.languages, this.state.language).map((asset) => {
      const figure = document.createElement('figure');
      if (asset.title) {
        const caption = document.createElement('figcaption');
        caption.textContent = asset.title;
        figure.append(caption);
      }
      body.append(figure);
      return this.fillFigure(figure, asset, waypoint);
    }));
  }

  async fillFigure(figure, asset, waypoint) {
    const file = { path: asset.path, size: asset.size, sha256: asset.sha256, mimeType: asset.mimeType };
    const source = await this.media.source(file);
    if (!source) {
      const refused = document.createElement('p');
      refused.className = 'visit-error';
      refused.textContent = `${asset.title || asset.path} failed its check against the signed manifest and is not played.`;
      figure.append(refused);
      return;
    }
    if (asset.type === 'audio') {
      const audio = document.createElement('audio');
      audio.controls = true;
      audio.preload = 'metadata';
      audio.dataset.stopAudio = '';
      audio.src = source;
      audio.setAttribute('aria-label', asset.title || `Audio for ${this.text(waypoint, 'name')}`);
      audio.addEventListener('play', () => this.countPlayed(waypoint));
      figure.append(audio, speedControl(audio, waypoint.order));
      if (asset.transcript) await this.appendTranscript(figure, asset.transcript);
    } else if (asset.type === 'video') {
      const video = document.createElement('video');
      video.controls = true;
      video.preload = 'metadata';
      video.playsInline = true;
      video.src = source;
      video.setAttribute('aria-label', asset.title || `Video for ${this.text(waypoint, 'name')}`);
      video.addEventListener('play', () => this.countPlayed(waypoint));
      if (asset.captions) {
        const captions = await this.media.source({ ...asset.captions, mimeType: 'text/vtt' });
        if (captions) {
          const track = document.createElement('track');
          track.kind = 'captions';
          track.src = captions;
          track.srclang = asset.captions.language || asset.language || (this.state.manifest.languages || ['en'])[0];
          track.label = 'Captions';
          track.default = true;
          video.append(track);
        }
      }
      figure.append(video, speedControl(video, waypoint.order));
      if (asset.transcript) await this.appendTranscript(figure, asset.transcript);
    } else if (asset.type === 'image') {
      const image = document.createElement('img');
      image.src = source;
      image.alt = asset.altText || '';
      image.loading = 'lazy';
      figure.append(image);
    } else if (asset.type === 'text') {
      const words = document.createElement('div');
      words.className = 'visit-text';
      words.textContent = await this.media.text(file) ?? '';
      figure.append(words);
    }
  }

  async appendTranscript(figure, transcript) {
    const words = await this.media.text({ ...transcript, mimeType: companionType(transcript.path) });
    if (words == null) return;
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    summary.textContent = 'Transcript';
    const content = document.createElement('div');
    content.className = 'visit-transcript';
    content.textContent = transcriptText(transcript.path, words);
    details.append(summary, content);
    figure.append(details);
  }
}

function speedControl(media, order) {
  const label = document.createElement('label');
  label.className = 'visit-speed';
  label.textContent = 'Speed ';
  const select = document.createElement('select');
  select.setAttribute('aria-label', `Playback speed, stop ${order}`);
  for (const speed of SPEEDS) {
    const option = document.createElement('option');
    option.value = String(speed);
    option.textContent = `${speed}×`;
    option.selected = speed === 1;
    select.append(option);
  }
  select.addEventListener('change', () => { media.playbackRate = Number(select.value); });
  label.append(select);
  return label;
}
