import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@mcp-tasks/source'] },
  ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
  test: { name: 'loadtest', isolate: false, testTimeout: 30_000, hookTimeout: 60_000 },
});
