import Database from "better-sqlite3";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { UsageLedger } from "./ledger.js";
import { applyPragmas, type Sync } from "./ledger-protocol.js";
import { toKey, type KeyRow } from "./key-row.js";
import { MIGRATIONS_TABLE, pending } from "./migrations.js";
import type { AccountStore, CalibrationRecord, KeyRecord, UsageRecord, UsageRow } from "./store.js";

/** Applies the migrations this file lacks, in one write transaction (a second process opening the file waits for it). */
function migrate(db: Database.Database): void {
  db.exec(MIGRATIONS_TABLE);
  const applied = db.prepare("SELECT version FROM schema_migrations").pluck();
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (const m of pending(applied.all() as number[])) {
      db.exec(m.sqlite);
      record.run(m.version, m.name, new Date().toISOString());
    }
  }).immediate();
}

/** The embedded store: every call returns a plain value. */
export interface SqliteStore extends AccountStore {
  insertKey(key: KeyRecord): void;
  listKeys(): KeyRecord[];
  revokeKey(idOrPrefix: string): KeyRecord | null;
  findByPrefix(prefix: string): KeyRecord | null;
  usageBetween(keyId: string, from: number, to: number): { requests: number; inputTokens: number };
  report(from: number, to: number, key?: string): UsageRow[];
  countUsage(): number;
}

/**
 * Keys and the usage ledger in one SQLite file (pragmas in ledger-protocol.ts). Reads and key changes
 * run on this connection; usage records are written by the ledger worker on a second one, started at
 * once with `startLedger` (a server) or with the first record.
 */
export function openSqliteStore(file: string, opts: { sync?: Sync; startLedger?: boolean } = {}): SqliteStore {
  // Keys (hashed) and usage are the operator's alone: a new folder is 700 and a new file 600 (SQLite
  // gives its -wal and -shm files the database file's mode).
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, "a", 0o600));
  const sync = opts.sync ?? "full";
  const db = new Database(file);
  applyPragmas(db, sync);
  migrate(db);
  const insertKey = db.prepare(
    `INSERT INTO keys (id, name, prefix, hash, created_at, revoked_at, per_minute, per_day, monthly_tokens)
     VALUES (@id, @name, @prefix, @hash, @createdAt, @revokedAt, @perMinute, @perDay, @monthlyTokens)`,
  );
  const listKeys = db.prepare("SELECT * FROM keys ORDER BY created_at, id");
  const byPrefix = db.prepare("SELECT * FROM keys WHERE prefix = ?");
  const byIdOrPrefix = db.prepare("SELECT * FROM keys WHERE id = ? OR prefix = ?");
  const revoke = db.prepare("UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL");
  const keyChanges = db.prepare("SELECT n FROM key_changes").pluck();
  const between = db.prepare(
    "SELECT COUNT(*) AS requests, COALESCE(SUM(input_tokens), 0) AS tokens FROM usage WHERE key_id = ? AND at >= ? AND at < ?",
  );
  const report = db.prepare(
    `SELECT k.id AS keyId, k.name AS name, k.prefix AS prefix,
            COUNT(u.request_id) - COALESCE(SUM(u.cached), 0) AS requests, COALESCE(SUM(u.cached), 0) AS cachedRequests,
            COALESCE(SUM(u.input_tokens), 0) AS inputTokens
     FROM keys k LEFT JOIN usage u ON u.key_id = k.id AND u.at >= @from AND u.at < @to
     WHERE (@key IS NULL OR k.id = @key OR k.prefix = @key)
     GROUP BY k.id ORDER BY k.created_at, k.id`,
  );
  const count = db.prepare("SELECT COUNT(*) AS n FROM usage");
  const saveCalibration = db.prepare(
    "INSERT INTO calibrations (key_id, name, created_at, body) VALUES (@keyId, @name, @createdAt, @body) ON CONFLICT (key_id, name) DO UPDATE SET created_at = excluded.created_at, body = excluded.body",
  );
  const calibrationCols = "key_id AS keyId, name, created_at AS createdAt, body";
  const getCalibration = db.prepare(`SELECT ${calibrationCols} FROM calibrations WHERE key_id = ? AND name = ?`);
  const listCalibrations = db.prepare(`SELECT ${calibrationCols} FROM calibrations WHERE key_id = ? ORDER BY name`);
  const hasRecord = db.prepare("SELECT 1 FROM usage WHERE request_id = ?").pluck();
  const ledger = new UsageLedger({ file, sync }, (ids) => new Set(ids.filter((id) => hasRecord.get(id) !== undefined)));
  if (opts.startLedger) ledger.start();

  // A key lookup is on every request, and keys change rarely but also from other processes (`svc keys
  // revoke`). Triggers count every change to the keys table; the count is read once per event-loop
  // turn and the cached keys are dropped when it moved, so a revocation committed anywhere is seen by
  // the next request read after it, without one query per request.
  let cache = new Map<string, KeyRecord>();
  let seenChanges = -1;
  let checked = false;
  const cachedKeys = (): Map<string, KeyRecord> => {
    if (!checked) {
      checked = true;
      setImmediate(() => (checked = false));
      const n = keyChanges.get() as number;
      if (n !== seenChanges) {
        cache = new Map();
        seenChanges = n;
      }
    }
    return cache;
  };

  return {
    saveCalibration(rec) {
      saveCalibration.run(rec);
    },
    getCalibration: (keyId, name) => (getCalibration.get(keyId, name) as CalibrationRecord | undefined) ?? null,
    listCalibrations: (keyId) => listCalibrations.all(keyId) as CalibrationRecord[],
    insertKey(key) {
      insertKey.run(key);
      checked = false;
    },
    listKeys: () => (listKeys.all() as KeyRow[]).map(toKey),
    revokeKey(idOrPrefix) {
      const row = byIdOrPrefix.get(idOrPrefix, idOrPrefix) as KeyRow | undefined;
      if (!row) return null;
      revoke.run(new Date().toISOString(), row.id);
      checked = false;
      return toKey(byIdOrPrefix.get(row.id, row.id) as KeyRow);
    },
    findByPrefix(prefix) {
      const keys = cachedKeys();
      const hit = keys.get(prefix);
      if (hit) return hit;
      const row = byPrefix.get(prefix) as KeyRow | undefined;
      if (!row) return null;
      const key = toKey(row);
      keys.set(prefix, key);
      return key;
    },
    recordUsage: (rec: UsageRecord) => ledger.record(rec),
    usageBetween(keyId, from, to) {
      const r = between.get(keyId, from, to) as { requests: number; tokens: number };
      return { requests: r.requests, inputTokens: r.tokens };
    },
    report: (from, to, key) => report.all({ from, to, key: key ?? null }) as UsageRow[],
    countUsage: () => (count.get() as { n: number }).n,
    dependency: null,
    async close() {
      try {
        await ledger.close();
      } finally {
        db.close();
      }
    },
  };
}
