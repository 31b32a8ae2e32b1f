// The request page: a live progress bar while the package builds (polls the request's JSON), then a reload.
const box = document.getElementById('build-progress');
const bar = box?.querySelector('.build-bar');
if (bar) bar.style.width = `${bar.dataset.percent}%`;
if (box) {
  const timer = setInterval(async () => {
    const response = await fetch(`/api/v1/manage/publish-requests/${box.dataset.request}`, { credentials: 'same-origin' }).catch(() => null);
    if (!response?.ok) return;
    const request = await response.json();
    const { bytesDone, bytesTotal, filesDone, filesTotal } = request.progress;
    const percent = bytesTotal ? Math.min(100, Math.floor(bytesDone / bytesTotal * 100)) : 0;
    bar.style.width = `${percent}%`;
    box.querySelector('[role=progressbar]').setAttribute('aria-valuenow', String(percent));
    document.getElementById('build-progress-text').textContent = `${filesDone} of ${filesTotal} files, ${percent} %`;
    if (request.state !== 'building') { clearInterval(timer); location.reload(); }
  }, 1500);
}
