import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@mcp-tasks/source'] },
  ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
  test: { name: 'deploy-checks', isolate: false, testTimeout: 60_000, hookTimeout: 60_000 },
});
