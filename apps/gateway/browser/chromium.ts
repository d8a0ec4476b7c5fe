import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's chromium-headless-shell (apt-get install chromium-headless-shell), driven through
 * playwright-core: Playwright's own browser download cannot reach its host here. CHROMIUM_PATH
 * overrides the binary. In CI (CI set) a missing browser fails the suite; locally the suite is
 * skipped with the reason printed.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell';

export function chromiumMissingReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  const reason = `no Chromium at ${CHROMIUM_PATH}: apt-get install -y --no-install-recommends chromium-headless-shell (or set CHROMIUM_PATH)`;
  if (process.env.CI !== undefined) throw new Error(`browser tests in CI: ${reason}`);
  return reason;
}

export async function launchChromium(): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
