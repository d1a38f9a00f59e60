import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { watchBody } from '../../lib/notifications/http/body-watch.js';

/** Writes `chunks` into a fresh stream that `watchBody` watches, and reads it as `mode` says, to its end. */
async function watched(chunks: Buffer[], mode: 'flowing' | 'paused', limit = 1_000) {
  const stream = new PassThrough();
  const watch = watchBody(stream, limit);
  // The watch neither starts the flow nor pauses it: the body's reader decides.
  expect(stream.readableFlowing).toBeNull();
  const read: Buffer[] = [];
  if (mode === 'flowing') stream.on('data', (chunk: Buffer) => read.push(chunk));
  else
    stream.on('readable', () => {
      for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null)
        read.push(chunk);
    });
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await once(stream, 'end');
  expect(Buffer.concat(read)).toEqual(Buffer.concat(chunks));
  return { length: watch.length, utf8: watch.utf8 };
}

const euro = Buffer.from('€'); // 3 bytes
const emoji = Buffer.from('😀'); // 4 bytes

describe('watchBody', () => {
  it.each(['flowing', 'paused'] as const)(
    'counts every byte and keeps a character cut between chunks (%s)',
    async (mode) => {
      const chunks = [
        Buffer.from('{"a":"x'),
        euro.subarray(0, 1),
        Buffer.concat([euro.subarray(1), emoji.subarray(0, 2)]),
        Buffer.concat([emoji.subarray(2), Buffer.from('"}')]),
      ];
      const watch = await watched(chunks, mode);
      expect(watch).toEqual({ length: Buffer.concat(chunks).length, utf8: true });
    },
  );

  it.each([
    ['a stray continuation byte', [Buffer.from([0x7b, 0x80, 0x7d])]],
    ['a lead byte without its continuation', [Buffer.from([0x22, 0xc3]), Buffer.from([0x28, 0x22])]],
    ['a character cut short at the end', [Buffer.from('"x'), emoji.subarray(0, 3)]],
    ['0xFF', [Buffer.from([0x22, 0xff, 0x22])]],
    ['an over-long encoding', [Buffer.from([0xc0, 0xaf])]],
  ])('sees %s', async (_case, chunks) => {
    expect((await watched(chunks, 'flowing')).utf8).toBe(false);
  });

  it.each(['flowing', 'paused'] as const)(
    'checks chunks that end on a whole character as they are, one after another (%s)',
    async (mode) => {
      const chunks = [Buffer.from('{"a":"€'), Buffer.from('","b":"😀'), Buffer.from('"}')];
      expect(await watched(chunks, mode)).toEqual({ length: Buffer.concat(chunks).length, utf8: true });
    },
  );

  it('keeps a whole chunk that is not UTF-8 refused when valid chunks follow it', async () => {
    const chunks = [Buffer.from('{"a":"€"'), Buffer.from([0x2c, 0xff, 0x2c]), Buffer.from('"b":"😀"}')];
    expect(await watched(chunks, 'flowing')).toEqual({ length: Buffer.concat(chunks).length, utf8: false });
  });

  it('only counts past the limit', async () => {
    const watch = await watched([Buffer.alloc(600, 0x20), Buffer.alloc(600, 0x20)], 'flowing', 1_000);
    expect(watch.length).toBe(1_200);
  });

  it('lets go of the chunks past the limit, where the body is refused by its size, and checks nothing', async () => {
    const watch = await watched([Buffer.from([0xff]), Buffer.alloc(1_200, 0x20)], 'flowing', 1_000);
    expect(watch).toEqual({ length: 1_201, utf8: true });
  });

  it('checks a body once, as a whole, and keeps its verdict', async () => {
    const stream = new PassThrough();
    const watch = watchBody(stream, 1_000);
    stream.on('data', () => undefined);
    stream.end(Buffer.from([0x22, 0xff, 0x22]));
    await once(stream, 'end');
    expect(watch.utf8).toBe(false);
    expect(watch.utf8).toBe(false);
    expect(watch.length).toBe(3);
  });
});
