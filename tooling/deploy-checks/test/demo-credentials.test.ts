import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_CONSOLE_TOKENS, DEMO_MCP_TOKENS, DEMO_REQUEST_STATE_SECRET } from '@mcp-tasks/stack';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderOverlay } from '../src/manifests.js';
import { repoRoot } from '../src/repo.js';

// One set of demo credentials everywhere a first run happens: pnpm stack, compose, the dev overlay.
describe('demo credentials', () => {
  it('are the same in pnpm stack, docker-compose.yml, .env.example and k8s/overlays/dev', () => {
    expect(DEMO_MCP_TOKENS).toBe('demo-token-alice:acme:alice,demo-token-mallory:globex:mallory');
    const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), {
      merge: true,
    }) as { services: { gateway: { environment: Record<string, string> } } };
    expect(compose.services.gateway.environment.MCP_TOKENS).toBe(DEMO_MCP_TOKENS);
    expect(compose.services.gateway.environment.MCP_CONSOLE_TOKENS).toBe(DEMO_CONSOLE_TOKENS);
    expect(compose.services.gateway.environment.REQUEST_STATE_SECRET).toBe(
      DEMO_REQUEST_STATE_SECRET,
    );
    const example = readFileSync(join(repoRoot, '.env.example'), 'utf8');
    expect(example).toContain(`\nMCP_TOKENS=${DEMO_MCP_TOKENS}\n`);
    expect(example).toContain(`\nMCP_CONSOLE_TOKENS=${DEMO_CONSOLE_TOKENS}\n`);
    expect(example).toContain(`\nREQUEST_STATE_SECRET=${DEMO_REQUEST_STATE_SECRET}\n`);
    const secret = renderOverlay('dev').find((m) => m.kind === 'Secret') as unknown as {
      data: Record<string, string>;
    };
    const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString();
    expect(decode(secret.data.MCP_TOKENS)).toBe(DEMO_MCP_TOKENS);
    expect(decode(secret.data.REQUEST_STATE_SECRET)).toBe(DEMO_REQUEST_STATE_SECRET);
    expect(decode(secret.data.MCP_CONSOLE_TOKENS)).toBe(DEMO_CONSOLE_TOKENS);
  });

  it.each(['prod', 'oauth'] as const)('are never shipped to %s', (overlay) => {
    const rendered = JSON.stringify(renderOverlay(overlay));
    expect(rendered).not.toContain('demo-');
  });
});
