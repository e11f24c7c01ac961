import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { AccountStore, KeyRecord, UsageRecord, UsageRow } from "./store.js";

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  per_minute: number | null;
  per_day: number | null;
  monthly_tokens: number | null;
}

function toKey(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    hash: r.hash,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    perMinute: r.per_minute,
    perDay: r.per_day,
    monthlyTokens: r.monthly_tokens,
  };
}

/**
 * Keys and the usage ledger in one SQLite file. WAL journal; `synchronous` FULL by default so that a
 * committed usage record survives a process kill and a power loss (set sync "normal" to trade the
 * latter for speed).
 */
export function openSqliteStore(file: string, opts: { sync?: "full" | "normal" } = {}): AccountStore {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${opts.sync === "normal" ? "NORMAL" : "FULL"}`);
  db.pragma("busy_timeout = 5000");
  db.exec(`
    CREATE TABLE IF NOT EXISTS keys (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      prefix TEXT NOT NULL UNIQUE,
      hash TEXT NOT NULL,
      created_at TEXT NOT NULL,
      revoked_at TEXT,
      per_minute INTEGER,
      per_day INTEGER,
      monthly_tokens INTEGER
    );
    CREATE TABLE IF NOT EXISTS usage (
      request_id TEXT PRIMARY KEY,
      key_id TEXT NOT NULL,
      endpoint TEXT NOT NULL,
      model TEXT NOT NULL,
      input_tokens INTEGER NOT NULL,
      at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS usage_key_at ON usage (key_id, at);
  `);
  const insertKey = db.prepare(
    `INSERT INTO keys (id, name, prefix, hash, created_at, revoked_at, per_minute, per_day, monthly_tokens)
     VALUES (@id, @name, @prefix, @hash, @createdAt, @revokedAt, @perMinute, @perDay, @monthlyTokens)`,
  );
  const listKeys = db.prepare("SELECT * FROM keys ORDER BY created_at, id");
  const byPrefix = db.prepare("SELECT * FROM keys WHERE prefix = ?");
  const byIdOrPrefix = db.prepare("SELECT * FROM keys WHERE id = ? OR prefix = ?");
  const revoke = db.prepare("UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL");
  const insertUsage = db.prepare(
    `INSERT INTO usage (request_id, key_id, endpoint, model, input_tokens, at)
     VALUES (@requestId, @keyId, @endpoint, @model, @inputTokens, @at)`,
  );
  const between = db.prepare(
    "SELECT COUNT(*) AS requests, COALESCE(SUM(input_tokens), 0) AS tokens FROM usage WHERE key_id = ? AND at >= ? AND at < ?",
  );
  const report = db.prepare(
    `SELECT k.id AS keyId, k.name AS name, k.prefix AS prefix,
            COUNT(u.request_id) AS requests, COALESCE(SUM(u.input_tokens), 0) AS inputTokens
     FROM keys k LEFT JOIN usage u ON u.key_id = k.id AND u.at >= @from AND u.at < @to
     WHERE (@key IS NULL OR k.id = @key OR k.prefix = @key)
     GROUP BY k.id ORDER BY k.created_at, k.id`,
  );
  const count = db.prepare("SELECT COUNT(*) AS n FROM usage");
  const insertMany = db.transaction((recs: UsageRecord[]) => {
    for (const rec of recs) insertUsage.run(rec);
  });

  // Group commit: records that arrive in the same turn of the event loop share one transaction (one
  // WAL write, and with synchronous FULL one fsync) instead of paying one each; each caller still
  // resumes only after its own record is committed.
  let pending: { rec: UsageRecord; done: (err: Error | null) => void }[] = [];
  const flush = (): void => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    try {
      insertMany(batch.map((p) => p.rec));
      for (const p of batch) p.done(null);
    } catch {
      // One bad record (say, a duplicate request id) must not fail the others: commit them one by one.
      for (const p of batch) {
        try {
          insertUsage.run(p.rec);
          p.done(null);
        } catch (err) {
          p.done(err as Error);
        }
      }
    }
  };

  return {
    insertKey: (key) => void insertKey.run(key),
    listKeys: () => (listKeys.all() as KeyRow[]).map(toKey),
    revokeKey(idOrPrefix) {
      const row = byIdOrPrefix.get(idOrPrefix, idOrPrefix) as KeyRow | undefined;
      if (!row) return null;
      revoke.run(new Date().toISOString(), row.id);
      return toKey(byIdOrPrefix.get(row.id, row.id) as KeyRow);
    },
    findByPrefix(prefix) {
      const row = byPrefix.get(prefix) as KeyRow | undefined;
      return row ? toKey(row) : null;
    },
    recordUsage: (rec: UsageRecord) =>
      new Promise<void>((resolve, reject) => {
        pending.push({ rec, done: (err) => (err ? reject(err) : resolve()) });
        if (pending.length === 1) setImmediate(flush);
      }),
    usageBetween(keyId, from, to) {
      const r = between.get(keyId, from, to) as { requests: number; tokens: number };
      return { requests: r.requests, inputTokens: r.tokens };
    },
    report: (from, to, key) => report.all({ from, to, key: key ?? null }) as UsageRow[],
    countUsage: () => (count.get() as { n: number }).n,
    close: () => {
      flush();
      db.close();
    },
  };
}
