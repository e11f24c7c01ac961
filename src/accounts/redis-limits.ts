import { Redis } from "ioredis";
import type { SharedAnswers } from "../api/answer-cache.js";
import { Dependency } from "./dependency.js";
import { DAY, LimitRules, MINUTE, monthBounds, type LimitCounters } from "./limits.js";
import type { AccountStore, KeyLimits, KeyRecord } from "./store.js";

export interface RedisOptions {
  url: string;
  /** Prefix of every key this service writes, so that several services (or test runs) can share one Redis. */
  prefix: string;
  /** Connecting, and any one command, give up after this long (then: 503). */
  timeoutMs: number;
}

/**
 * A reservation left by an instance that died before settling it frees itself after this long. Far
 * longer than any request runs (the largest valid one takes well under a minute on 2 cores).
 */
const RESERVATION_TTL_MS = 10 * 60_000;
/** Takes one request off the minute and day counters that exist and are above 0 (a refused request's place). */
const REFUND_SCRIPT = "for i = 1, 2 do if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end end return 0";

/** "Give me the ledger's figure": the scripts answer this when the counter they need is missing. */
const NEED_SEED = -1;

/**
 * Per-minute and per-day request counters. The day counter is created from the ledger's count when
 * it is missing (a new day, or Redis lost its data): the caller reads the ledger and calls again with
 * that seed, and SET NX keeps the first seed when instances race. Day before minute, as in Limiter.
 * Returns {0} admitted, {1, n} refused by the minute, {2, n} by the day, {-1} seed needed.
 */
const ADMIT = `
local d = redis.call('GET', KEYS[2])
if not d then
  if ARGV[3] == '-1' then return {-1, 0} end
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[5], 'NX')
  d = redis.call('GET', KEYS[2])
end
d = tonumber(d)
local dl = tonumber(ARGV[2])
if dl > 0 and d >= dl then return {2, d} end
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local ml = tonumber(ARGV[1])
if ml > 0 and m >= ml then return {1, m} end
redis.call('INCR', KEYS[2])
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {0, 0}`;

/**
 * The month: a hash {used, reserved} and a sorted set of reservations ("<request id>:<tokens>" scored
 * by when they expire). Expired reservations are released first, then the request's tokens are
 * reserved if used + reserved + tokens stays within the limit. A missing hash is created from the
 * ledger's sum (seed), as for the day. Returns {0} reserved, {1, used + reserved} refused, {-1} seed needed.
 */
const RESERVE = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[3] == '-1' then return {-1, 0} end
  redis.call('HSET', KEYS[1], 'used', ARGV[3], 'reserved', 0)
  redis.call('DEL', KEYS[2])
end
local now = tonumber(ARGV[5])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #expired > 0 then
  local freed = 0
  for _, m in ipairs(expired) do freed = freed + tonumber(string.match(m, ':(%d+)$')) end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  redis.call('HINCRBY', KEYS[1], 'reserved', -freed)
end
local used = tonumber(redis.call('HGET', KEYS[1], 'used'))
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved'))
local limit = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
if limit > 0 and used + reserved + tokens > limit then return {1, used + reserved} end
redis.call('HINCRBY', KEYS[1], 'reserved', tokens)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
return {0, 0}`;

/**
 * Releases a reservation and, for a billed request, adds its tokens to the month's use. When the hash
 * is gone (Redis lost its data) nothing is done: it is rebuilt from the ledger, which has the row.
 */
const SETTLE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'reserved', -tonumber(ARGV[2])) end
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[1], 'used', ARGV[2]) end
return 1`;

type Reply = [number, number];

interface Scripts {
  svcAdmit(minute: string, day: string, minuteLimit: number, dayLimit: number, seed: number, minuteTtl: number, dayTtl: number): Promise<Reply>;
  svcReserve(quota: string, reservations: string, limit: number, tokens: number, seed: number, member: string, now: number, ttl: number, keyTtl: number): Promise<Reply>;
  svcSettle(quota: string, reservations: string, member: string, tokens: number, billed: number): Promise<number>;
}

/**
 * The limit counters in Redis, shared by every instance: each check-and-count is one Lua script, so
 * it is atomic across instances and a limit of N admits exactly N of any number of concurrent
 * requests, wherever they land. Redis keeps nothing on disk here: day and month figures it lost are
 * rebuilt from the ledger (a minute window it lost starts again from zero). Any command that cannot
 * reach Redis is a 503: no request is served uncounted.
 */
export class RedisLimiter implements LimitCounters {
  readonly dependency: Dependency;
  private readonly rules: LimitRules;
  private readonly redis: Redis & Scripts;

  private constructor(
    private readonly opts: RedisOptions,
    private readonly store: AccountStore,
    defaults: KeyLimits,
  ) {
    this.rules = new LimitRules(defaults);
    const redis = new Redis(opts.url, {
      lazyConnect: true,
      // Never queue a command while disconnected: fail it at once (503) and keep reconnecting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: opts.timeoutMs,
      commandTimeout: opts.timeoutMs,
      retryStrategy: (times) => Math.min(100 * times, 1000),
    });
    redis.defineCommand("svcAdmit", { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand("svcReserve", { numberOfKeys: 2, lua: RESERVE });
    redis.defineCommand("svcSettle", { numberOfKeys: 2, lua: SETTLE });
    this.redis = redis as Redis & Scripts;
    this.dependency = new Dependency("redis", async () => {
      await this.redis.ping();
    });
    redis.on("error", () => undefined);
    redis.on("close", () => {
      if (this.dependency.up) this.dependency.failed(new Error("connection closed"));
    });
  }

  static async open(opts: RedisOptions, store: AccountStore, defaults: KeyLimits): Promise<RedisLimiter> {
    const limiter = new RedisLimiter(opts, store, defaults);
    try {
      await limiter.redis.connect();
    } catch (err) {
      limiter.redis.disconnect();
      throw new Error(`Redis at SVC_REDIS_URL: ${(err as Error).message}`);
    }
    limiter.dependency.watch();
    return limiter;
  }

  /** Replayed answers in Redis, under this prefix, expiring on their own (answer-cache.ts). */
  answers(): SharedAnswers {
    const name = (key: string): string => `${this.opts.prefix}answer:${key}`;
    return {
      get: (key) => this.call(() => this.redis.get(name(key))),
      set: async (key, value, ttlMs) => {
        await this.call(() => this.redis.set(name(key), value, "PX", ttlMs));
      },
    };
  }

  /** Key names carry the API key's id in braces, so that one key's counters share a Redis Cluster slot. */
  private name(keyId: string, kind: string, window: number): string {
    return `${this.opts.prefix}{${keyId}}:${kind}:${window}`;
  }

  /** Runs a command; not reaching Redis is a 503. */
  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw this.dependency.failed(err);
    }
  }

  async refund(key: KeyRecord): Promise<void> {
    const now = Date.now();
    const minute = this.name(key.id, "m", Math.floor(now / MINUTE));
    const day = this.name(key.id, "d", Math.floor(now / DAY));
    await this.call(() => this.redis.eval(REFUND_SCRIPT, 2, minute, day));
  }

  async admit(key: KeyRecord): Promise<void> {
    const now = Date.now();
    const m = this.rules.effective(key, "per_minute");
    const d = this.rules.effective(key, "per_day");
    const minuteWin = Math.floor(now / MINUTE);
    const dayWin = Math.floor(now / DAY);
    const minute = this.name(key.id, "m", minuteWin);
    const day = this.name(key.id, "d", dayWin);
    const run = (seed: number) => this.call(() => this.redis.svcAdmit(minute, day, m.limit ?? 0, d.limit ?? 0, seed, 2 * MINUTE, 2 * DAY));
    let [status, count] = await run(NEED_SEED);
    if (status === NEED_SEED) {
      const { requests } = await this.store.usageBetween(key.id, dayWin * DAY, now + 1);
      [status, count] = await run(requests);
    }
    if (status === 2) throw this.rules.refuse("per_day", d.own, d.limit ?? count, (dayWin + 1) * DAY - now);
    if (status === 1) throw this.rules.refuse("per_minute", m.own, m.limit ?? count, (minuteWin + 1) * MINUTE - now);
  }

  async reserve(key: KeyRecord, tokens: number, requestId: string): Promise<void> {
    this.rules.checkFits(key, tokens);
    const now = Date.now();
    const q = this.rules.effective(key, "monthly_quota");
    const { start, end } = monthBounds(now);
    const quota = this.name(key.id, "q", start);
    const reservations = this.name(key.id, "r", start);
    const keyTtl = end - now + DAY;
    const run = (seed: number) =>
      this.call(() => this.redis.svcReserve(quota, reservations, q.limit ?? 0, tokens, seed, `${requestId}:${tokens}`, now, RESERVATION_TTL_MS, keyTtl));
    let [status, used] = await run(NEED_SEED);
    if (status === NEED_SEED) {
      const { inputTokens } = await this.store.usageBetween(key.id, start, end);
      [status, used] = await run(inputTokens);
    }
    if (status === 1) throw this.rules.refuse("monthly_quota", q.own, q.limit ?? 0, end - now, { used, need: tokens });
  }

  /**
   * Never throws: the request's answer does not depend on it. If Redis cannot be reached the
   * reservation frees itself when it expires, and a billed request's tokens are in the ledger.
   */
  async settle(key: KeyRecord, tokens: number, billed: boolean, requestId: string): Promise<void> {
    const start = monthBounds(Date.now()).start;
    try {
      await this.redis.svcSettle(this.name(key.id, "q", start), this.name(key.id, "r", start), `${requestId}:${tokens}`, tokens, billed ? 1 : 0);
    } catch (err) {
      this.dependency.failed(err);
    }
  }

  async close(): Promise<void> {
    this.dependency.stop();
    this.redis.disconnect();
  }
}
