import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@mcp-tasks/testing';
import { describe, expect, it } from 'vitest';
import { readNginxTemplate, renderNginxConfig } from '../src/index.js';

const options = {
  listenPort: 18080,
  gateways: [
    { host: '127.0.0.1', port: 18101 },
    { host: '127.0.0.1', port: 18102 },
  ],
  accessLog: '/tmp/access.log',
};

describe('infra/nginx/nginx.conf', () => {
  it('rendered for local ports, passes `nginx -t`', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nginx-t-'));
    try {
      const config = renderNginxConfig(await readNginxTemplate(repoRoot), {
        ...options,
        accessLog: join(dir, 'access.log'),
      });
      writeFileSync(join(dir, 'nginx.conf'), config);
      const result = spawnSync(
        'nginx',
        ['-t', '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr'],
        { encoding: 'utf8' },
      );
      expect(result.stderr).toMatch(/syntax is ok/);
      expect(result.stderr).toMatch(/test is successful/);
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('changes only the listen port, the upstream servers and the access log', async () => {
    const template = await readNginxTemplate(repoRoot);
    const rendered = renderNginxConfig(template, options).split('\n');
    const original = template.split('\n');
    const removed = original.filter((line) => !rendered.includes(line)).map((l) => l.trim());
    const added = rendered.filter((line) => !original.includes(line)).map((l) => l.trim());
    expect(removed).toEqual([
      'access_log /dev/stdout;',
      'server gateway:8080 max_fails=1 fail_timeout=2s;',
      'listen 8080;',
    ]);
    expect(added).toEqual([
      'access_log /tmp/access.log;',
      'server 127.0.0.1:18101 max_fails=1 fail_timeout=2s;',
      'server 127.0.0.1:18102 max_fails=1 fail_timeout=2s;',
      'listen 127.0.0.1:18080;',
    ]);
  });

  it('keeps SSE unbuffered, long reads for listen streams and no stickiness', async () => {
    const template = await readNginxTemplate(repoRoot);
    for (const directive of [
      'proxy_buffering off;',
      'proxy_request_buffering off;',
      'proxy_read_timeout 1h;',
      'proxy_http_version 1.1;',
      'location = /healthz {',
    ]) {
      expect(template).toContain(directive);
    }
    expect(template).not.toMatch(/\b(ip_hash|hash|sticky|least_conn)\b/);
  });

  it('refuses a template that lost its markers', () => {
    expect(() => renderNginxConfig('events {}\n', options)).toThrow(
      'infra/nginx/nginx.conf lost its "gateways:begin/end" markers, "listen 8080;" or "access_log /dev/stdout;"',
    );
  });
});
