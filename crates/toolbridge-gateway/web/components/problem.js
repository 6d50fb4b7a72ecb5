// One doctor finding's problem and its fix in words, and a server's failure,
// in the page's language (the Servers view's cards and test result and the
// Doctor view share them).
import { t, has, currentLanguage } from '../i18n.js';

/** `problem` ({kind, ...} from doctor's JSON) as one sentence. */
export function describeProblem(problem) {
  const vars = { ...problem };
  if (problem.kind === 'startTimeout') vars.seconds = seconds(problem.timeoutMs);
  if (problem.kind === 'startFailed') vars.reason = describeFailure(problem.reasonKind, problem.reason);
  return t(`doctor.problems.${problem.kind}`, vars);
}

/**
 * A server's failure in the page's language: `english` (the library's own
 * sentence, a card's `error` or a finding's `reason`) in English, and for
 * a kind the page knows (`kind`, `{kind, ...}`: a card's `errorKind`, a
 * finding's `reasonKind`) its sentence in the others; the English for a
 * kind it does not know.
 */
export function describeFailure(kind, english) {
  const key = kind && `common.failures.${kind.kind}`;
  if (currentLanguage() === 'en' || !key || !has(key)) return english;
  const vars = { ...kind };
  if ('afterMs' in kind) vars.seconds = seconds(kind.afterMs);
  if (kind.fix) vars.fix = describeFix(kind.fix);
  return t(key, vars);
}

function seconds(ms) {
  return Math.round(ms / 100) / 10;
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
