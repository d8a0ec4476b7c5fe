import { defineProject } from 'vitest/config';

// `pnpm test:browser`: the console in a real Chromium against real gateway and worker processes.
// Apart from `pnpm test` (its files end in .browser.ts, which the default project never picks up).
export default defineProject({
  root: import.meta.dirname,
  resolve: { conditions: ['@mcp-tasks/source'] },
  ssr: { resolve: { conditions: ['@mcp-tasks/source'] } },
  test: {
    name: 'gateway-browser',
    include: ['browser/**/*.browser.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
