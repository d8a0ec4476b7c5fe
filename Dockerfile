# syntax=docker/dockerfile:1
# One image for every role: `gateway` (default), `worker` or `migrate` as the command.
# Checked in CI by tooling/deploy-checks/test/dockerfile.test.ts (hadolint is not in Debian).

# Node 24, the active LTS (docs/adr/0014); the code runs on 22 too (`engines.node`, tested in CI).
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: full install, compile every runtime package ---------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
RUN npm install -g pnpm@10.34.9 --no-audit --no-fund --loglevel=error
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json ./
COPY packages/tasks/package.json packages/tasks/
COPY packages/protocol/package.json packages/protocol/
COPY packages/tracing/package.json packages/tracing/
COPY packages/store/package.json packages/store/
COPY packages/queue/package.json packages/queue/
COPY packages/tool-sdk/package.json packages/tool-sdk/
COPY packages/tools/package.json packages/tools/
COPY apps/gateway/package.json apps/gateway/
COPY apps/worker/package.json apps/worker/
# pnpm applies these while it installs (the root package.json's pnpm.patchedDependencies).
COPY patches patches
RUN pnpm install --frozen-lockfile --filter @mcp-tasks/gateway... --filter @mcp-tasks/worker...
COPY packages/tasks packages/tasks
COPY packages/protocol packages/protocol
COPY packages/tracing packages/tracing
COPY packages/store packages/store
COPY packages/queue packages/queue
COPY packages/tool-sdk packages/tool-sdk
COPY packages/tools packages/tools
COPY apps/gateway apps/gateway
COPY apps/worker apps/worker
RUN pnpm --filter @mcp-tasks/gateway... --filter @mcp-tasks/worker... build

# --- prod-deps: the same workspace, production dependencies only (pnpm's pruning) -------------
FROM build AS prod-deps
RUN rm -rf node_modules packages/*/node_modules apps/*/node_modules \
  && pnpm install --frozen-lockfile --prod --filter @mcp-tasks/gateway... --filter @mcp-tasks/worker...

# --- runtime: Node 24 slim, tini as PID 1, non-root ------------------------------------------
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# Node 24's V8 sizes the young generation about twice as large as Node 22's: fewer, longer
# scavenges and +40–100 MB per process at 100 tasks/s. 16 MB keeps Node 22's footprint and
# pauses; the CPU Node 24 saves is its JIT's, not this (docs/adr/0014). Set NODE_OPTIONS to change.
ENV NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app
COPY --from=prod-deps --chown=node:node /app/node_modules node_modules
COPY --from=prod-deps --chown=node:node /app/package.json package.json
COPY --from=prod-deps --chown=node:node /app/packages packages
COPY --from=prod-deps --chown=node:node /app/apps apps
COPY --chown=node:node infra/docker/entrypoint.sh infra/docker/healthcheck.mjs infra/docker/
USER node
EXPOSE 8080 9464
# Gateway answers /healthz on PORT, a worker on METRICS_PORT; migrate exits before the first check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs"]
# tini forwards SIGTERM to Node (which is not PID 1) and reaps zombies.
ENTRYPOINT ["/usr/bin/tini", "--", "infra/docker/entrypoint.sh"]
CMD ["gateway"]
