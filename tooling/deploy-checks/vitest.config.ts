import { sourceProject } from '../../vitest.project.js';

export default sourceProject('deploy-checks', { testTimeout: 60_000, hookTimeout: 60_000 });
