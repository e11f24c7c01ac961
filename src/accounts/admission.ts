import { ApiError } from "../http/errors.js";

/** Bounds on model work held at once, in (question, option) pairs admitted and not yet finished. 0 = no bound. */
export interface AdmissionLimits {
  perKey: number;
  total: number;
}

/** Retry-After stays within these seconds whatever the measured rate says. */
const RETRY_MIN_S = 1;
const RETRY_MAX_S = 60;
/** The drain rate is measured over this window. */
const RATE_WINDOW_MS = 10_000;
/** Assumed until pairs have been measured: about what 2 cores drain with the built-in model (~350/s, bench:model). */
const DEFAULT_PAIRS_PER_S = 300;

/**
 * Admission control for model work: a request holds its pairs from admission until it is answered,
 * refused later or cancelled, so the memory and queueing of everything admitted stay bounded
 * whatever arrives. Past the key's share: 429 (`error.limit` = "concurrency"); past the server's:
 * 503. A key (or the server) holding nothing always admits one request, so every valid request can
 * run when it is alone, whatever the bounds. Retry-After is the time the work ahead needs to
 * drain at the rate measured over the last seconds.
 */
export class Admission {
  private readonly byKey = new Map<string, number>();
  private total = 0;
  /** Pairs released per 1 s bucket over RATE_WINDOW_MS: [bucket start, pairs]. */
  private readonly drained: [number, number][] = [];

  constructor(
    readonly limits: AdmissionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits `pairs` for the key or throws 429/503. Returns the release, which is idempotent. */
  admit(keyId: string, pairs: number): () => void {
    const held = this.byKey.get(keyId) ?? 0;
    const { perKey, total } = this.limits;
    if (perKey > 0 && held > 0 && held + pairs > perKey) {
      const retry = this.retryAfter(held + pairs - perKey);
      throw new ApiError(429, "concurrency", {
        params: { in_flight: held, pairs, limit: perKey, retry },
        headers: { "retry-after": String(retry) },
        extra: { limit: "concurrency" },
      });
    }
    if (total > 0 && this.total > 0 && this.total + pairs > total) {
      const retry = this.retryAfter(this.total + pairs - total);
      throw new ApiError(503, "overloaded", { params: { retry }, headers: { "retry-after": String(retry) } });
    }
    this.byKey.set(keyId, held + pairs);
    this.total += pairs;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.byKey.get(keyId) ?? pairs) - pairs;
      if (left > 0) this.byKey.set(keyId, left);
      else this.byKey.delete(keyId);
      this.total -= pairs;
      this.measure(pairs);
    };
  }

  /** Pairs held now, by one key or in all. */
  held(keyId?: string): number {
    return keyId === undefined ? this.total : (this.byKey.get(keyId) ?? 0);
  }

  private measure(pairs: number): void {
    const bucket = Math.floor(this.now() / 1000) * 1000;
    const last = this.drained[this.drained.length - 1];
    if (last && last[0] === bucket) last[1] += pairs;
    else this.drained.push([bucket, pairs]);
    while (this.drained.length > 0 && this.drained[0][0] <= bucket - RATE_WINDOW_MS) this.drained.shift();
  }

  /** Whole seconds until `excess` pairs have drained at the recent rate. */
  private retryAfter(excess: number): number {
    const now = this.now();
    let pairs = 0;
    let since = now;
    for (const [at, n] of this.drained) {
      if (at <= now - RATE_WINDOW_MS) continue;
      pairs += n;
      since = Math.min(since, at);
    }
    const rate = pairs > 0 ? pairs / Math.max(1, (now - since) / 1000) : DEFAULT_PAIRS_PER_S;
    return Math.min(RETRY_MAX_S, Math.max(RETRY_MIN_S, Math.ceil(excess / rate)));
  }
}
