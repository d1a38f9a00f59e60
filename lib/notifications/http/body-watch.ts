import { isUtf8 } from 'node:buffer';

/** What the route learns of a body's bytes as they arrive: how many, and whether they are valid UTF-8. */
export interface WatchedBody {
  /** Bytes received. */
  length: number;
  /** Whether they are valid UTF-8 (unknown past the limit, where the body is refused by its size). */
  utf8: boolean;
}

/** What the watch reads of the body stream: Node's readable stream API. */
export interface BodyStreamLike {
  prependListener(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

/**
 * Watches a body stream that the framework is about to read (Fastify's `preParsing` stage), without holding its bytes:
 * it counts them, for a chunked body that has no `Content-Length`, and checks they are valid UTF-8, which the
 * framework's decoding would otherwise turn into U+FFFD unseen. The listener is added with `prependListener`, which,
 * unlike `on('data')`, leaves the stream's flow alone: it sees each chunk as whoever reads the body (Fastify's parser,
 * or a parser of the app's own, in flowing or paused mode) takes it, and neither starts the flow before that reader is
 * there nor stops it. Past `limit` bytes only the count goes on: the body is refused by its size.
 */
export function watchBody(stream: BodyStreamLike, limit: number): WatchedBody {
  const watched: WatchedBody = { length: 0, utf8: true };
  // The bytes of a character cut at the end of a chunk, checked with the next one.
  let carried: Buffer | undefined;
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    watched.length += bytes.length;
    if (!watched.utf8 || watched.length > limit) return;
    const data = carried === undefined ? bytes : Buffer.concat([carried, bytes]);
    const end = completeLength(data);
    // The usual chunk ends on a whole character: checked as it is, with no view of it allocated.
    if (end === data.length) {
      watched.utf8 = isUtf8(data);
      carried = undefined;
      return;
    }
    watched.utf8 = isUtf8(data.subarray(0, end));
    carried = Buffer.from(data.subarray(end));
  };
  stream.prependListener('data', onData);
  stream.on('end', () => {
    if (carried !== undefined) watched.utf8 = false;
  });
  return watched;
}

/**
 * The length of `data` without a UTF-8 sequence its last bytes start but do not finish (at most 3 bytes are left
 * out). Bytes that could never be valid are kept, for `isUtf8` to refuse.
 */
function completeLength(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back++) {
    const byte = data[data.length - back]!;
    if (byte < 0x80) return data.length;
    if (byte >= 0xc0) {
      const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return needed > back ? data.length - back : data.length;
    }
  }
  return data.length;
}
