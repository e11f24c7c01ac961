import { Worker } from "node:worker_threads";
import type { LedgerBatch, LedgerInit, LedgerReply } from "./ledger-protocol.js";
import type { UsageRecord } from "./store.js";

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * The main thread's side of the usage ledger. Records of one event-loop turn go to the ledger worker
 * as one batch; each caller resumes only when the worker says its own record is committed. The worker
 * starts with the first record and holds the process open only while records are in flight.
 */
export class UsageLedger {
  private worker: Worker | null = null;
  private turn: { batch: LedgerBatch; waiters: Waiter[] } | null = null;
  private readonly inFlight = new Map<number, Waiter[]>();
  private seq = 0;
  private closed = false;

  constructor(private readonly init: LedgerInit) {}

  record(rec: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the usage ledger is closed"));
    return new Promise<void>((resolve, reject) => {
      if (this.turn === null) {
        this.turn = { batch: { seq: ++this.seq, rows: [] }, waiters: [] };
        setImmediate(() => this.send());
      }
      this.turn.batch.rows.push([rec.requestId, rec.keyId, rec.endpoint, rec.model, rec.inputTokens, rec.at]);
      this.turn.waiters.push({ resolve, reject });
    });
  }

  private send(): void {
    const turn = this.turn;
    this.turn = null;
    if (turn === null) return;
    const worker = this.ensureWorker();
    if (this.inFlight.size === 0) worker.ref();
    this.inFlight.set(turn.batch.seq, turn.waiters);
    worker.postMessage(turn.batch);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./ledger-worker.js", import.meta.url), { workerData: this.init });
    worker.unref();
    worker.on("message", (reply: LedgerReply) => {
      for (const { seq, errors } of reply.done) {
        const waiters = this.inFlight.get(seq) ?? [];
        this.inFlight.delete(seq);
        waiters.forEach((w, i) => {
          const err = errors?.[i];
          if (err) w.reject(new Error(`usage record not written: ${err}`));
          else w.resolve();
        });
      }
      if (this.inFlight.size === 0) worker.unref();
    });
    const fail = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = null;
      // Whether these rows reached the file is unknown: their requests fail rather than answer unbilled.
      for (const waiters of this.inFlight.values()) for (const w of waiters) w.reject(new Error(`usage ledger worker ${why}`));
      this.inFlight.clear();
    };
    worker.on("error", (err) => fail(`failed: ${err.message}`));
    worker.on("exit", (code) => fail(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Sends what is queued, waits until the worker has committed it and closed the file. */
  async close(): Promise<void> {
    this.send();
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    worker.ref();
    await new Promise<void>((resolve) => {
      worker.once("exit", () => resolve());
      worker.postMessage("close");
    });
  }
}
