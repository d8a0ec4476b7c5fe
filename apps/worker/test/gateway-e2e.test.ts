import { DIRECT_TOPOLOGY, describeEndToEnd } from './support/end-to-end-cases.js';

describeEndToEnd(DIRECT_TOPOLOGY);
