import { sourceProject } from '../../vitest.project.js';

export default sourceProject('stack', { testTimeout: 120_000, hookTimeout: 180_000 });
