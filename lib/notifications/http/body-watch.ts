import { isUtf8 } from 'node:buffer';

/** What the watch reads of the body stream: Node's readable stream API. */
export interface BodyStreamLike {
  prependListener(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
}

/**
 * What the route learns of a body's bytes as they arrive: how many, and whether they are valid UTF-8. The chunks are
 * kept (the framework's parser holds them too until the body is parsed, which is when the route asks), so that they
 * are checked once, as a whole, only when the route gets that far; past the limit only the count goes on.
 */
export class WatchedBody {
  /** Bytes received. */
  length = 0;
  /** The chunks received, while within the limit: one, the usual case, or several. */
  #chunks: Buffer | Buffer[] | undefined;
  #utf8: boolean | undefined;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.length += bytes.length;
    const chunks = this.#chunks;
    if (this.length > this.limit) this.#chunks = undefined;
    else if (chunks === undefined) this.#chunks = bytes;
    else if (Array.isArray(chunks)) chunks.push(bytes);
    else this.#chunks = [chunks, bytes];
  }

  /**
   * Whether the bytes received are valid UTF-8, a character cut short at the end included; `true` past the limit,
   * where the body is refused by its size. Checked when first asked, once the body is read; the chunks are let go of
   * then.
   */
  get utf8(): boolean {
    if (this.#utf8 === undefined) {
      const chunks = this.#chunks;
      this.#chunks = undefined;
      this.#utf8 = chunks === undefined || isUtf8(Array.isArray(chunks) ? Buffer.concat(chunks) : chunks);
    }
    return this.#utf8;
  }
}

/**
 * Watches a body stream that the framework is about to read (Fastify's `preParsing` stage): it counts the bytes, for
 * a chunked body that has no `Content-Length`, and keeps them to check that they are valid UTF-8, which the
 * framework's decoding would otherwise turn into U+FFFD unseen. The listener is added with `prependListener`, which,
 * unlike `on('data')`, leaves the stream's flow alone: it sees each chunk as whoever reads the body (Fastify's parser,
 * or a parser of the app's own, in flowing or paused mode) takes it, and neither starts the flow before that reader is
 * there nor stops it. One listener, and no work per chunk but keeping it: the check runs once, on the whole body.
 */
export function watchBody(stream: BodyStreamLike, limit: number): WatchedBody {
  const watched = new WatchedBody(limit);
  stream.prependListener('data', (chunk) => watched.add(chunk));
  return watched;
}

/** The bytes of a body counted as they arrive; nothing else is kept (see `countBody`). */
export interface CountedBody {
  readonly length: number;
}

/**
 * Counts a body stream's bytes as whoever reads it takes them, leaving its flow alone like `watchBody`, with no work
 * per chunk but an addition: for a chunked body on Express, whose parser reads it before any route.
 */
export function countBody(stream: BodyStreamLike): CountedBody {
  const counted = { length: 0 };
  stream.prependListener('data', (chunk) => {
    counted.length += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
  });
  return counted;
}
