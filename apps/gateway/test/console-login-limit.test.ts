import { describe, expect, it } from 'vitest';
import { parseConsoleTokens } from '../src/console/operators.js';
import { useGatewayUnderTest } from './support/harness.js';

// Issue 27 item 1 (login): failed console logins are limited per client address and per token
// prefix; over the limit the login answers 429 with Retry-After, and does not even check the
// token (a right one included) until the window ends.

const TOKEN = 'limit-ops-token-0123456789';
const { operators } = parseConsoleTokens(`${TOKEN}:*`);
const { gw } = useGatewayUnderTest('gateway_console_login_limit', () => ({
  console: { operators, loginLimits: { maxFailures: 3, windowMs: 60_000 } },
}));

async function login(token: string): Promise<Response> {
  return gw.app.request('/console/login', { method: 'POST', body: new URLSearchParams({ token }) });
}

describe('console login rate limit', () => {
  it('answers 429 with Retry-After after the failures allowed, and lets nobody in meanwhile', async () => {
    expect((await login(TOKEN)).status).toBe(303); // successes do not count
    for (let i = 0; i < 3; i++)
      expect((await login(`wrong-guess-${i}-0000000000`)).status).toBe(401);
    const limited = await login(`wrong-guess-3-0000000000`);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await limited.text()).toContain(
      `Too many failed logins from this address or with this token: try again in ${retryAfter} s.`,
    );
    const right = await login(TOKEN);
    expect(right.status).toBe(429);
    expect(right.headers.get('set-cookie')).toBeNull();
  });
});
