// The place search above the tour map: coordinates, or a name from the server's OpenStreetMap extract.


/// The place search above the map: a typed "latitude, longitude" moves the map there, and a name is looked up in the
/// server's OpenStreetMap extract (a search form with no script would have nothing to move, so it shows only with one).
export function setUpPlaceSearch(map, data) {
  const form = document.getElementById('place-search-form');
  const input = form?.querySelector('[data-place-search]');
  if (!input) return;
  const message = document.getElementById('place-search-message');
  form.hidden = false;
  const results = document.getElementById('place-search-results');
  const refuse = (text) => {
    message.textContent = text;
    message.classList.add('text-danger');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  };
  const goTo = (lat, lng, label) => {
    input.removeAttribute('aria-invalid');
    message.classList.remove('text-danger');
    map.setView([lat, lng], Math.max(map.getZoom(), 14));
    message.textContent = `The map is over ${label}.`;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    results?.replaceChildren();
    const typed = input.value.trim();
    const parts = typed.split(/[\s,;]+/).filter(Boolean).map(Number);
    const [lat, lng] = parts;
    if (parts.length === 2 && parts.every(Number.isFinite)) {
      if (Math.abs(lat) > 90 || Math.abs(lng) > 180) {
        refuse('Type a latitude and a longitude in decimal degrees, like 44.40, -122.10.');
        return;
      }
      goTo(lat, lng, `${lat.toFixed(5)}, ${lng.toFixed(5)}`);
      return;
    }
    // A name: the server's OpenStreetMap extract knows the places of its region.
    if (typed.length < 2 || !data.placesURL) {
      refuse('Type a place\'s name, or a latitude and a longitude in decimal degrees, like 44.40, -122.10.');
      return;
    }
    message.classList.remove('text-danger');
    message.textContent = 'Searching…';
    let answer;
    try {
      const response = await fetch(`${data.placesURL}?q=${encodeURIComponent(typed)}`, { headers: { Accept: 'application/json' } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      answer = await response.json();
    } catch {
      refuse('The place search did not answer. Type a latitude and a longitude instead, like 44.40, -122.10.');
      return;
    }
    if (!answer.searched) {
      refuse('Type a latitude and a longitude, like 44.40, -122.10: this server has no map data to look names up in.');
      return;
    }
    const places = answer.places || [];
    if (!places.length) {
      refuse(`No place named like “${typed}” in the server's map data. Try another name, or a latitude and a longitude.`);
      return;
    }
    if (places.length === 1) {
      goTo(places[0].latitude, places[0].longitude, places[0].name);
      return;
    }
    input.removeAttribute('aria-invalid');
    message.textContent = `${places.length} places found: choose one.`;
    for (const place of places) {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'btn btn-link btn-sm p-0';
      button.textContent = `${place.name} (${place.kind})`;
      button.addEventListener('click', () => { results.replaceChildren(); goTo(place.latitude, place.longitude, place.name); });
      item.append(button);
      results.append(item);
    }
    results.querySelector('button')?.focus();
  });
}
