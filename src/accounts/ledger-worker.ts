/**
 * Writes usage records to the SQLite file on its own thread. A commit with `synchronous` FULL waits
 * for an fsync, and better-sqlite3 runs every statement synchronously on the calling thread: on the
 * main thread that wait (and the inserts) measured ~25% of the whole HTTP path (bench:server).
 * Batches that arrive while a commit runs are gathered into the next transaction.
 */
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";
import { applyPragmas, INSERT_USAGE, type LedgerBatch, type LedgerInit, type LedgerReply } from "./ledger-protocol.js";

const port = parentPort;
if (!port) throw new Error("ledger-worker.ts must run as a worker thread");
const init = workerData as LedgerInit;
const db = new Database(init.file);
applyPragmas(db, init.sync);
const insert = db.prepare(INSERT_USAGE);
const insertAll = db.transaction((batches: LedgerBatch[]) => {
  for (const b of batches) for (const r of b.rows) insert.run(r);
});

let queue: LedgerBatch[] = [];
let scheduled = false;

function commit(): void {
  scheduled = false;
  if (queue.length === 0) return;
  const batches = queue;
  queue = [];
  const reply: LedgerReply = { done: [] };
  try {
    insertAll(batches);
    for (const b of batches) reply.done.push({ seq: b.seq, errors: null });
  } catch {
    // One bad record (say, a duplicate request id) must not fail the others: commit them one by one.
    for (const b of batches) {
      const errors = b.rows.map((r) => {
        try {
          insert.run(r);
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      });
      reply.done.push({ seq: b.seq, errors });
    }
  }
  port!.postMessage(reply);
}

port.on("message", (msg: LedgerBatch | "close") => {
  if (msg === "close") {
    commit();
    db.close();
    port.close();
    return;
  }
  queue.push(msg);
  if (!scheduled) {
    scheduled = true;
    setImmediate(commit);
  }
});
