import { endianness } from "node:os";

const littleEndian = endianness() === "LE";

/** int64 tensor data from non-negative int32 values (ids, masks, types): the low 32-bit words are written directly, no BigInt per token. */
export function int64(xs: ArrayLike<number>): BigInt64Array {
  const out = new BigInt64Array(xs.length);
  if (littleEndian) {
    const words = new Int32Array(out.buffer);
    for (let i = 0; i < xs.length; i++) words[2 * i] = xs[i];
  } else {
    for (let i = 0; i < xs.length; i++) out[i] = BigInt(xs[i]);
  }
  return out;
}
