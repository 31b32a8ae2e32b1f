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
