// Small helpers shared by the panel's scripts.

/// The CSRF token of this page (every state-changing request carries it).
export function csrfToken() {
  return document.querySelector('main[data-csrf]')?.dataset.csrf ?? '';
}

/// POSTs form fields (arrays repeat the name) and answers {ok, data, message}.
export async function postForm(url, fields) {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    for (const item of Array.isArray(value) ? value : [value]) body.append(key, item);
  }
  try {
    const response = await fetch(url, {
      method: 'POST', body, credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrfToken(), Accept: 'application/json' },
    });
    const data = await response.json().catch(() => ({}));
    if (response.ok) return { ok: true, data };
    return { ok: false, message: data?.error?.message ?? `The server answered ${response.status}.` };
  } catch (error) {
    return { ok: false, message: 'The server could not be reached. Check the connection and try again.' };
  }
}

/// Buttons with data-confirm ask before they submit.
export function confirmButtons(root) {
  root.querySelectorAll('[data-confirm]').forEach((button) => {
    button.addEventListener('click', (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  });
}

/// A refused form's error summary (`[data-error-summary]`, at the top of the page) takes the focus, so a screen reader
/// reads every error at once; each of its links moves the focus to its field. (`autofocus` does the first where the
/// browser honours it on a non-field; this covers the others.)
function errorSummary() {
  const summary = document.querySelector('[data-error-summary]');
  if (!summary) return;
  if (document.activeElement === document.body || document.activeElement === null) summary.focus();
  summary.addEventListener('click', (event) => {
    const link = event.target.closest('a[href^="#"]');
    const field = link && document.getElementById(decodeURIComponent(link.hash.slice(1)));
    if (!field) return;
    event.preventDefault();
    field.scrollIntoView({ block: 'center' });
    field.focus({ preventScroll: true });
  });
}

errorSummary();
