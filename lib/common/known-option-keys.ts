import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { editDistance } from './edit-distance.js';

/**
 * Fails on every option name nobody reads, in one error, naming the closest known one for each: a typo such as
 * `retry: 3` in a `forRootAsync` factory, which types cannot catch, would otherwise be ignored in silence.
 */
export function rejectUnknownKeys(options: object, known: readonly string[], path: string, owner?: string): void {
  const problems = unknownKeys(options, known).map(({ key, expected }) => ({
    option: path ? `${path}.${key}` : key,
    expected,
  }));
  if (problems.length === 0) return;
  const [first] = problems;
  throw new PayoutsConfigError(
    first!.option,
    first!.expected,
    owner,
    problems.map(({ option, expected }) => ({ option, problem: `is invalid: expected ${expected}` })),
  );
}

/** The first key of `options` that is not `known`, with what is expected instead (the closest known name). */
export function unknownKey(options: object, known: readonly string[]): { key: string; expected: string } | undefined {
  return unknownKeys(options, known)[0];
}

/** Every key of `options` that is not `known`, in order, each with what is expected instead. */
export function unknownKeys(options: object, known: readonly string[]): { key: string; expected: string }[] {
  return Object.keys(options)
    .filter((name) => !known.includes(name))
    .map((key) => {
      const closest = closestName(key, known);
      const expected =
        closest === undefined ? `one of ${known.join(', ')}` : `a known option name (did you mean "${closest}"?)`;
      return { key, expected };
    });
}

/**
 * The key of `options` spelt like the known option `name` but for case and separators (`apikey`, `api_key`,
 * `base-url` for `apiKey`, `baseUrl`), when `options` lacks `name` itself: what the user meant to pass as `name`.
 */
export function misspeltKey(options: object, name: string, known: readonly string[]): string | undefined {
  if ((options as Record<string, unknown>)[name] !== undefined) return undefined;
  const wanted = looseName(name);
  return Object.keys(options).find((key) => !known.includes(key) && looseName(key) === wanted);
}

/** A name without case or separators: `API_KEY`, `api-key` and `apiKey` all read `apikey`. */
function looseName(name: string): string {
  return name.toLowerCase().replace(/[-_\s.]/g, '');
}

/**
 * The known name nearest to `name`, ignoring case, when it is near enough to be a typo: at most half of it edited, or
 * one name the start of the other (`ttl` for `ttlMs`).
 */
function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  // Up to half the name may differ: `retry` is three edits from `retries`.
  let bestDistance = Math.max(2, Math.ceil(name.length / 2)) + 1;
  const typed = name.toLowerCase();
  for (const candidate of known) {
    const lower = candidate.toLowerCase();
    const distance = lower.startsWith(typed) || typed.startsWith(lower) ? 1 : editDistance(typed, lower);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Lists every key of the options interface `T`, checked by the compiler both ways: a key that `T` lacks, or a key of
 * `T` left out, fails the build, so the list of known options cannot drift from the interface.
 */
export function optionKeys<T extends object>() {
  return <const K extends readonly (keyof T & string)[]>(
    ...keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : ['missing', Exclude<keyof T, K[number]>])
  ): readonly string[] => keys;
}
