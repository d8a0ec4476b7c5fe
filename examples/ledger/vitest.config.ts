import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@mcp-tasks/source'] },
  ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
  test: { name: 'example-ledger', isolate: false, testTimeout: 60_000, hookTimeout: 90_000 },
});
