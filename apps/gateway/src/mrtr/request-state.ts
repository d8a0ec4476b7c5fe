import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * MRTR requestState (R13). The client holds it between rounds, so it is attacker-controlled: it
 * is an HMAC-SHA256-signed envelope binding the round to who asked, for which call, with which
 * arguments, until when. Nothing secret is inside (the payload is readable base64url JSON).
 */
export interface RequestStateBinding {
  tenant: string;
  principal: string;
  method: string;
  toolName: string;
  argumentsDigest: string;
}

interface StatePayload {
  v: 1;
  ten: string;
  sub: string;
  m: string;
  t: string;
  a: string;
  /** The input requests of this round, so the answers can be checked against them. */
  q: Record<string, unknown>;
  /** Expiry, epoch milliseconds. */
  exp: number;
  /**
   * A fresh random value per round: two identical call sequences (same caller, tool, arguments,
   * instant and answers) are two intended runs and must name two tasks; a retry resends this
   * very state, so it still names the same one.
   */
  n: string;
}

export type RequestStateVerification =
  | { ok: true; inputRequests: Record<string, unknown> }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' | 'mismatch' };

export interface RequestStateCodec {
  issue(binding: RequestStateBinding, inputRequests: Record<string, unknown>): string;
  verify(token: string, binding: RequestStateBinding): RequestStateVerification;
  /**
   * The task id for the final round of a verified state: a keyed hash of the state and the
   * answers, so a retried final call (a lost response, a client restart) names the same task
   * instead of starting the work twice, and the id stays unguessable (R12) without the secret.
   */
  deriveTaskId(token: string, answers: Record<string, unknown>): string;
}

/** Canonical JSON (sorted keys) so the digest does not depend on the client's key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function digestArguments(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('base64url');
}

export function createRequestStateCodec(options: {
  secret: string;
  ttlMs: number;
  now?: () => number;
}): RequestStateCodec {
  const now = options.now ?? Date.now;
  const sign = (body: string): Buffer => createHmac('sha256', options.secret).update(body).digest();
  return {
    deriveTaskId(token, answers) {
      const digest = createHmac('sha256', options.secret)
        .update(`task-id\n${token}\n${canonicalJson(answers)}`)
        .digest();
      return `tsk_${digest.subarray(0, 18).toString('base64url')}`;
    },
    issue(binding, inputRequests) {
      const payload: StatePayload = {
        v: 1,
        ten: binding.tenant,
        sub: binding.principal,
        m: binding.method,
        t: binding.toolName,
        a: binding.argumentsDigest,
        q: inputRequests,
        exp: now() + options.ttlMs,
        n: randomBytes(12).toString('base64url'),
      };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${sign(body).toString('base64url')}`;
    },
    verify(token, binding) {
      const parts = token.split('.');
      if (parts.length !== 2 || !parts[0] || !parts[1]) return { ok: false, reason: 'malformed' };
      const [body, signature] = parts;
      const expected = sign(body);
      const presented = Buffer.from(signature, 'base64url');
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
        return { ok: false, reason: 'bad_signature' };
      }
      let payload: StatePayload;
      try {
        payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as StatePayload;
      } catch {
        return { ok: false, reason: 'malformed' };
      }
      if (
        payload.v !== 1 ||
        typeof payload.exp !== 'number' ||
        typeof payload.q !== 'object' ||
        payload.q === null ||
        typeof payload.n !== 'string'
      ) {
        return { ok: false, reason: 'malformed' };
      }
      if (payload.exp <= now()) return { ok: false, reason: 'expired' };
      const matches =
        payload.ten === binding.tenant &&
        payload.sub === binding.principal &&
        payload.m === binding.method &&
        payload.t === binding.toolName &&
        payload.a === binding.argumentsDigest;
      if (!matches) return { ok: false, reason: 'mismatch' };
      return { ok: true, inputRequests: payload.q };
    },
  };
}
