import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Sync } from "./accounts/ledger-protocol.js";
import type { AdmissionLimits } from "./accounts/admission.js";
import type { KeyLimits } from "./accounts/store.js";
import type { LogFormat } from "./http/server.js";

/** Server settings: environment variables win over the config file, which wins over the defaults. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Server-wide default limits per key (null or 0 = unlimited). */
  limits: KeyLimits;
  /** Question-option pairs admitted and not yet finished, per key and in all (0 = no bound). */
  admission: AdmissionLimits;
  /** Open connections at most. */
  maxConnections: number;
  /** Inference worker threads (0 = the engine's own default). */
  workers: number;
  bodyTimeoutMs: number;
  /** On SIGTERM/SIGINT, requests still running after this long are answered 503. */
  shutdownGraceMs: number;
  dbSync: Sync;
  log: LogFormat;
  /** Where GET /metrics listens (a port of its own), or null for no metrics. */
  metrics: { host: string; port: number } | null;
  bootstrapKey: string | null;
  /** Retries billed once: answers replayed for this long (ms; 0 = off, an Idempotency-Key still works), at most this many kept in memory. */
  cache: { windowMs: number; entries: number };
  /** Shared state for several instances (docs/deploy.md): keys and usage in PostgreSQL, limit counters in Redis. */
  shared: SharedConfig;
}

export interface SharedConfig {
  /** postgres://... or null for the embedded SQLite file. */
  databaseUrl: string | null;
  /** redis://... or null for counters in this process (needs databaseUrl). */
  redisUrl: string | null;
  pgPoolSize: number;
  pgTimeoutMs: number;
  redisTimeoutMs: number;
  redisPrefix: string;
}

export const DEFAULTS = {
  host: "127.0.0.1",
  port: 8080,
  perMinute: 600,
  perDay: 0,
  monthlyTokens: 0,
  workers: 0,
  bodyTimeoutMs: 10_000,
  shutdownGraceMs: 10_000,
  // One largest valid request (64 questions x 255 options = 16,320 pairs) per key at a time, and
  // about two of them in all: about a minute and a half of work for the built-in model on 2 cores
  // (~350 pairs/s, bench:model), and ~450 MB of memory at most (bench/README.md, overload).
  maxPairsPerKey: 16_384,
  maxPairs: 32_768,
  maxConnections: 1024,
  cacheWindowMs: 600_000,
  cacheEntries: 10_000,
  pgPoolSize: 10,
  pgTimeoutMs: 5000,
  redisTimeoutMs: 1000,
  redisPrefix: "svc:",
} as const;

type FileConfig = Partial<{
  host: string;
  port: number;
  per_minute: number;
  per_day: number;
  monthly_tokens: number;
  workers: number;
  body_timeout_ms: number;
  shutdown_grace_ms: number;
  max_pairs_per_key: number;
  max_pairs: number;
  max_connections: number;
  db_sync: Sync;
  log: boolean | "json";
  metrics_host: string;
  metrics_port: number;
  database_url: string;
  redis_url: string;
  pg_pool_size: number;
  pg_timeout_ms: number;
  redis_timeout_ms: number;
  redis_prefix: string;
  cache_window_ms: number;
  cache_entries: number;
}>;

function int(name: string, value: string | number | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number >= 0, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * The data folder: SVC_DATA_DIR, else the per-user $XDG_DATA_HOME/svc (~/.local/share/svc), so that
 * every command finds the same keys whatever folder it is run from.
 */
function defaultDataDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "svc");
}

/** Reads SVC_DATA_DIR, HOST, PORT, SVC_PER_MINUTE, SVC_PER_DAY, SVC_MONTHLY_TOKENS, SVC_WORKERS, ... and SVC_CONFIG. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.SVC_DATA_DIR || defaultDataDir(env));
  const file = env.SVC_CONFIG ? resolve(env.SVC_CONFIG) : join(dataDir, "config.json");
  let fc: FileConfig = {};
  if (existsSync(file)) {
    try {
      fc = JSON.parse(readFileSync(file, "utf8")) as FileConfig;
    } catch (err) {
      throw new Error(`cannot read config file ${file}: ${(err as Error).message}`);
    }
  } else if (env.SVC_CONFIG) {
    throw new Error(`config file ${file} does not exist`);
  }
  const metricsEnv = env.SVC_METRICS_PORT ?? fc.metrics_port;
  const metricsPort = metricsEnv === undefined || metricsEnv === "" ? null : int("SVC_METRICS_PORT", metricsEnv, 0);
  const sync = env.SVC_DB_SYNC || fc.db_sync || "full";
  if (sync !== "full" && sync !== "normal") throw new Error(`SVC_DB_SYNC must be full or normal, got ${sync}`);
  return {
    host: env.HOST || fc.host || DEFAULTS.host,
    port: int("PORT", env.PORT ?? fc.port, DEFAULTS.port),
    dataDir,
    cache: {
      windowMs: int("SVC_CACHE_WINDOW_MS", env.SVC_CACHE_WINDOW_MS ?? fc.cache_window_ms, DEFAULTS.cacheWindowMs),
      entries: int("SVC_CACHE_ENTRIES", env.SVC_CACHE_ENTRIES ?? fc.cache_entries, DEFAULTS.cacheEntries),
    },
    limits: {
      perMinute: int("SVC_PER_MINUTE", env.SVC_PER_MINUTE ?? fc.per_minute, DEFAULTS.perMinute) || null,
      perDay: int("SVC_PER_DAY", env.SVC_PER_DAY ?? fc.per_day, DEFAULTS.perDay) || null,
      monthlyTokens: int("SVC_MONTHLY_TOKENS", env.SVC_MONTHLY_TOKENS ?? fc.monthly_tokens, DEFAULTS.monthlyTokens) || null,
    },
    admission: {
      perKey: int("SVC_MAX_PAIRS_PER_KEY", env.SVC_MAX_PAIRS_PER_KEY ?? fc.max_pairs_per_key, DEFAULTS.maxPairsPerKey),
      total: int("SVC_MAX_PAIRS", env.SVC_MAX_PAIRS ?? fc.max_pairs, DEFAULTS.maxPairs),
    },
    maxConnections: int("SVC_MAX_CONNECTIONS", env.SVC_MAX_CONNECTIONS ?? fc.max_connections, DEFAULTS.maxConnections) || DEFAULTS.maxConnections,
    workers: int("SVC_WORKERS", env.SVC_WORKERS ?? fc.workers, DEFAULTS.workers),
    bodyTimeoutMs: int("SVC_BODY_TIMEOUT_MS", env.SVC_BODY_TIMEOUT_MS ?? fc.body_timeout_ms, DEFAULTS.bodyTimeoutMs) || DEFAULTS.bodyTimeoutMs,
    shutdownGraceMs: int("SVC_SHUTDOWN_GRACE_MS", env.SVC_SHUTDOWN_GRACE_MS ?? fc.shutdown_grace_ms, DEFAULTS.shutdownGraceMs),
    dbSync: sync,
    log: logFormat(env.SVC_LOG ?? fc.log),
    metrics: metricsPort === null ? null : { host: env.SVC_METRICS_HOST || fc.metrics_host || DEFAULTS.host, port: metricsPort },
    bootstrapKey: env.SVC_BOOTSTRAP_KEY || null,
    shared: sharedConfig(env, fc),
  };
}

/** SVC_LOG: off (0, off, false), json, or text lines (anything else, and the default). */
function logFormat(value: string | boolean | undefined): LogFormat {
  if (value === undefined || value === true) return "text";
  if (value === false || value === "0" || value === "off" || value === "false") return "off";
  return value === "json" ? "json" : "text";
}

export function dbPath(config: Config): string {
  return join(config.dataDir, "svc.sqlite");
}

function sharedConfig(env: NodeJS.ProcessEnv, fc: FileConfig): SharedConfig {
  const databaseUrl = env.SVC_DATABASE_URL || fc.database_url || null;
  const redisUrl = env.SVC_REDIS_URL || fc.redis_url || null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error("SVC_DATABASE_URL must start with postgres:// or postgresql://");
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) throw new Error("SVC_REDIS_URL must start with redis:// or rediss://");
  // The counters are rebuilt from the ledger when Redis loses them: that ledger must be the shared one.
  if (redisUrl !== null && databaseUrl === null) throw new Error("SVC_REDIS_URL needs SVC_DATABASE_URL: Redis counters are rebuilt from the shared usage ledger");
  return {
    databaseUrl,
    redisUrl,
    pgPoolSize: int("SVC_PG_POOL_SIZE", env.SVC_PG_POOL_SIZE ?? fc.pg_pool_size, DEFAULTS.pgPoolSize) || DEFAULTS.pgPoolSize,
    pgTimeoutMs: int("SVC_PG_TIMEOUT_MS", env.SVC_PG_TIMEOUT_MS ?? fc.pg_timeout_ms, DEFAULTS.pgTimeoutMs) || DEFAULTS.pgTimeoutMs,
    redisTimeoutMs: int("SVC_REDIS_TIMEOUT_MS", env.SVC_REDIS_TIMEOUT_MS ?? fc.redis_timeout_ms, DEFAULTS.redisTimeoutMs) || DEFAULTS.redisTimeoutMs,
    redisPrefix: env.SVC_REDIS_PREFIX || fc.redis_prefix || DEFAULTS.redisPrefix,
  };
}
