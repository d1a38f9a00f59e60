/** Messages between the bench runner and the processes it forks (servers and workers), over the IPC channel. */

/** Sent once by a child when it is ready; `port` is set when the child listens on one. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly port?: number;
}

/** The runner asks a child to run a named command. */
export interface CommandMessage {
  readonly type: 'command';
  readonly id: number;
  readonly command: string;
  readonly args?: unknown;
}

export interface ReplyMessage {
  readonly type: 'reply';
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

export type ChildMessage = ReadyMessage | ReplyMessage;

/** Reply of the `memory` command every child answers. */
export interface MemorySample {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

/** Reply of the `delays` command of the package server: receipt by the route to the handler's start, per notification. */
export interface HandlerDelays {
  readonly delaysMs: readonly number[];
}

/** Reply of the `cpu` command every child answers: user + system CPU time of the process so far. */
export interface CpuSample {
  readonly cpuMicros: number;
}
