import type { ChildMessage, CommandMessage, CpuSample, MemorySample } from './protocol.js';

export type CommandHandler = (args: unknown) => unknown;

/** What a forked bench process runs: a server (with a port) or a worker that answers commands. */
export interface ChildService {
  readonly port?: number;
  readonly commands?: Readonly<Record<string, CommandHandler>>;
  close(): Promise<void>;
}

/**
 * Starts the service, tells the runner it is ready, answers its commands, and exits cleanly on
 * SIGTERM/SIGINT or when the runner goes away, so no bench process outlives the run.
 */
export async function runChild(start: () => Promise<ChildService>): Promise<void> {
  const service = await start();
  const commands: Record<string, CommandHandler> = { memory: sampleMemory, cpu: sampleCpu, ...service.commands };
  let closing = false;
  const exit = (code: number) => {
    if (closing) return;
    closing = true;
    void service.close().finally(() => process.exit(code));
  };
  process.on('SIGTERM', () => exit(0));
  process.on('SIGINT', () => exit(0));
  process.on('disconnect', () => exit(0));
  process.on('message', (message: CommandMessage) => void answer(commands, message));
  send({ type: 'ready', port: service.port });
}

async function answer(commands: Record<string, CommandHandler>, message: CommandMessage): Promise<void> {
  const handler = commands[message.command];
  try {
    if (!handler) throw new Error(`unknown command "${message.command}"`);
    send({ type: 'reply', id: message.id, result: await handler(message.args) });
  } catch (error) {
    send({ type: 'reply', id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
}

function sampleMemory(): MemorySample {
  // With --expose-gc the heap figure excludes garbage; otherwise it is an upper bound.
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, heapUsedBytes: usage.heapUsed };
}

function sampleCpu(): CpuSample {
  const { user, system } = process.cpuUsage();
  return { cpuMicros: user + system };
}

function send(message: ChildMessage): void {
  process.send?.(message);
}
