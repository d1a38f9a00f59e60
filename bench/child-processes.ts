import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ReadyMessage, ReplyMessage } from './protocol.js';

/** Generous: a Nest app booting on a loaded 2-CPU machine can take many seconds. */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;

/** How a child is started, besides its script and arguments. */
export interface StartOptions {
  /** Node's own options, before the script. */
  readonly execArgv?: readonly string[];
  /** A program that runs Node (`valgrind`, with Node's path first in `execArgv`) instead of Node itself. */
  readonly execPath?: string;
  /** How long it may take to report ready; a child under valgrind boots some 50 times slower. */
  readonly readyTimeoutMs?: number;
}

/** Every child not yet stopped, so an error or Ctrl-C stops each of them by its own PID. */
const running = new Set<BenchChild>();

/** A forked bench process (server or worker), addressed by its PID. */
export class BenchChild {
  #nextId = 0;
  #port: number | undefined;
  readonly #pending = new Map<number, (reply: ReplyMessage) => void>();
  readonly #ready: Promise<ReadyMessage>;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly pid: number,
  ) {
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'reply') this.#pending.get(message.id)?.(message);
    });
    this.#ready = new Promise((resolve, reject) => {
      child.on('message', (message: ChildMessage) => message.type === 'ready' && resolve(message));
      child.once('exit', (code) => reject(new Error(`${name}: exited with code ${code} before it was ready`)));
    });
  }

  /**
   * Forks `script` (relative to this file, in `bench/dist`) and resolves once it reports ready.
   * The child's stdout and stderr go to the runner's stderr, keeping the runner's stdout for results.
   */
  static async start(
    name: string,
    script: string,
    args: string[] = [],
    { execArgv = [], execPath, readyTimeoutMs = READY_TIMEOUT_MS }: StartOptions = {},
  ): Promise<BenchChild> {
    const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
      execArgv: [...execArgv],
      ...(execPath !== undefined && { execPath }),
      stdio: ['ignore', 2, 2, 'ipc'],
    });
    if (child.pid === undefined) throw new Error(`${name}: could not be started`);
    const started = new BenchChild(name, child, child.pid);
    running.add(started);
    try {
      started.#port = (await withTimeout(started.#ready, readyTimeoutMs, `${name}: not ready`)).port;
      return started;
    } catch (error) {
      await started.stop();
      throw error;
    }
  }

  get port(): number {
    if (this.#port === undefined) throw new Error(`${this.name} does not listen on a port`);
    return this.#port;
  }

  /** Runs a command in the child and returns its result, bounded by `timeoutMs`. */
  async call<T>(command: string, args?: unknown, timeoutMs = 30_000): Promise<T> {
    const id = this.#nextId++;
    const reply = new Promise<ReplyMessage>((resolve) => this.#pending.set(id, resolve));
    this.child.send({ type: 'command', id, command, args });
    try {
      const { result, error } = await withTimeout(reply, timeoutMs, `${this.name}: "${command}" got no reply`);
      if (error !== undefined) throw new Error(`${this.name}: ${command} failed: ${error}`);
      return result as T;
    } finally {
      this.#pending.delete(id);
    }
  }

  /** SIGTERM to this child's PID, then SIGKILL if it has not exited in time. */
  async stop(): Promise<void> {
    running.delete(this);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    killPid(this.pid, 'SIGTERM');
    try {
      await withTimeout(exited, STOP_TIMEOUT_MS, `${this.name}: did not stop`);
    } catch {
      killPid(this.pid, 'SIGKILL');
    }
  }
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop()));
}

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already exited.
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
