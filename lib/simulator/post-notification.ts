import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { NOT_CONNECTED_ERROR_CODES } from '../common/network-error-codes.js';

/** Reply bodies are kept up to this size; a receiver's reply should be a few bytes. */
const MAX_REPLY_BYTES = 64 * 1024;

export interface NotificationRequest {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** Why no reply arrived: the host could not be reached, it did not reply in time, or the connection broke. */
export interface NoReplyError {
  kind: 'unreachable' | 'timeout' | 'network';
  message: string;
}

export type PostOutcome = { status: number; body: string } | { error: NoReplyError };

/**
 * Sends one notification on a fresh connection (no keep-alive, like a sender that retries minutes later)
 * and resolves with the reply or the reason there was none; it never rejects.
 */
export function postNotification(url: URL, request: NotificationRequest): Promise<PostOutcome> {
  return new Promise((resolve) => {
    const signal = AbortSignal.timeout(request.timeoutMs);
    const noReply = (error: Error & { code?: string }): void => {
      resolve({ error: describeNoReply(error, signal, request.timeoutMs) });
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(
      url,
      {
        method: 'POST',
        agent: false,
        signal,
        headers: { ...request.headers, 'content-length': String(request.body.byteLength) },
      },
      (reply) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        reply.on('data', (chunk: Buffer) => {
          if (kept < MAX_REPLY_BYTES) {
            chunks.push(chunk);
            kept += chunk.byteLength;
          }
        });
        reply.on('error', noReply);
        reply.on('end', () => {
          const body = Buffer.concat(chunks).subarray(0, MAX_REPLY_BYTES).toString('utf8');
          resolve({ status: reply.statusCode ?? 0, body });
        });
      },
    );
    outgoing.on('error', noReply);
    outgoing.end(request.body);
  });
}

function describeNoReply(error: Error & { code?: string }, signal: AbortSignal, timeoutMs: number): NoReplyError {
  if (signal.aborted) {
    return { kind: 'timeout', message: `no complete reply within ${timeoutMs} ms` };
  }
  if (error.code !== undefined && NOT_CONNECTED_ERROR_CODES.has(error.code)) {
    return { kind: 'unreachable', message: `cannot reach the host (${error.code})` };
  }
  return { kind: 'network', message: `connection failed: ${error.message}` };
}
