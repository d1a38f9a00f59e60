import { escapeControls, printable } from '../../common/printable.js';
import { isJsonObject } from '../../common/json-object.js';
import type { MockPayoutsCall } from '../mock-payouts-api/mock-payouts-call.js';

/** The problems of a 400 are shown up to this length: enough to fix the body, short enough for a terminal. */
const SHOWN_PROBLEMS_CHARS = 300;

/**
 * One line for a request the mock answered: when, method and path, `request_id`, and the answer. Every value from the
 * request goes through `printable()`; credentials are not in the record to begin with.
 */
export function describeCall(call: MockPayoutsCall): string {
  const requestId = call.requestId === undefined ? '' : ` request_id=${printable(call.requestId)}`;
  return `${call.receivedAt.toISOString()} ${printable(call.method)} ${printable(call.path)}${requestId} -> ${describeAnswer(call)}`;
}

function describeAnswer(call: MockPayoutsCall): string {
  if (call.reset) return 'connection reset';
  if (call.status === undefined) return 'no answer: the client closed the connection first';
  const body = call.replyBody;
  if (call.status === 201 && isJsonObject(body)) return `201, created payout ${printable(String(body.id))}`;
  if (call.status === 200 && isJsonObject(body)) return `200, payout ${printable(String(body.id))} already created`;
  if (!isJsonObject(body) || typeof body.error !== 'string') return String(call.status);
  const problems = Array.isArray(body.problems)
    ? `: ${escapeControls(body.problems.join('; '), SHOWN_PROBLEMS_CHARS)}`
    : '';
  return `${call.status} ${printable(body.error)}${problems}`;
}
