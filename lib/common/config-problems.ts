import { PayoutsConfigError, type PayoutsConfigProblem } from '../errors/payouts-config.error.js';
import { misspeltKey, unknownKeys } from './known-option-keys.js';

/**
 * Gathers the problems of one options object, so that a bootstrap reports every wrong option at once rather than the
 * first: each check runs, the errors it throws are kept, and `throwIfAny()` throws one error listing them all. An
 * option that is absent reads as missing, naming the key passed instead when one is spelt like it but for case and
 * separators (`apikey` for `apiKey`). No value is ever repeated, only option names.
 */
export class ConfigProblems {
  /** Each problem, with what its option should be. */
  readonly #found: { readonly problem: PayoutsConfigProblem; readonly expected: string }[] = [];

  constructor(
    private readonly options: object,
    /** The known keys of `options`, to recognise a misspelt one. */
    private readonly known: readonly string[],
    private readonly owner = 'PayoutsModule',
  ) {}

  /**
   * Runs one check and returns its result; a `PayoutsConfigError` it throws is kept instead, and the result is then
   * `undefined`, which the caller never uses: `throwIfAny()` throws before it returns what it built.
   */
  check<T>(resolve: () => T): T {
    try {
      return resolve();
    } catch (error) {
      if (!(error instanceof PayoutsConfigError)) throw error;
      const [only] = error.problems;
      if (error.problems.length === 1 && this.isAbsent(only!.option)) {
        this.#found.push({ problem: this.missing(only!.option, error.expected), expected: error.expected });
      } else {
        // `expected` serves only as the first problem's, and a combined error's first problem is its own.
        this.#found.push(...error.problems.map((problem) => ({ problem, expected: error.expected })));
      }
      return undefined as T;
    }
  }

  /**
   * Adds every key of the options nobody reads, unless a check worded it already (`maxRedirects`); one spelt like a
   * missing option is named by that option's problem.
   */
  checkUnknownKeys(): void {
    const named = (option: string) => this.#found.some(({ problem }) => problem.option === option);
    for (const { key, expected } of unknownKeys(this.options, this.known)) {
      const meant = this.known.find((name) => misspeltKey(this.options, name, this.known) === key);
      if (named(key) || (meant !== undefined && named(meant))) continue;
      this.#found.push({ problem: { option: key, problem: `is invalid: expected ${expected}` }, expected });
    }
  }

  /** Throws one `PayoutsConfigError` naming every problem found, if any. */
  throwIfAny(): void {
    const [first] = this.#found;
    if (first === undefined) return;
    const problems = this.#found.map(({ problem }) => problem);
    throw new PayoutsConfigError(first.problem.option, first.expected, this.owner, problems);
  }

  private isAbsent(option: string): boolean {
    return this.known.includes(option) && (this.options as Record<string, unknown>)[option] === undefined;
  }

  private missing(option: string, expected: string): PayoutsConfigProblem {
    const passed = misspeltKey(this.options, option, this.known);
    return {
      option,
      problem: passed === undefined ? `is missing: expected ${expected}` : `is missing; you passed "${passed}"`,
    };
  }
}
