/**
 * What the service keeps about keys and usage. The embedded default is one SQLite file (sqlite-store.ts),
 * whose calls return plain values; the shared one is PostgreSQL (pg-store.ts), whose calls return
 * promises. Callers await either.
 */
import type { Dependency } from "./dependency.js";

export type MaybePromise<T> = T | Promise<T>;

export interface KeyLimits {
  perMinute: number | null;
  perDay: number | null;
  monthlyTokens: number | null;
}

export interface KeyRecord extends KeyLimits {
  id: string;
  name: string;
  /** Public, non-secret part of the key, used to find it (shown in listings and logs). */
  prefix: string;
  /** sha256 of the full key, hex. The key itself is never stored. */
  hash: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface UsageRecord {
  keyId: string;
  requestId: string;
  endpoint: string;
  model: string;
  inputTokens: number;
  /** Unix time in milliseconds. */
  at: number;
  /** Answered from the retry cache (identical request or same Idempotency-Key): billed 0 tokens. */
  cached?: boolean;
}

export interface UsageRow {
  keyId: string;
  name: string;
  prefix: string;
  /** Requests answered by the model (billed). */
  requests: number;
  /** Requests answered from the retry cache (0 tokens). */
  cachedRequests: number;
  inputTokens: number;
}

/** A calibration a key fitted from its own labeled examples (src/calibration/fit.ts), stored as JSON. */
export interface CalibrationRecord {
  keyId: string;
  name: string;
  createdAt: string;
  body: string;
}

export interface AccountStore {
  /** Creates or replaces the key's calibration of that name. */
  saveCalibration(rec: CalibrationRecord): MaybePromise<void>;
  /** The key's calibration of that name, or null: a key never sees another key's calibrations. */
  getCalibration(keyId: string, name: string): MaybePromise<CalibrationRecord | null>;
  listCalibrations(keyId: string): MaybePromise<CalibrationRecord[]>;
  insertKey(key: KeyRecord): MaybePromise<void>;
  listKeys(): MaybePromise<KeyRecord[]>;
  /** Revokes by id or prefix; returns the revoked key, or null when none matches. */
  revokeKey(idOrPrefix: string): MaybePromise<KeyRecord | null>;
  /**
   * The key with this prefix, revoked or not; a plain value when it is cached (every request reads
   * one). The record is shared: callers must not change it.
   */
  findByPrefix(prefix: string): MaybePromise<KeyRecord | null>;
  /** Writes one usage record durably; resolves only when it is committed (records may share a commit). */
  recordUsage(rec: UsageRecord): Promise<void>;
  /** Input tokens and requests billed to a key in [from, to) (ms). */
  usageBetween(keyId: string, from: number, to: number): MaybePromise<{ requests: number; inputTokens: number }>;
  /** Usage per key in [from, to), optionally for one key (id or prefix). */
  report(from: number, to: number, key?: string): MaybePromise<UsageRow[]>;
  countUsage(): MaybePromise<number>;
  /** The shared service behind the store, watched for /healthz and 503s (none for the embedded file). */
  readonly dependency: Dependency | null;
  /** Waits for the usage records already handed over to be committed, then closes the file or pool. */
  close(): Promise<void>;
}
