import type pg from "pg";
import type { Dependency } from "./dependency.js";
import { isUnavailable } from "./pg-errors.js";
import type { UsageRecord } from "./store.js";

/** Between two tries of a commit that could not reach PostgreSQL. */
const RETRY_MS = 200;

/**
 * One statement for a whole batch. ON CONFLICT makes a retry safe: request ids are unique (time and
 * 52 random bits), so a row already there is this request's own, committed by a try whose answer
 * was lost with its connection.
 */
const INSERT_BATCH = `INSERT INTO usage (request_id, key_id, endpoint, model, input_tokens, at, cached)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::smallint[])
  ON CONFLICT (request_id) DO NOTHING`;

interface Batch {
  records: UsageRecord[];
  waiters: { resolve: () => void; reject: (err: Error) => void }[];
  /** Past this, a batch that cannot be committed is given up (its requests are answered 503). */
  deadline: number;
}

/**
 * The usage ledger in PostgreSQL, with group commit: the records of one event-loop turn wait for the
 * commit in flight and then go together as one statement, so concurrent requests share commits. A
 * caller resumes only once its row is committed. While PostgreSQL cannot be reached a batch is tried
 * again until its deadline; then its requests fail with 503 and their ids are kept "in doubt" (a try
 * may have committed without its answer arriving): `compensate` deletes those rows once PostgreSQL is
 * back, so a request that was not answered 200 is never billed.
 */
export class PgLedger {
  private gathering: Batch | null = null;
  private committing: Promise<void> | null = null;
  private readonly inDoubt = new Set<string>();
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly dependency: Dependency,
    private readonly timeoutMs: number,
  ) {}

  record(rec: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the usage ledger is closed"));
    return new Promise<void>((resolve, reject) => {
      if (this.gathering === null) {
        this.gathering = { records: [], waiters: [], deadline: Date.now() + this.timeoutMs };
        if (this.committing === null) setImmediate(() => this.flush());
      }
      this.gathering.records.push(rec);
      this.gathering.waiters.push({ resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.gathering;
    if (batch === null || this.committing !== null) return;
    this.gathering = null;
    this.committing = this.commit(batch).finally(() => {
      this.committing = null;
      this.flush();
    });
  }

  private async commit(batch: Batch): Promise<void> {
    const r = batch.records;
    const columns = [r.map((x) => x.requestId), r.map((x) => x.keyId), r.map((x) => x.endpoint), r.map((x) => x.model), r.map((x) => x.inputTokens), r.map((x) => x.at), r.map((x) => (x.cached ? 1 : 0))];
    for (;;) {
      try {
        await this.pool.query(INSERT_BATCH, columns);
        for (const w of batch.waiters) w.resolve();
        return;
      } catch (err) {
        if (!isUnavailable(err)) {
          for (const w of batch.waiters) w.reject(new Error(`usage record not written: ${(err as Error).message}`));
          return;
        }
        const refused = this.dependency.failed(err);
        if (Date.now() + RETRY_MS >= batch.deadline) {
          for (const rec of r) this.inDoubt.add(rec.requestId);
          for (const w of batch.waiters) w.reject(refused);
          return;
        }
        await new Promise((done) => setTimeout(done, RETRY_MS));
      }
    }
  }

  /** Deletes the rows of requests that were refused while their commit was in doubt (run when PostgreSQL answers again). */
  async compensate(): Promise<void> {
    if (this.inDoubt.size === 0) return;
    const ids = [...this.inDoubt];
    const res = await this.pool.query("DELETE FROM usage WHERE request_id = ANY($1::text[])", [ids]);
    for (const id of ids) this.inDoubt.delete(id);
    if (res.rowCount) process.stderr.write(`svc: removed ${res.rowCount} usage rows of requests answered 503 during the outage\n`);
  }

  /** Commits what was handed over (or gives it up at its deadline), then refuses new records. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.committing !== null || this.gathering !== null) {
      if (this.committing === null) this.flush();
      await this.committing;
    }
  }
}
