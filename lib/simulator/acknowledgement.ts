const EXPECTED = 'expected status 200 with the JSON body {"ResultCode":0}';

/**
 * Why a receiver's reply does not acknowledge a notification, or `undefined` when it does:
 * the spec counts only status 200 with a JSON body whose `ResultCode` is the integer 0.
 */
export function findAcknowledgementFailure(status: number, body: string): string | undefined {
  if (status !== 200) {
    return `replied with status ${status}; ${EXPECTED}`;
  }
  let reply: unknown;
  try {
    reply = JSON.parse(body);
  } catch {
    return `replied with a body that is not JSON; ${EXPECTED}`;
  }
  if (reply === null || typeof reply !== 'object' || Array.isArray(reply) || !('ResultCode' in reply)) {
    return `replied without a ResultCode; ${EXPECTED}`;
  }
  if (reply.ResultCode !== 0) {
    return `replied with ResultCode ${JSON.stringify(reply.ResultCode)}; ${EXPECTED}`;
  }
  return undefined;
}
