// The statistics page: each table[data-chart] is drawn as a chart above it, with Chart.js from Debian's libjs-chart.js
// (served under /vendor/chart.js, a classic script that defines window.Chart). The table stays the data: the chart
// only shows it, so the page says the same without scripts and to a screen reader (the canvas is labelled as an image
// that the table beside it describes). No request leaves this server.

const COLORS = ['#1b6e3a', '#b35900', '#1f5fa8', '#7a3d99', '#8a6d00', '#a0303a'];

/** {labels, datasets} from a table: the row headers are the labels, each further column a dataset. */
export function tableData(table) {
  const headers = [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent.trim());
  const rows = [...table.querySelectorAll('tbody tr')];
  const labels = rows.map((row) => row.querySelector('th').textContent.trim());
  const datasets = headers.map((label, column) => ({
    label,
    data: rows.map((row) => Number(row.querySelectorAll('td')[column]?.dataset.count || 0)),
    backgroundColor: COLORS[column % COLORS.length],
    borderColor: COLORS[column % COLORS.length],
  }));
  return { labels, datasets };
}

function draw(table) {
  const holder = document.querySelector(`[data-chart-for="${table.id}"]`);
  if (!holder || !globalThis.Chart) return;
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Chart: ${table.dataset.chartTitle}. The table below gives its figures.`);
  holder.replaceChildren(canvas);
  const kind = table.dataset.chart === 'line' ? 'line' : 'bar';
  // Charts drawn at once, without animation: the figures are there when the page is, and nothing moves for people
  // who find motion hard.
  holder.dataset.chartDrawn = kind;
  new globalThis.Chart(canvas, {
    type: kind,
    data: tableData(table),
    options: {
      animation: false,
      maintainAspectRatio: false,
      responsive: true,
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      plugins: { legend: { display: table.querySelectorAll('thead th').length > 2 } },
    },
  });
}

if (typeof document !== 'undefined') {
  for (const table of document.querySelectorAll('table[data-chart]')) draw(table);
}
