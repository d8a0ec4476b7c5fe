import { defineConfig } from 'vitest/config';

// The root run is the README's test command: every package and app as one vitest project each.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*'],
  },
});
