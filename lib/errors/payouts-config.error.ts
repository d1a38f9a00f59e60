import { PayoutsError } from './payouts.error.js';

/** One option found wrong, as a `PayoutsConfigError` lists it. */
export interface PayoutsConfigProblem {
  /** The option's dotted path, such as `apiKey` or `retries.maxDelayMs`. */
  readonly option: string;
  /** What is wrong, worded to follow the option's name: `is invalid: expected …`, `is missing; you passed "apikey"`. */
  readonly problem: string;
}

/**
 * Thrown while the application boots when `PayoutsModule` options (or the options of a class the package ships,
 * such as a dedupe store) are missing or malformed. `option` is the dotted path of the offending option, the first of
 * `problems` when several were found at once; the message never contains a value.
 */
export class PayoutsConfigError extends PayoutsError {
  /** Every option found wrong, `option`'s first: all of them, so that one bootstrap shows every mistake. */
  readonly problems: readonly PayoutsConfigProblem[];

  constructor(
    readonly option: string,
    /** What the option should be (of `option`, the first problem). */
    readonly expected: string,
    /**
     * Whose option it is; `PayoutsModule` unless a class of the package was constructed directly, or a handler
     * method (`CardEvents.added`) for the options of its `@OnPaymentMethod…()` decorator.
     */
    readonly owner = 'PayoutsModule',
    /** Several problems found at once, or one worded otherwise (a missing option); by default `option`'s. */
    problems: readonly PayoutsConfigProblem[] = [{ option, problem: `is invalid: expected ${expected}` }],
  ) {
    super(configMessage(owner, problems));
    this.problems = problems;
  }
}

/** One problem on one line, as it always read; several as a list under one line that counts them. */
function configMessage(owner: string, problems: readonly PayoutsConfigProblem[]): string {
  if (problems.length === 1) return `${owner} option "${problems[0]!.option}" ${problems[0]!.problem}.`;
  const lines = problems.map(({ option, problem }) => `- "${option}" ${problem}.`);
  return [`${owner} has ${problems.length} invalid options:`, ...lines].join('\n');
}
