import { sourceProject } from '../../vitest.project.js';

export default sourceProject('tool-sdk');
