// The alerts page: the closed-stops choice lists only the chosen tour's stops. A district has hundreds of stops
// across its tours; the other tours' groups are hidden (and their boxes unticked, so a closure never carries stops of
// a tour it is not about). Without scripts every group stays, and the server refuses stops of another tour.

const tour = document.getElementById('alert-tour');
const groups = [...document.querySelectorAll('[data-stops-of]')];
const none = document.getElementById('alert-stops-none');

function showChosenTour() {
  const chosen = tour.value;
  for (const group of groups) {
    const shown = group.dataset.stopsOf === chosen;
    group.hidden = !shown;
    if (!shown) for (const box of group.querySelectorAll('input[type="checkbox"]')) box.checked = false;
  }
  if (none) none.hidden = groups.some((group) => !group.hidden);
}

if (tour && groups.length) {
  tour.addEventListener('change', showChosenTour);
  showChosenTour();
}
