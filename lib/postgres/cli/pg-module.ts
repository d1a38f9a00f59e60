import type { PostgresPool } from '../postgres-pool.js';

/** The parts of node-postgres the commands use. */
export interface PgModule {
  Client: new (config: { connectionString: string }) => PgClient;
  Pool: new (config: { connectionString: string; max: number }) => PostgresPool & {
    on(event: 'error', listener: (error: Error) => void): unknown;
    end(): Promise<void>;
  };
}

/** A connection of node-postgres's `Client`. */
export interface PgClient {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** node-postgres, or `undefined` when it is not installed: it is an optional peer. */
export async function loadPg(): Promise<PgModule | undefined> {
  try {
    const module = (await import('pg')) as unknown as { default?: PgModule } & PgModule;
    return module.default ?? module;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}
