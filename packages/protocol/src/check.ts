import type { ProtocolError } from './errors.js';

/**
 * The outcome of a validation rule that can fail with exactly one wire error. Rules return it
 * instead of throwing so the caller decides the order in which rules run (it matters: R3 vs R23).
 */
export type Check = { ok: true } | { ok: false; error: ProtocolError };

export const passed: Check = { ok: true };

/** Throws the check's wire error: for a caller that runs its rules in order and stops at the first. */
export function throwIfFailed(check: Check): void {
  if (!check.ok) throw check.error;
}

export function failed(error: ProtocolError): { ok: false; error: ProtocolError } {
  return { ok: false, error };
}
