// HEALTHCHECK for every role: healthy when the gateway's /healthz (PORT) or the worker's
// (METRICS_PORT) answers 200. Exit 0 healthy, 1 not.
/* global fetch, AbortSignal */
const ports = [process.env.PORT || '8080', process.env.METRICS_PORT || '9464'];
for (const port of ports) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
      signal: AbortSignal.timeout(2000),
    });
    if (response.ok) process.exit(0);
  } catch {
    // not this role's port
  }
}
process.exit(1);
