import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@mcp-tasks/source'] },
  ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
  test: { name: 'stack', isolate: false, testTimeout: 120_000, hookTimeout: 180_000 },
});
