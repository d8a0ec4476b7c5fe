import { fileURLToPath } from 'node:url';

/** The repository root, from this file's place in tooling/deploy-checks/src. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
