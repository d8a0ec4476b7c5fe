import { sourceProject } from '../../vitest.project.js';

export default sourceProject('fuzz', { testTimeout: 180_000, hookTimeout: 180_000 });
