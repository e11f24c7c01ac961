/** What the service keeps about keys and usage. The embedded default is one SQLite file (sqlite-store.ts). */
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
}

export interface UsageRow {
  keyId: string;
  name: string;
  prefix: string;
  requests: number;
  inputTokens: number;
}

export interface AccountStore {
  insertKey(key: KeyRecord): void;
  listKeys(): KeyRecord[];
  /** Revokes by id or prefix; returns the revoked key, or null when none matches. */
  revokeKey(idOrPrefix: string): KeyRecord | null;
  /** The key with this prefix, revoked or not. The record is shared: callers must not change it. */
  findByPrefix(prefix: string): KeyRecord | null;
  /** Writes one usage record durably; resolves only when it is committed (records may share a commit). */
  recordUsage(rec: UsageRecord): Promise<void>;
  /** Input tokens and requests billed to a key in [from, to) (ms). */
  usageBetween(keyId: string, from: number, to: number): { requests: number; inputTokens: number };
  /** Usage per key in [from, to), optionally for one key (id or prefix). */
  report(from: number, to: number, key?: string): UsageRow[];
  countUsage(): number;
  /** Waits for the usage records already handed over to be committed, then closes the file. */
  close(): Promise<void>;
}
