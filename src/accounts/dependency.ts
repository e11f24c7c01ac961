import { ApiError } from "../http/errors.js";

/** Seconds a client is told to wait while a shared dependency is down (it is probed twice a second). */
const RETRY_AFTER_S = 2;
const PROBE_MS = 500;

export type DependencyName = "postgres" | "redis";

/**
 * A shared service the instance needs for every metered request (PostgreSQL, Redis). It is marked
 * down by any call that could not reach it and up again by a probe that runs twice a second, so that
 * while it is down requests are refused at once with 503 (never served unmetered) and the instance
 * recovers by itself, without traffic and without a restart.
 */
export class Dependency {
  up = true;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    readonly name: DependencyName,
    /** Resolves when the service answers (and whatever it needs after an outage is redone). */
    private readonly probe: () => Promise<void>,
  ) {}

  /** Marks it down after a failed call; returns the 503 to answer. */
  failed(err: unknown): ApiError {
    if (this.up) process.stderr.write(`svc: ${this.name} unavailable: ${err instanceof Error ? err.message : String(err)}\n`);
    this.up = false;
    return this.unavailable();
  }

  private recovered(): void {
    if (!this.up) process.stderr.write(`svc: ${this.name} is back\n`);
    this.up = true;
  }

  unavailable(): ApiError {
    return new ApiError(503, "dependency_unavailable", {
      params: { retry: RETRY_AFTER_S },
      headers: { "retry-after": String(RETRY_AFTER_S) },
    });
  }

  /** Starts probing (servers only: a CLI command makes its calls and exits). */
  watch(): void {
    const tick = (): void => {
      this.probe().then(
        () => this.recovered(),
        (err) => this.failed(err),
      ).finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, PROBE_MS).unref();
      });
    };
    this.timer = setTimeout(tick, PROBE_MS).unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

/** The first of the dependencies that is down, or null. */
export function firstDown(deps: readonly Dependency[]): Dependency | null {
  for (const d of deps) if (!d.up) return d;
  return null;
}
