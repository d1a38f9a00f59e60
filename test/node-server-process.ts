import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/** How long an ended process's output may take to be read to its end. */
const OUTPUT_DRAIN_MS = 5_000;

/**
 * A long-running Node process, such as an app server, whose output lines the test reads while it runs; the sibling
 * of `runNodeProcess` for processes that do not end on their own. Stopped with SIGKILL to its PID.
 */
export class NodeServerProcess {
  /** Every complete line printed on stdout so far. */
  readonly lines: string[] = [];
  #stderr = '';
  #partial = '';
  readonly #waiters = new Set<() => void>();
  #closed = false;

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.#partial + chunk).split('\n');
      this.#partial = parts.pop()!;
      this.lines.push(...parts);
      for (const waiter of this.#waiters) waiter();
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
    // 'close', not 'exit': Node can report the exit before the last lines have been read from the pipe.
    child.once('close', () => {
      this.#closed = true;
      for (const waiter of this.#waiters) waiter();
    });
  }

  /** Starts `node <args>` and waits for a stdout line matching `ready`; killed if it does not come in time. */
  static async start(
    args: string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv; ready: RegExp; timeoutMs: number },
  ): Promise<{ process: NodeServerProcess; ready: RegExpMatchArray }> {
    const { cwd, env } = options;
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const started = new NodeServerProcess(child);
    try {
      return { process: started, ready: await started.waitForLine(options.ready, options.timeoutMs) };
    } catch (error) {
      await started.kill();
      throw error;
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** What the process printed on stderr so far, to explain a failure. */
  get stderr(): string {
    return this.#stderr;
  }

  /** The stdout lines matching `pattern`. */
  linesMatching(pattern: RegExp): string[] {
    return this.lines.filter((line) => pattern.test(line));
  }

  /** Resolves with the first stdout line matching `pattern`, printed already or later; fails after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.lines.map((line) => line.match(pattern)).find((found) => found !== null);
        if (match) finish(() => resolve(match));
        else if (this.exited) finish(() => reject(new Error(`exited before printing ${pattern}: ${this.#stderr}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms: ${this.#stderr}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        settle();
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** Whether the process has exited and everything it printed has been read. */
  get exited(): boolean {
    return this.#closed;
  }

  /**
   * Resolves with how the process ended, once it has and its output has been read (that last part bounded by
   * `OUTPUT_DRAIN_MS`); fails after `timeoutMs` if it has not ended, with the state it is in.
   */
  async waitForExit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.#ended) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the process did not exit within ${timeoutMs} ms; its last lines: ${this.#tail()}`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([once(this.child, 'exit'), late]);
      } finally {
        clearTimeout(timer);
      }
    }
    await this.#drained();
    return { code: this.child.exitCode, signal: this.child.signalCode };
  }

  /** SIGKILL to the process's PID, as a crash would; resolves once it has exited and its output is read. */
  async kill(): Promise<void> {
    if (!this.#ended) {
      const exited = once(this.child, 'exit');
      process.kill(this.pid, 'SIGKILL');
      await exited;
    }
    await this.#drained();
  }

  get #ended(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /**
   * Once the process has exited, its pipes close as soon as what it printed has been read ('close'); bounded, should
   * a process it started hold them open.
   */
  async #drained(): Promise<void> {
    if (this.#closed) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      once(this.child, 'close'),
      new Promise((resolve) => (timer = setTimeout(resolve, OUTPUT_DRAIN_MS))),
    ]);
    clearTimeout(timer);
  }

  #tail(): string {
    return JSON.stringify(this.lines.slice(-5)) + (this.#stderr ? ` and on stderr ${this.#stderr.slice(-500)}` : '');
  }
}
