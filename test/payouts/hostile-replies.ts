import { setTimeout as sleep } from 'node:timers/promises';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { Socket } from 'node:net';
import type { StubReply } from './payouts-api-stub.js';

/** Where a reply's connection is reset (TCP RST): before any byte, inside the head, after it, or inside the body. */
export type ResetStage = 'before-head' | 'mid-head' | 'after-head' | 'mid-body';

/** A reply written byte for byte by a payouts API that misbehaves. */
export interface HostilePlan {
  status: number;
  headers?: Record<string, string>;
  /** The body bytes as sent (already compressed when `headers` name a content encoding). */
  body?: Buffer | string;
  /** Reset the connection at this stage instead of finishing the reply. */
  reset?: ResetStage;
  /** Write the reply in pieces of `bytes`, pausing `everyMs` between them, from its head on or only its body. */
  drip?: { bytes: number; everyMs: number; from: 'head' | 'body' };
  /** After the body, keep sending `endless` bytes of filler (chunked) until the client goes away. */
  endless?: boolean;
}

/** What became of each scripted reply, for assertions: did the client leave before the stub was done? */
export interface HostileLog {
  /** Replies the stub finished writing. */
  finished: number;
  /** Replies cut short because the client closed the connection. */
  abandoned: number;
}

/** A stop for `endless` bodies, so a client that never stops reading cannot exhaust the test machine. */
const ENDLESS_LIMIT_BYTES = 64 * 1024 * 1024;
const FILLER = Buffer.alloc(64 * 1024, 'x');

/** A stub reply that plays `plan` on the raw socket; `log` counts how each one ended. */
export function hostileReply(plan: HostilePlan, log?: HostileLog): StubReply {
  return {
    script: async (socket) => {
      const finished = await play(plan, socket);
      if (log && finished) log.finished++;
      if (log && !finished) log.abandoned++;
    },
  };
}

/** Plays the plan; false when the client closed the connection first. */
async function play(plan: HostilePlan, socket: Socket): Promise<boolean> {
  const body = Buffer.from(plan.body ?? '');
  const framing = plan.endless ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) };
  const head = Buffer.from(
    `HTTP/1.1 ${plan.status} Hostile\r\n` +
      Object.entries({ 'content-type': 'application/json', ...plan.headers, ...framing, connection: 'close' })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      '\r\n',
  );
  const headDrip = plan.drip?.from === 'head' ? plan.drip : undefined;
  if (plan.reset === 'before-head') return reset(socket);
  if (plan.reset === 'mid-head') {
    return (await write(socket, head.subarray(0, head.length >> 1), headDrip)) && (await reset(socket));
  }
  if (!(await write(socket, head, headDrip))) return false;
  if (plan.reset === 'after-head') return reset(socket);
  if (plan.endless) return writeEndless(socket, body);
  if (plan.reset === 'mid-body') {
    return (await write(socket, body.subarray(0, body.length >> 1), plan.drip)) && (await reset(socket));
  }
  if (!(await write(socket, body, plan.drip))) return false;
  socket.end();
  return true;
}

/** Writes `bytes`, in drips if asked, honouring backpressure; false once the client has gone. */
async function write(socket: Socket, bytes: Buffer, drip: HostilePlan['drip']): Promise<boolean> {
  const step = drip?.bytes ?? Math.max(bytes.length, 1);
  for (let offset = 0; offset < bytes.length; offset += step) {
    if (socket.destroyed || socket.writableEnded) return false;
    if (!socket.write(bytes.subarray(offset, offset + step))) await drained(socket);
    if (drip) await sleep(drip.everyMs);
  }
  return !socket.destroyed;
}

async function writeEndless(socket: Socket, body: Buffer): Promise<boolean> {
  const chunk = (bytes: Buffer) =>
    Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
  if (body.length > 0 && !(await write(socket, chunk(body), undefined))) return false;
  for (let sent = 0; sent < ENDLESS_LIMIT_BYTES; sent += FILLER.length) {
    if (!(await write(socket, chunk(FILLER), undefined))) return false;
  }
  socket.end('0\r\n\r\n');
  return true;
}

function drained(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done).off('close', done);
      resolve();
    };
    socket.on('drain', done).on('close', done);
  });
}

/** Resets the connection once what was written has left: a reset discards data still queued for sending. */
async function reset(socket: Socket): Promise<true> {
  if (socket.bytesWritten > 0 && !socket.destroyed) {
    await new Promise<void>((resolve) => socket.write('', () => resolve()));
    await sleep(10);
  }
  if (!socket.destroyed) socket.resetAndDestroy();
  return true;
}

/** A content encoding the client must decode, with the function that produces it. */
export const ENCODINGS = {
  gzip: (bytes: Buffer) => gzipSync(bytes),
  deflate: (bytes: Buffer) => deflateSync(bytes),
  br: (bytes: Buffer) => brotliCompressSync(bytes),
} as const;
export type Encoding = keyof typeof ENCODINGS;

/** `size` bytes of zeros compressed with `encoding`: a few KiB on the wire, `size` once decoded. */
export function compressionBomb(encoding: Encoding, size: number): { headers: Record<string, string>; body: Buffer } {
  return { headers: { 'content-encoding': encoding }, body: ENCODINGS[encoding](Buffer.alloc(size)) };
}
