import autocannon from 'autocannon';
import { ACK_BODY, NOTIFICATION_PATH_WITH_TOKEN } from './notification-sample.js';

export const CONNECTIONS = 50;
/** Connections of a steady load, enough for its rate at the latencies measured. */
export const STEADY_CONNECTIONS = 10;

export interface LoadResult {
  readonly requestsPerSecond: number;
  /** Replies received in the run. */
  readonly requests: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly averageMs: number;
  /** Connection errors, timeouts and replies other than the 200 ack. */
  readonly failures: number;
}

/**
 * Posts notifications to 127.0.0.1:`port` from 50 connections for `durationSeconds`.
 * Every scenario builds its body per request through the same hook, so the load generator's cost is equal.
 */
export async function postNotifications(
  port: number,
  durationSeconds: number,
  nextBody: () => string,
  /** A steady load instead of as fast as possible: this many requests per second, over fewer connections. */
  steadyRate?: number,
): Promise<LoadResult> {
  let notAcknowledged = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: steadyRate === undefined ? CONNECTIONS : STEADY_CONNECTIONS,
    ...(steadyRate !== undefined && { overallRate: steadyRate }),
    duration: durationSeconds,
    timeout: 10,
    requests: notificationRequests(nextBody, () => notAcknowledged++),
  });
  return {
    requestsPerSecond: result.requests.total / result.duration,
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    averageMs: result.latency.average,
    failures: result.errors + result.timeouts + notAcknowledged,
  };
}

/**
 * Posts exactly `count` notifications to 127.0.0.1:`port` over `connections` connections, however long the server
 * takes (a server under valgrind answers some 50 times slower), and returns how many were not acknowledged.
 */
export async function postNotificationCount(
  port: number,
  count: number,
  nextBody: () => string,
  connections: number,
): Promise<number> {
  let notAcknowledged = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    amount: count,
    // A garbage collection or a compilation under valgrind can hold one reply for seconds.
    timeout: 120,
    requests: notificationRequests(nextBody, () => notAcknowledged++),
  });
  return result.errors + result.timeouts + notAcknowledged;
}

/** The one request every load sends: a notification with the next body, whose reply must be the ack. */
function notificationRequests(nextBody: () => string, notAcknowledged: () => void): autocannon.Request[] {
  return [
    {
      method: 'POST',
      path: NOTIFICATION_PATH_WITH_TOKEN,
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => ({ ...request, body: nextBody() }),
      onResponse: (status, body) => {
        if (status !== 200 || body !== ACK_BODY) notAcknowledged();
      },
    },
  ];
}
