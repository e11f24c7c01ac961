/**
 * The schema of keys and usage as versioned migrations, one list for both stores so that they evolve
 * the same way: each step has its SQLite and its PostgreSQL text, and a store applies, at open, the
 * steps whose version is not yet in its `schema_migrations` table, each in the transaction that
 * records it. Steps are never edited once released; a change is a new step at the end.
 *
 * Version 1 is the schema SQLite files had before migrations existed, written with IF NOT EXISTS so
 * that such a file takes it as already applied.
 */
export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}

/** The keys and usage tables of version 1 in either dialect; `int` is the type of limits, tokens and times. */
const keysAndUsage = (int: string): string => `
      CREATE TABLE IF NOT EXISTS keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        per_minute ${int},
        per_day ${int},
        monthly_tokens ${int}
      );
      CREATE TABLE IF NOT EXISTS usage (
        request_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens ${int} NOT NULL,
        at ${int} NOT NULL
      );
      CREATE INDEX IF NOT EXISTS usage_key_at ON usage (key_id, at);`;

/** Version 3: the same text in both dialects. */
const CALIBRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS calibrations (
        key_id TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (key_id, name)
      );`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "keys and usage",
    // Every change to keys, by the CLI or by hand, is counted (SQLite) or notified (PostgreSQL), so
    // that servers drop their key cache.
    sqlite: `${keysAndUsage("INTEGER")}
      CREATE TABLE IF NOT EXISTS key_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
      INSERT OR IGNORE INTO key_changes (id, n) VALUES (1, 0);
      CREATE TRIGGER IF NOT EXISTS key_inserted AFTER INSERT ON keys BEGIN UPDATE key_changes SET n = n + 1; END;
      CREATE TRIGGER IF NOT EXISTS key_updated AFTER UPDATE ON keys BEGIN UPDATE key_changes SET n = n + 1; END;
      CREATE TRIGGER IF NOT EXISTS key_deleted AFTER DELETE ON keys BEGIN UPDATE key_changes SET n = n + 1; END;`,
    // BIGINT: a monthly quota may pass 2^31 (the store reads int8 as a number).
    postgres: `${keysAndUsage("BIGINT")}
      CREATE OR REPLACE FUNCTION svc_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify('svc_keys', ''); RETURN NULL; END $$;
      DROP TRIGGER IF EXISTS keys_changed ON keys;
      CREATE TRIGGER keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON keys
        FOR EACH STATEMENT EXECUTE FUNCTION svc_keys_changed();`,
  },
  {
    version: 2,
    name: "usage records of answers replayed from the cache",
    // 1 for a request answered from the retry cache (billed 0 tokens), 0 otherwise.
    sqlite: "ALTER TABLE usage ADD COLUMN cached INTEGER NOT NULL DEFAULT 0;",
    postgres: "ALTER TABLE usage ADD COLUMN IF NOT EXISTS cached SMALLINT NOT NULL DEFAULT 0;",
  },
  {
    version: 3,
    name: "calibrations fitted by a key from its own labeled examples",
    // body: the fitted calibration and its report as JSON (src/calibration/fit.ts).
    sqlite: CALIBRATIONS_TABLE,
    postgres: CALIBRATIONS_TABLE,
  },
];

export const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/** The steps not yet applied, in order. */
export function pending(applied: Iterable<number>): Migration[] {
  const done = new Set(applied);
  return MIGRATIONS.filter((m) => !done.has(m.version));
}

