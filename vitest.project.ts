import { defineProject, type UserWorkspaceConfig } from 'vitest/config';

/**
 * One workspace project of the root run (vitest.config.ts), testing its TypeScript sources (the
 * `@mcp-tasks/source` condition) with the module cache kept across its files (`isolate: false`).
 * Timeouts are for files that start real processes; projects that start whole stacks raise them.
 * The examples keep configs of their own: each is a template a user copies alone.
 */
export function sourceProject(
  name: string,
  timeouts: { testTimeout: number; hookTimeout: number } = {
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
): UserWorkspaceConfig {
  return defineProject({
    resolve: { conditions: ['@mcp-tasks/source'] },
    ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
    test: { name, isolate: false, ...timeouts },
  });
}
