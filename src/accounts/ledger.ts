import { Worker } from "node:worker_threads";
import type { LedgerBatch, LedgerInit, LedgerReply } from "./ledger-protocol.js";
import type { UsageRecord } from "./store.js";

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

interface Pending {
  batch: LedgerBatch;
  waiters: Waiter[];
}

/**
 * The main thread's side of the usage ledger. Records of one event-loop turn go to the ledger worker
 * as one batch; each caller resumes only when the worker says its own record is committed. The worker
 * starts with start() or the first record, and holds the process open only while records are in flight.
 *
 * If the worker dies with batches in flight, `committed` (a read on another connection) tells which
 * of their rows reached the file: those callers resume as billed, the others fail; the next record
 * starts a new worker.
 */
export class UsageLedger {
  private worker: Worker | null = null;
  private turn: Pending | null = null;
  private readonly inFlight = new Map<number, Pending>();
  private seq = 0;
  private closed = false;

  constructor(
    private readonly init: LedgerInit,
    private readonly committed: (requestIds: string[]) => Set<string>,
    private readonly workerUrl: URL = new URL("./ledger-worker.js", import.meta.url),
  ) {}

  /** Starts the worker now rather than with the first record (which waited 26 ms for it, measured). */
  start(): void {
    if (!this.closed) this.ensureWorker();
  }

  record(rec: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the usage ledger is closed"));
    return new Promise<void>((resolve, reject) => {
      if (this.turn === null) {
        this.turn = { batch: { seq: ++this.seq, rows: [] }, waiters: [] };
        setImmediate(() => this.send());
      }
      this.turn.batch.rows.push([rec.requestId, rec.keyId, rec.endpoint, rec.model, rec.inputTokens, rec.at, rec.cached ? 1 : 0]);
      this.turn.waiters.push({ resolve, reject });
    });
  }

  private send(): void {
    const turn = this.turn;
    this.turn = null;
    if (turn === null) return;
    const worker = this.ensureWorker();
    if (this.inFlight.size === 0) worker.ref();
    this.inFlight.set(turn.batch.seq, turn);
    worker.postMessage(turn.batch);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerUrl, { workerData: this.init });
    worker.on("message", (reply: LedgerReply) => {
      for (const { seq, errors } of reply.done) {
        const pending = this.inFlight.get(seq);
        this.inFlight.delete(seq);
        pending?.waiters.forEach((w, i) => {
          const err = errors?.[i];
          if (err) w.reject(new Error(`usage record not written: ${err}`));
          else w.resolve();
        });
      }
      // While close() waits for the worker to exit, the worker must keep the process alive.
      if (this.inFlight.size === 0 && !this.closed) worker.unref();
    });
    worker.on("error", (err) => this.lost(worker, `failed: ${err.message}`));
    worker.on("exit", (code) => this.lost(worker, `exited with code ${code}`));
    // After the listeners: attaching a "message" listener refs the worker's port again.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private lost(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const pending = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const { batch, waiters } of pending) {
      let found: Set<string>;
      try {
        found = this.committed(batch.rows.map((r) => r[0]));
      } catch {
        found = new Set();
      }
      waiters.forEach((w, i) => {
        if (found.has(batch.rows[i][0])) w.resolve();
        else w.reject(new Error(`usage ledger worker ${why}`));
      });
    }
  }

  /**
   * Sends what is queued, waits until the worker has committed it and closed the file. Rejects when
   * the worker ends any other way than by closing the file (its exit code is not 0).
   */
  async close(): Promise<void> {
    this.send();
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    worker.ref();
    await new Promise<void>((resolve, reject) => {
      worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`usage ledger worker exited with code ${code} while closing`))));
      worker.postMessage("close");
    });
  }
}
