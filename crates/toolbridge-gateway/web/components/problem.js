// One doctor finding's problem in words, in the page's language (the
// Servers view's test result and the Doctor view share it).
import { t } from '../i18n.js';

/** `problem` ({kind, ...} from doctor's JSON) as one sentence. */
export function describeProblem(problem) {
  const vars = { ...problem };
  if (problem.kind === 'startTimeout') vars.seconds = Math.round(problem.timeoutMs / 100) / 10;
  return t(`doctor.problems.${problem.kind}`, vars);
}
