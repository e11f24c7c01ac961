import { dbPath, type Config } from "../config.js";
import type { Dependency } from "./dependency.js";
import { Limiter, type LimitCounters } from "./limits.js";
import { openPgStore } from "./pg-store.js";
import { RedisLimiter } from "./redis-limits.js";
import { openSqliteStore } from "./sqlite-store.js";
import type { AccountStore } from "./store.js";
import type { SharedAnswers } from "../api/answer-cache.js";

/**
 * The store the configuration names: PostgreSQL with SVC_DATABASE_URL, else the SQLite file in the
 * data folder. `serve`: a server's store starts its ledger at once and watches its dependency.
 */
export async function openAccountStore(config: Config, serve: boolean): Promise<AccountStore> {
  const { databaseUrl, pgPoolSize, pgTimeoutMs } = config.shared;
  if (databaseUrl !== null) return openPgStore({ url: databaseUrl, poolSize: pgPoolSize, timeoutMs: pgTimeoutMs, serve });
  return openSqliteStore(dbPath(config), { sync: config.dbSync, startLedger: serve });
}

/** A server's accounts: its store, where its limits are counted, and the shared services it needs. */
export interface Accounts {
  store: AccountStore;
  limiter: LimitCounters;
  /** Where instances share replayed answers (Redis), or null in one process. */
  sharedAnswers: SharedAnswers | null;
  dependencies: Dependency[];
  close(): Promise<void>;
}

/** Counters in Redis with SVC_REDIS_URL (shared by instances), else in this process. */
export async function openAccounts(config: Config, store: AccountStore): Promise<Accounts> {
  const { redisUrl, redisPrefix, redisTimeoutMs } = config.shared;
  const redis = redisUrl === null ? null : await RedisLimiter.open({ url: redisUrl, prefix: redisPrefix, timeoutMs: redisTimeoutMs }, store, config.limits);
  const dependencies = [store.dependency, redis?.dependency].filter((d): d is Dependency => d !== null && d !== undefined);
  return {
    store,
    limiter: redis ?? new Limiter(store, config.limits),
    sharedAnswers: redis?.answers() ?? null,
    dependencies,
    async close() {
      await redis?.close();
      await store.close();
    },
  };
}
