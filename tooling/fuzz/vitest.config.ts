import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@mcp-tasks/source'] },
  ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
  test: { name: 'fuzz', isolate: false, testTimeout: 180_000, hookTimeout: 180_000 },
});
