/** What the main thread and the ledger worker share: the file's settings, the insert and the messages. */
import type Database from "better-sqlite3";

export type Sync = "full" | "normal";

export interface LedgerInit {
  file: string;
  sync: Sync;
}

/** One usage row in column order: request_id, key_id, endpoint, model, input_tokens, at, cached. */
export type UsageTuple = [string, string, string, string, number, number, number];

/** The records of one event-loop turn of the main thread. */
export interface LedgerBatch {
  seq: number;
  rows: UsageTuple[];
}

/** Per batch: null when every row is committed, else one entry per row (null or the error). */
export interface LedgerReply {
  done: { seq: number; errors: (string | null)[] | null }[];
}

export const INSERT_USAGE = "INSERT INTO usage (request_id, key_id, endpoint, model, input_tokens, at, cached) VALUES (?, ?, ?, ?, ?, ?, ?)";

/**
 * WAL journal; `synchronous` FULL by default so that a committed usage record survives a process
 * kill and a power loss ("normal" trades the latter for speed). Every connection to the file uses these.
 */
export function applyPragmas(db: Database.Database, sync: Sync): void {
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${sync === "normal" ? "NORMAL" : "FULL"}`);
  db.pragma("busy_timeout = 5000");
}
