import { randomUUID } from 'node:crypto';
import type { MockHeaders } from './mock-fault.js';
import type { MockPayoutsRequest } from './mock-payouts-call.js';
import { findPayoutRequestProblems } from './wallet-payout-rules.js';

/**
 * A payout the mock created. The interface does not show the payout record, so this shape is the mock's own: an id,
 * a status, the caller's `request_id` and amount, and when it was created.
 */
export interface MockPayout {
  readonly id: string;
  readonly status: 'pending';
  readonly request_id: string;
  readonly amount: unknown;
  readonly created_at: string;
}

/** The usual answer to a request, before any fault changes it. */
export interface MockAnswer {
  readonly status: number;
  readonly headers: MockHeaders;
  readonly body: unknown;
  /** Whether answering created a payout. */
  readonly committed: boolean;
}

/** What arrived besides the parsed request: its media type, and whether its body was too large to read. */
export interface ArrivedBody {
  readonly contentType: string | undefined;
  readonly tooLarge: boolean;
  /** The body was not JSON (and not empty). */
  readonly notJson: boolean;
}

const JSON_HEADERS: MockHeaders = { 'content-type': 'application/json' };

/**
 * `POST /payouts` as the interface describes it: both credentials checked, a JSON body with every field of the wallet
 * sample; a new `request_id` creates a payout (`201`), a repeated one gets the payout created the first time (`200`).
 * Error bodies are `{ "error": <code> }`, with `problems` naming each invalid field. `GET /payouts/{id}` is the
 * mock's own lookup (the interface has none), for testing a reconcile `lookup`: by the payout's `request_id`, else by
 * its own `id` (`po_…`), the payout (`200`) or `{ "error": "payout_not_found" }` (`404`); an `{id}` that is not valid
 * percent-encoding gets `400 { "error": "invalid_path" }` rather than a "not found" a lookup would read as absent.
 */
export function answerPayoutsRequest(
  request: MockPayoutsRequest,
  arrived: ArrivedBody,
  payouts: Map<string, MockPayout>,
): MockAnswer {
  const refuse = (status: number, body: object, headers: MockHeaders = {}): MockAnswer => ({
    status,
    headers: { ...JSON_HEADERS, ...headers },
    body,
    committed: false,
  });
  const path = request.path.split('?')[0]!;
  const lookup = /^\/payouts\/([^/]+)$/.exec(path);
  if (path !== '/payouts' && !lookup) return refuse(404, { error: 'not_found' });
  const allowed = lookup ? 'GET' : 'POST';
  if (request.method !== allowed) return refuse(405, { error: 'method_not_allowed' }, { allow: allowed });
  const { apiKey, accessToken } = request.credentials;
  if (apiKey !== 'valid') return refuse(401, { error: apiKey === 'missing' ? 'missing_api_key' : 'invalid_api_key' });
  if (accessToken !== 'valid') {
    return refuse(401, { error: accessToken === 'missing' ? 'missing_access_token' : 'invalid_access_token' });
  }
  if (lookup) {
    const id = decodedSegment(lookup[1]!);
    if (id === undefined) {
      return refuse(400, { error: 'invalid_path', problems: ['the id after /payouts/ is not valid percent-encoding'] });
    }
    const found = findPayout(payouts, id);
    if (!found) return refuse(404, { error: 'payout_not_found' });
    return { status: 200, headers: JSON_HEADERS, body: found, committed: false };
  }
  if (!arrived.contentType?.toLowerCase().startsWith('application/json')) {
    return refuse(415, { error: 'unsupported_media_type' });
  }
  if (arrived.tooLarge) return refuse(413, { error: 'payload_too_large' });
  if (arrived.notJson) return refuse(400, { error: 'invalid_json' });
  const problems = findPayoutRequestProblems(request.body);
  if (problems.length > 0) return refuse(400, { error: 'invalid_request', problems });
  const { request_id: requestId, amount } = request.body as { request_id: string; amount: unknown };
  const existing = payouts.get(requestId);
  if (existing) return { status: 200, headers: JSON_HEADERS, body: existing, committed: false };
  const payout: MockPayout = {
    id: `po_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
    status: 'pending',
    request_id: requestId,
    amount,
    created_at: new Date().toISOString(),
  };
  payouts.set(requestId, payout);
  return { status: 201, headers: JSON_HEADERS, body: payout, committed: true };
}

/** A payout by its `request_id` (what a reconcile lookup knows), else by its own `id`; a `request_id` wins a tie. */
function findPayout(payouts: Map<string, MockPayout>, id: string): MockPayout | undefined {
  return payouts.get(id) ?? [...payouts.values()].find((payout) => payout.id === id);
}

/** A path segment decoded, or `undefined` when it is not valid percent-encoding (`%ZZ`, a lone `%`, bad UTF-8). */
function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
