import type { MockFault } from './mock-fault.js';
import type { MockPayoutsRequest } from './mock-payouts-call.js';

/** Which requests a rule looks at: the fields given must all be equal, or the function must return true. */
export type MockRequestMatcher =
  | { readonly method?: string; readonly path?: string; readonly requestId?: string }
  | ((request: MockPayoutsRequest) => boolean);

/**
 * When `MockPayoutsApi.fail()` plays its fault. The requests that pass `when` (all of them when it is left out) are
 * counted 1, 2, 3…; the rule fires on those that `nth`, `every` and `probability` let through (all of them when none
 * is given), at most `times` times.
 *
 * - `{ times: 1 }`: the next request only.
 * - `{ when: { requestId: 'po-1' } }`: every request carrying that `request_id`.
 * - `{ nth: 3 }`: the third request, and no other.
 * - `{ every: 20, when: { method: 'POST' } }`: the 20th, 40th, 60th… POST.
 * - `{ probability: 0.05, seed: 7, when: { method: 'POST' } }`: each POST with a chance of 5%, drawn from a generator
 *   seeded with 7, so that a run repeats exactly.
 */
export interface MockFaultRule {
  readonly when?: MockRequestMatcher;
  /** Fires on the nth matching request only (1 is the first). */
  readonly nth?: number;
  /** Fires on every nth matching request: the nth, 2nth, 3nth… */
  readonly every?: number;
  /** The chance, from 0 to 1, that a matching request fires the rule. */
  readonly probability?: number;
  /** Seeds the generator behind `probability` (default 1); the same seed draws the same requests. */
  readonly seed?: number;
  /** The most times the rule fires; no limit when left out. */
  readonly times?: number;
}

/** A rule switched on with `MockPayoutsApi.fail()`: how often it fired, and a way to switch it off. */
export interface MockFaultHandle {
  /** How many requests this rule's fault was played on. */
  readonly fired: number;
  /** Switches the rule off; the requests that come next are not matched against it. */
  remove(): void;
}

const RULE_KEYS = ['when', 'nth', 'every', 'probability', 'seed', 'times'];

/** A rule with its own counters; `MockPayoutsApi` asks each one in the order they were switched on. */
export class ActiveFaultRule implements MockFaultHandle {
  fired = 0;
  #matched = 0;
  readonly #random: () => number;

  constructor(
    private readonly rule: MockFaultRule,
    readonly fault: MockFault,
    readonly remove: () => void,
  ) {
    checkRule(rule);
    this.#random = seededRandom(rule.seed ?? 1);
  }

  /**
   * Counts `request` when it matches, and says whether the rule picks it. Every matching request is counted (and
   * draws from the generator) even when an earlier rule plays its fault, so that "the nth request" means the nth one
   * that arrived.
   */
  picks(request: MockPayoutsRequest): boolean {
    const { when, nth, every, probability, times } = this.rule;
    if (!matches(when, request)) return false;
    const count = ++this.#matched;
    const drawn = probability === undefined || this.#random() < probability;
    const picked = (nth === undefined || count === nth) && (every === undefined || count % every === 0) && drawn;
    return picked && (times === undefined || this.fired < times);
  }
}

function matches(when: MockRequestMatcher | undefined, request: MockPayoutsRequest): boolean {
  if (when === undefined) return true;
  if (typeof when === 'function') return when(request);
  return (
    (when.method === undefined || when.method.toUpperCase() === request.method) &&
    (when.path === undefined || when.path === request.path) &&
    (when.requestId === undefined || when.requestId === request.requestId)
  );
}

function checkRule(rule: MockFaultRule): void {
  const unknown = Object.keys(rule).find((key) => !RULE_KEYS.includes(key));
  if (unknown !== undefined) {
    throw new TypeError(`MockPayoutsApi.fail(): unknown rule field "${unknown}"; expected ${RULE_KEYS.join(', ')}`);
  }
  for (const key of ['nth', 'every', 'times'] as const) {
    const value = rule[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new RangeError(`MockPayoutsApi.fail(): "${key}" must be a whole number of at least 1; got ${value}`);
    }
  }
  const { probability, seed } = rule;
  if (probability !== undefined && !(probability >= 0 && probability <= 1)) {
    throw new RangeError(`MockPayoutsApi.fail(): "probability" must be from 0 to 1; got ${probability}`);
  }
  if (seed !== undefined && !Number.isSafeInteger(seed)) {
    throw new RangeError(`MockPayoutsApi.fail(): "seed" must be a whole number; got ${seed}`);
  }
}

/** Mulberry32: small, fast and plenty for picking requests; the same seed gives the same sequence. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
