/** What the ledger reads of a query's result. */
export interface PostgresQueryResult {
  readonly rows: Record<string, unknown>[];
}

/** A connection taken from the pool: node-postgres's `PoolClient`, or anything shaped like it. */
export interface PostgresPoolClient {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  /** node-postgres's query config: with a `name`, the connection prepares the statement on first use. */
  query(config: {
    readonly name?: string;
    readonly text: string;
    readonly values: unknown[];
  }): Promise<PostgresQueryResult>;
  /** Given an error, node-postgres closes the connection rather than reusing it. */
  release(error?: Error | boolean): void;
  /**
   * node-postgres emits a connection's failure (the server stopped mid-statement) on the client it lent; with no
   * listener, that would end the process. The ledger listens while it holds the client: the statement rejects anyway.
   */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * The pool the ledger uses: node-postgres's `Pool` (`new Pool({ connectionString })`), which the app owns, ends on
 * shutdown, and may share with its own queries. Only `connect()` is used, so that each statement of the ledger runs on
 * one connection it can close when the statement outlives its deadline.
 */
export interface PostgresPool {
  connect(): Promise<PostgresPoolClient>;
}
