import pg from "pg";
import { Dependency } from "./dependency.js";
import { MIGRATIONS_TABLE, pending } from "./migrations.js";
import { toKey, type KeyRow } from "./key-row.js";
import { isUnavailable } from "./pg-errors.js";
import { PgLedger } from "./pg-ledger.js";
import type { AccountStore, CalibrationRecord, KeyRecord, UsageRow } from "./store.js";

export interface PgOptions {
  url: string;
  /** Connections in the pool of this process. */
  poolSize: number;
  /** Connecting, and any one statement, give up after this long (then: 503). */
  timeoutMs: number;
  /** A server listens for key changes and probes the connection; a CLI command does neither. */
  serve: boolean;
}

/** Any number of instances may start at once: the first to take this lock migrates, the others wait for it. */
const MIGRATION_LOCK = 7_310_013;

// int8 columns (limits, tokens, times in ms, counts) as numbers: all stay far below 2^53.
const TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(MIGRATIONS_TABLE);
    const applied = await client.query<{ version: number }>("SELECT version FROM schema_migrations");
    for (const m of pending(applied.rows.map((r) => r.version))) {
      await client.query(m.postgres);
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [m.version, m.name, new Date().toISOString()]);
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Keys and the usage ledger in PostgreSQL, shared by any number of instances. The schema is migrated
 * at open. Keys are cached in memory while a LISTEN connection is up: every change to the keys table
 * notifies (a trigger), and each instance drops its cache on the notification, so a revocation made
 * anywhere is seen within milliseconds. While that connection is down, keys are read from the table
 * on every request (and the probe reconnects it), so a revocation is never missed.
 */
export async function openPgStore(opts: PgOptions): Promise<AccountStore> {
  const config: pg.PoolConfig = {
    connectionString: opts.url,
    connectionTimeoutMillis: opts.timeoutMs,
    query_timeout: opts.timeoutMs,
    statement_timeout: opts.timeoutMs,
    keepAlive: true,
    types: TYPES,
    application_name: "svc",
  };
  const pool = new pg.Pool({ ...config, max: opts.poolSize });
  // An idle connection that breaks is dropped by the pool; the next call reports the outage.
  pool.on("error", () => undefined);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`PostgreSQL at SVC_DATABASE_URL: ${(err as Error).message}`);
  }

  let cache = new Map<string, KeyRecord>();
  /** Bumped whenever the cache is dropped: a read begun before must not fill the new cache. */
  let generation = 0;
  let listener: pg.Client | null = null;
  const dropCache = (): void => {
    cache = new Map();
    generation++;
  };

  const listen = async (): Promise<void> => {
    const client = new pg.Client(config);
    const lost = (): void => {
      if (listener !== client) return;
      listener = null;
      dropCache();
      client.end().catch(() => undefined);
    };
    client.on("error", lost);
    client.on("end", lost);
    client.on("notification", dropCache);
    try {
      await client.connect();
      await client.query("LISTEN svc_keys");
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    // Changes made while nobody listened are not known: start from an empty cache.
    dropCache();
    listener = client;
  };

  const dependency = new Dependency("postgres", async () => {
    await pool.query("SELECT 1");
    if (opts.serve && listener === null) await listen();
    await ledger.compensate();
  });
  const ledger = new PgLedger(pool, dependency, opts.timeoutMs);

  /** A query whose failure to reach PostgreSQL is a 503 (and marks it down). */
  const query = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> => {
    try {
      return (await pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw isUnavailable(err) ? dependency.failed(err) : err;
    }
  };

  if (opts.serve) {
    await listen();
    dependency.watch();
  }

  const calibrationCols = `key_id AS "keyId", name, created_at AS "createdAt", body`;
  return {
    dependency,
    async saveCalibration(rec) {
      await query(
        `INSERT INTO calibrations (key_id, name, created_at, body) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_id, name) DO UPDATE SET created_at = EXCLUDED.created_at, body = EXCLUDED.body`,
        [rec.keyId, rec.name, rec.createdAt, rec.body],
      );
    },
    getCalibration: async (keyId, name) =>
      (await query<CalibrationRecord>(`SELECT ${calibrationCols} FROM calibrations WHERE key_id = $1 AND name = $2`, [keyId, name]))[0] ?? null,
    listCalibrations: (keyId) => query<CalibrationRecord>(`SELECT ${calibrationCols} FROM calibrations WHERE key_id = $1 ORDER BY name`, [keyId]),
    async insertKey(key) {
      await query(
        `INSERT INTO keys (id, name, prefix, hash, created_at, revoked_at, per_minute, per_day, monthly_tokens)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [key.id, key.name, key.prefix, key.hash, key.createdAt, key.revokedAt, key.perMinute, key.perDay, key.monthlyTokens],
      );
    },
    listKeys: async () => (await query<KeyRow>("SELECT * FROM keys ORDER BY created_at, id")).map(toKey),
    async revokeKey(idOrPrefix) {
      const rows = await query<KeyRow>(
        `UPDATE keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 OR prefix = $1 RETURNING *`,
        [idOrPrefix, new Date().toISOString()],
      );
      return rows.length > 0 ? toKey(rows[0]) : null;
    },
    findByPrefix(prefix) {
      const hit = listener !== null ? cache.get(prefix) : undefined;
      if (hit) return hit;
      const gen = generation;
      return query<KeyRow>("SELECT * FROM keys WHERE prefix = $1", [prefix]).then((rows) => {
        if (rows.length === 0) return null;
        const key = toKey(rows[0]);
        if (listener !== null && gen === generation) cache.set(prefix, key);
        return key;
      });
    },
    recordUsage: (rec) => ledger.record(rec),
    async usageBetween(keyId, from, to) {
      const [r] = await query<{ requests: number; tokens: number }>(
        "SELECT COUNT(*) AS requests, COALESCE(SUM(input_tokens), 0)::bigint AS tokens FROM usage WHERE key_id = $1 AND at >= $2 AND at < $3",
        [keyId, from, to],
      );
      return { requests: r.requests, inputTokens: r.tokens };
    },
    report: (from, to, key) =>
      query<UsageRow>(
        `SELECT k.id AS "keyId", k.name AS name, k.prefix AS prefix,
                COUNT(u.request_id) - COALESCE(SUM(u.cached), 0)::bigint AS requests, COALESCE(SUM(u.cached), 0)::bigint AS "cachedRequests",
                COALESCE(SUM(u.input_tokens), 0)::bigint AS "inputTokens"
         FROM keys k LEFT JOIN usage u ON u.key_id = k.id AND u.at >= $1 AND u.at < $2
         WHERE ($3::text IS NULL OR k.id = $3 OR k.prefix = $3)
         GROUP BY k.id ORDER BY k.created_at, k.id`,
        [from, to, key ?? null],
      ),
    countUsage: async () => (await query<{ n: number }>("SELECT COUNT(*) AS n FROM usage"))[0].n,
    async close() {
      dependency.stop();
      await ledger.close();
      await ledger.compensate().catch(() => undefined);
      const l = listener;
      listener = null;
      await l?.end().catch(() => undefined);
      await pool.end();
    },
  };
}
