// A modal <dialog>, as every view opens one: named by its heading, removed
// when it closes, focus back on the button that opened it.
import { h, uid } from '../dom.js';

/**
 * A modal dialog titled `title`, opened from `opener`; `role: 'alertdialog'`
 * for a question. `heading` (the <h2> that names the dialog) goes first in
 * what is appended to `dialog`; `open(first)` shows it with `first` focused.
 * Closing it removes it and focuses `opener` again when it is still there.
 */
export function modal(title, opener, { role } = {}) {
  const titleId = uid('dialog-title');
  const dialog = h('dialog', { 'aria-labelledby': titleId, role: role || null });
  const heading = h('h2', { id: titleId }, title);
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (opener.isConnected) opener.focus();
  });
  return {
    dialog,
    heading,
    open(first) {
      document.body.append(dialog);
      dialog.showModal();
      first.focus();
    },
  };
}
