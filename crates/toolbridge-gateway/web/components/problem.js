// One doctor finding's problem and its fix in words, in the page's language (the
// Servers view's test result and the Doctor view share it).
import { t } from '../i18n.js';

/** `problem` ({kind, ...} from doctor's JSON) as one sentence. */
export function describeProblem(problem) {
  const vars = { ...problem };
  if (problem.kind === 'startTimeout') vars.seconds = Math.round(problem.timeoutMs / 100) / 10;
  return t(`doctor.problems.${problem.kind}`, vars);
}

/**
 * A finding's fix (`fixKind` from doctor's JSON: its kind and the values
 * its sentence is made of) as one sentence in the page's language.
 */
export function describeFix(fix) {
  const vars = { ...fix };
  if ('ownPath' in fix) vars.ownPath = fix.ownPath ? t('doctor.fixes.ownPathNote') : '';
  if (fix.then) vars.then = describeFix(fix.then);
  return t(`doctor.fixes.${fix.kind}`, vars);
}
