/**
 * What batched polls give when the polls name different tasks. `pnpm bench` polls one task from
 * every connection, so a batch of polls reads one row; here CONNECTIONS connections poll TASKS
 * tasks in turn (each request the next task), against one gateway from its build, for DURATION_S,
 * after the same with one task. Prints req/s and the gateway's CPU per request for both.
 *
 *   TASKS=256 CONNECTIONS=32 DURATION_S=10 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/poll-spread-probe.ts
 */
import autocannon from 'autocannon';
import { startProbeStack } from './probe-stack.js';
import { processCpuMs } from './cpu.js';
import {
  createTaskRequest,
  getTaskRequest,
  sendMcp,
  type HttpRequestSpec,
} from './mcp-requests.js';

const taskCount = Number(process.env.TASKS ?? 256);
const connections = Number(process.env.CONNECTIONS ?? 32);
const seconds = Number(process.env.DURATION_S ?? 10);

// No worker: the tasks stay `working`, so every poll reads the same kind of row.
const { stack, close } = await startProbeStack('spread', 0);
const gateway = stack.gateways[0]!;
const gatewayPid = gateway.process.child.pid!;

try {
  const polls: HttpRequestSpec[] = [];
  for (let i = 0; i < taskCount; i += 1) {
    const created = await sendMcp(gateway.url, createTaskRequest());
    polls.push(getTaskRequest(created.taskId as string));
  }

  const run = async (specs: HttpRequestSpec[]) => {
    let next = 0;
    const cpuBefore = processCpuMs(gatewayPid);
    const result = await autocannon({
      url: `${gateway.url}/mcp`,
      method: 'POST',
      connections,
      duration: seconds,
      requests: [
        {
          setupRequest: (request) => {
            const spec = specs[next++ % specs.length]!;
            return { ...request, headers: spec.headers, body: spec.body };
          },
        },
      ],
    });
    const cpuUs = (processCpuMs(gatewayPid) - cpuBefore) * 1_000;
    const failures = result.non2xx + result.errors;
    return `${Math.round(result.requests.average)} req/s, ${Math.round(cpuUs / result.requests.total)} µs CPU/request, ${failures} failures`;
  };

  await run([polls[0]!]); // warm-up
  console.log(`${connections} connections, ${seconds} s each:`);
  console.log(`  one task:        ${await run([polls[0]!])}`);
  console.log(`  ${taskCount} tasks in turn: ${await run(polls)}`);
} finally {
  await close();
}
