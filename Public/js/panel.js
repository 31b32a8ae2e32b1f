// Small helpers shared by the panel's scripts.

/// The CSRF token of this page (every state-changing request carries it).
export function csrfToken() {
  return document.querySelector('main[data-csrf]')?.dataset.csrf ?? '';
}

/// POSTs form fields and answers {ok, data, message}. An array is sent as `name[]` once per item: the server's form
/// decoder refuses a plain name that repeats.
export async function postForm(url, fields) {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) for (const item of value) body.append(`${key}[]`, item);
    else body.append(key, value);
  }
  try {
    const response = await fetch(url, {
      method: 'POST', body, credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrfToken(), Accept: 'application/json' },
    });
    const data = await response.json().catch(() => ({}));
    if (response.ok) return { ok: true, data };
    // The fields' own messages, as a person reads them ("Another waypoint … is already called …"), not the API's
    // one-line summary, which names each field first ("name: …").
    const fields = Object.values(data?.error?.fields ?? {});
    return { ok: false, message: fields.length ? fields.join(' ') : data?.error?.message ?? `The server answered ${response.status}.` };
  } catch (error) {
    return { ok: false, message: 'The server could not be reached. Check the connection and try again.' };
  }
}

/// Sends a JSON body (or a FormData as multipart) to a management API route with this page's session and CSRF token;
/// answers {ok, data, message} like `postForm`.
export async function sendJSON(method, url, body) {
  const headers = { 'X-CSRF-Token': csrfToken(), Accept: 'application/json' };
  if (body !== undefined && !(body instanceof FormData)) headers['Content-Type'] = 'application/json';
  try {
    const response = await fetch(url, {
      method, credentials: 'same-origin', headers, cache: 'no-store',
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (response.ok) return { ok: true, data };
    const fields = Object.values(data?.error?.fields ?? {});
    return { ok: false, message: fields.length ? fields.join(' ') : data?.error?.message ?? `The server answered ${response.status}.` };
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
  // Also over a field's `autofocus`, which a browser may apply before or after this runs: the errors come first.
  const active = document.activeElement;
  if (active === document.body || active === null || active.hasAttribute('autofocus')) summary.focus();
  summary.addEventListener('click', (event) => {
    const link = event.target.closest('a[href^="#"]');
    const field = link && document.getElementById(decodeURIComponent(link.hash.slice(1)));
    if (!field) return;
    event.preventDefault();
    field.scrollIntoView({ block: 'center' });
    field.focus({ preventScroll: true });
  });
}

/// A refused form whose page makes no summary of its own gets one here, from the fields the server marked invalid
/// (`.is-invalid`, each with its `.invalid-feedback` message), in the page's order, at the top of the page's content
/// (below the server's notices). Without scripts the messages still stand beside their fields.
function summarizeInvalidFields() {
  if (document.querySelector('[data-error-summary]')) return;
  const fields = [...document.querySelectorAll('#main .is-invalid[id]')];
  if (fields.length === 0) return;
  const summary = document.createElement('div');
  summary.className = 'alert alert-danger';
  summary.id = 'error-summary';
  summary.tabIndex = -1;
  summary.dataset.errorSummary = '';
  summary.setAttribute('role', 'alert');
  summary.setAttribute('aria-labelledby', 'error-summary-title');
  const title = document.createElement('h2');
  title.className = 'h5';
  title.id = 'error-summary-title';
  title.textContent = 'There is a problem';
  const list = document.createElement('ul');
  list.className = 'mb-0';
  for (const field of fields) {
    const feedback = field.parentElement.querySelector('.invalid-feedback');
    const label = document.querySelector(`label[for="${CSS.escape(field.id)}"]`);
    const link = document.createElement('a');
    link.href = `#${field.id}`;
    link.className = 'alert-link';
    link.textContent = feedback?.textContent.trim() || `${label?.textContent.trim() || 'This field'}: check it again.`;
    const item = document.createElement('li');
    item.append(link);
    list.append(item);
  }
  summary.append(title, list);
  const main = document.getElementById('main');
  const firstContent = [...main.children].find((child) => !child.matches('[role="status"], .alert:not([data-error-summary]), nav'));
  main.insertBefore(summary, firstContent || null);
}

/// A page that lands at an anchor (a release lands on the tour's publishing card, `#publish`) shows its success notice
/// there, where the eye is, rather than at the top, out of view; without scripts it stays at the top.
function noticeAtAnchor() {
  const notice = document.querySelector('[data-flash-notice]');
  const target = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!notice || !target || !document.getElementById('main')?.contains(target)) return;
  const body = target.querySelector('.card-body') || target;
  const heading = body.querySelector('h2, h3');
  if (heading && heading.parentElement === body) heading.after(notice);
  else body.prepend(notice);
  target.scrollIntoView({ block: 'start' });
}

summarizeInvalidFields();
noticeAtAnchor();
errorSummary();
