// The KEDA trigger's count must stay cheap as the table grows: it runs every pollingInterval
// against the primary. This runs the exact query from the rendered ScaledObject on a migrated
// database with rows and requires the plan to use the partial index tasks_working_by_enqueue.
import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { renderOverlay } from '../src/manifests.js';
import { repoRoot } from '../src/repo.js';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

const scaledObject = renderOverlay('prod').find((m) => m.kind === 'ScaledObject') as unknown as {
  spec: { triggers: { metadata: { query: string } }[] };
};
const query = scaledObject.spec.triggers[0]?.metadata.query ?? '';

describe('the KEDA postgresql trigger query', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('keda');
    execFileSync(process.execPath, ['packages/store/dist/cli/migrate.js'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: db.connectionString },
    });
    client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    // 20,000 finished tasks and 150 runnable ones: the shape of a table that has been running.
    await client.query(`
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, result)
      SELECT 'done_' || n, 'acme', 'alice', 'tools/call', 'generate_report', '{}',
             'completed', '{"content": []}'
      FROM generate_series(1, 20000) AS n`);
    await client.query(`
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, enqueued_at)
      SELECT 'run_' || n, 'acme', 'alice', 'tools/call', 'generate_report', '{}', 'working', now()
      FROM generate_series(1, 150) AS n`);
    await client.query('VACUUM ANALYZE tasks');
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('counts runnable tasks', async () => {
    expect(query).toBe("SELECT count(*) FROM tasks WHERE status = 'working'");
    const { rows } = await client.query<{ count: string }>(query);
    expect(rows).toEqual([{ count: '150' }]);
  });

  it('is answered from the partial index tasks_working_by_enqueue, never a table scan', async () => {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) ${query}`,
    );
    const plan = nodes(rows[0]?.['QUERY PLAN'][0].Plan as PlanNode);
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    expect(plan.map((n) => n['Index Name']).filter(Boolean)).toEqual(['tasks_working_by_enqueue']);
    const text = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${query}`,
    );
    // Printed for docs/deployment.md, which quotes it.
    console.log(text.rows.map((r) => r['QUERY PLAN']).join('\n'));
  });
});
