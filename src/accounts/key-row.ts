import type { KeyRecord } from "./store.js";

/** A row of the keys table, as both SQL stores read it (the columns of migrations.ts). */
export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  per_minute: number | null;
  per_day: number | null;
  monthly_tokens: number | null;
}

export function toKey(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    hash: r.hash,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    perMinute: r.per_minute,
    perDay: r.per_day,
    monthlyTokens: r.monthly_tokens,
  };
}
