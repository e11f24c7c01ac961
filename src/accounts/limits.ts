import { ApiError } from "../http/errors.js";
import type { AccountStore, KeyLimits, KeyRecord } from "./store.js";

/** Which limit refused a request (error.limit on 429). */
export type LimitName = "per_minute" | "per_day" | "monthly_quota" | "key_limit";
export type Window = "per_minute" | "per_day" | "monthly_quota";

export const MINUTE = 60_000;
export const DAY = 86_400_000;

let month = { start: 0, end: 0 };

/** The UTC month around `now`, computed once per month rather than with a Date on every request. */
export function monthBounds(now: number): { start: number; end: number } {
  if (now < month.start || now >= month.end) {
    const d = new Date(now);
    month = {
      start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
      end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
    };
  }
  return month;
}

/** Where a request's limits are counted: in this process (Limiter) or in Redis, shared by instances (RedisLimiter). */
export interface LimitCounters {
  /** Admits one request for the key or throws 429. Counts it against the minute and day windows. */
  admit(key: KeyRecord): void | Promise<void>;
  /** Reserves the request's input tokens against the monthly quota or throws 429. */
  reserve(key: KeyRecord, tokens: number, requestId: string): void | Promise<void>;
  /** Gives back the place in the current minute and day windows of a request refused after admit() (quota, concurrency). */
  refund(key: KeyRecord): void | Promise<void>;
  /** Turns a reservation into usage (billed) or drops it (failed request). Never throws. */
  settle(key: KeyRecord, tokens: number, billed: boolean, requestId: string): void | Promise<void>;
}

/**
 * The rules every LimitCounters applies: a key's own limit replaces the server default for that
 * window; when it is the key's own limit that refuses, error.limit is "key_limit" and error.window
 * names the window. A null or 0 limit means unlimited. Windows are fixed UTC minutes and days and
 * the UTC calendar month.
 */
export class LimitRules {
  constructor(private readonly defaults: KeyLimits) {}

  effective(key: KeyRecord, w: Window): { limit: number | null; own: boolean } {
    const field = w === "per_minute" ? "perMinute" : w === "per_day" ? "perDay" : "monthlyTokens";
    const own = key[field];
    if (own !== null && own !== undefined) return { limit: own > 0 ? own : null, own: true };
    const def = this.defaults[field];
    return { limit: def && def > 0 ? def : null, own: false };
  }

  /**
   * A request that alone needs more tokens than the whole monthly quota can never be answered under it:
   * 413 with the limit named, and no Retry-After (waiting does not help).
   */
  checkFits(key: KeyRecord, tokens: number): void {
    const q = this.effective(key, "monthly_quota");
    if (q.limit === null || tokens <= q.limit) return;
    throw new ApiError(413, "request_exceeds_quota", {
      params: { need: tokens, limit: q.limit },
      extra: q.own ? { limit: "key_limit", window: "monthly_quota" } : { limit: "monthly_quota" },
    });
  }

  refuse(w: Window, own: boolean, limit: number, retryMs: number, params: Record<string, number> = {}): ApiError {
    const retry = Math.max(1, Math.ceil(retryMs / 1000));
    const name: LimitName = own ? "key_limit" : w;
    return new ApiError(429, name, {
      params: { limit, retry, window: w, ...params },
      headers: { "retry-after": String(retry) },
      extra: own ? { limit: name, window: w } : { limit: name },
    });
  }
}

interface Counter {
  window: number;
  count: number;
}

interface Quota {
  monthStart: number;
  used: number;
  reserved: number;
}

/**
 * The counters in this process. Everything is checked and updated synchronously on the event loop,
 * so a limit of N admits exactly N concurrent requests. A key's day and month start from the ledger
 * the first time they are needed (after a restart, say); with a store that answers asynchronously
 * the check waits for that read, then runs synchronously.
 */
export class Limiter implements LimitCounters {
  private readonly minute = new Map<string, Counter>();
  private readonly day = new Map<string, Counter>();
  private readonly quota = new Map<string, Quota>();
  private readonly rules: LimitRules;

  constructor(
    private readonly store: AccountStore,
    defaults: KeyLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.rules = new LimitRules(defaults);
  }

  admit(key: KeyRecord): void | Promise<void> {
    const now = this.now();
    const dayWin = Math.floor(now / DAY);
    if (!this.day.has(key.id)) {
      // After a restart the day resumes from the billed requests already recorded today.
      const seed = this.store.usageBetween(key.id, dayWin * DAY, now + 1);
      if (seed instanceof Promise) return seed.then((s) => this.admitCounted(key, s.requests));
      return this.admitCounted(key, seed.requests);
    }
    this.admitCounted(key, 0);
  }

  private admitCounted(key: KeyRecord, seed: number): void {
    const now = this.now();
    const m = this.rules.effective(key, "per_minute");
    const d = this.rules.effective(key, "per_day");
    const minuteWin = Math.floor(now / MINUTE);
    const dayWin = Math.floor(now / DAY);
    const mc = this.counter(this.minute, key.id, minuteWin, 0);
    const dc = this.counter(this.day, key.id, dayWin, seed);
    if (d.limit !== null && dc.count >= d.limit) throw this.rules.refuse("per_day", d.own, d.limit, (dayWin + 1) * DAY - now);
    if (m.limit !== null && mc.count >= m.limit) throw this.rules.refuse("per_minute", m.own, m.limit, (minuteWin + 1) * MINUTE - now);
    mc.count++;
    dc.count++;
  }

  refund(key: KeyRecord): void {
    const now = this.now();
    for (const [map, window] of [[this.minute, Math.floor(now / MINUTE)], [this.day, Math.floor(now / DAY)]] as const) {
      const c = map.get(key.id);
      if (c && c.window === window && c.count > 0) c.count--;
    }
  }

  /** A key's counter for the window; a key seen for the first time starts from `seed`, a new window from 0. */
  private counter(map: Map<string, Counter>, keyId: string, window: number, seed: number): Counter {
    let c = map.get(keyId);
    if (!c || c.window !== window) {
      c = { window, count: c === undefined ? seed : 0 };
      map.set(keyId, c);
    }
    return c;
  }

  reserve(key: KeyRecord, tokens: number): void | Promise<void> {
    this.rules.checkFits(key, tokens);
    const { start, end } = monthBounds(this.now());
    const state = this.quota.get(key.id);
    if (!state || state.monthStart !== start) {
      const used = this.store.usageBetween(key.id, start, end);
      if (used instanceof Promise) return used.then((u) => this.reserveFrom(key, tokens, start, u.inputTokens));
      return this.reserveFrom(key, tokens, start, used.inputTokens);
    }
    this.reserveFrom(key, tokens, start, 0);
  }

  private reserveFrom(key: KeyRecord, tokens: number, monthStart: number, seed: number): void {
    const q = this.rules.effective(key, "monthly_quota");
    const now = this.now();
    const { end } = monthBounds(now);
    let state = this.quota.get(key.id);
    if (!state || state.monthStart !== monthStart) {
      state = { monthStart, used: seed, reserved: 0 };
      this.quota.set(key.id, state);
    }
    if (q.limit !== null && state.used + state.reserved + tokens > q.limit) {
      throw this.rules.refuse("monthly_quota", q.own, q.limit, end - now, { used: state.used + state.reserved, need: tokens });
    }
    state.reserved += tokens;
  }

  settle(key: KeyRecord, tokens: number, billed: boolean): void {
    const state = this.quota.get(key.id);
    if (!state) return;
    state.reserved = Math.max(0, state.reserved - tokens);
    if (billed) state.used += tokens;
  }
}
