// The doctor view (being built).
import { h } from '../dom.js';
import { t } from '../i18n.js';

export async function render(main) {
  main.append(h('h1', {}, t('common.nav.doctor')));
}
