import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The proxy config every deployment shares; compose mounts it unchanged. */
export const NGINX_TEMPLATE = 'infra/nginx/nginx.conf';

const UPSTREAM_BLOCK = /(# gateways:begin\n)[\s\S]*?(\n\s*# gateways:end)/;
const LISTEN = /^(\s*)listen 8080;$/m;
// Node's stdio pipes are sockets, which nginx cannot open as /dev/stdout (ENXIO).
const ACCESS_LOG = /^(\s*)access_log \/dev\/stdout;$/m;

/**
 * infra/nginx/nginx.conf for local processes: the `listen` port, the upstream servers and the
 * access log file change; every other line (buffering, timeouts, retries) stays as deployed.
 */
export function renderNginxConfig(
  template: string,
  options: { listenPort: number; gateways: { host: string; port: number }[]; accessLog: string },
): string {
  if (!UPSTREAM_BLOCK.test(template) || !LISTEN.test(template) || !ACCESS_LOG.test(template)) {
    throw new Error(
      `${NGINX_TEMPLATE} lost its "gateways:begin/end" markers, "listen 8080;" or "access_log /dev/stdout;"`,
    );
  }
  const indent = /\n(\s*)# gateways:begin/.exec(template)?.[1] ?? '';
  const servers = options.gateways
    .map((g) => `${indent}server ${g.host}:${g.port} max_fails=1 fail_timeout=2s;`)
    .join('\n');
  return template
    .replace(UPSTREAM_BLOCK, `$1${servers}$2`)
    .replace(LISTEN, `$1listen 127.0.0.1:${options.listenPort};`)
    .replace(ACCESS_LOG, `$1access_log ${options.accessLog};`);
}

export async function readNginxTemplate(repoRoot: string): Promise<string> {
  return readFile(join(repoRoot, NGINX_TEMPLATE), 'utf8');
}
